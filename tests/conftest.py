"""Shared fixtures: the HTML book is built once a session, for every test that reads it, and
served on 127.0.0.1 for the tests that open it in a browser. ``tests/`` mirrors the code
(``memkit/``, ``book/``, ``release/``, ``grading/``, ``lab/``, ``hub/``); ``support/`` holds
what tests and benchmarks share besides fixtures.

Each test that needs a slow thing carries its marker (``MARKS``): ``book`` (the whole book
built), ``pdf``, ``browser`` (Chromium), ``hub`` (a JupyterHub with users), ``sandbox`` (a
class graded in bubblewrap), ``cluster`` (PostgreSQL and Dask), ``slow`` (nbgrader's real
kernels over whole assignments). ``make test-fast`` runs the tests with none of them.

The suite runs on every core (pytest-xdist, ``-n auto`` in pyproject.toml), in groups that
one worker runs whole (``--dist loadgroup``): each test module is a group of its own (its
module fixtures, a graded class or a hub, are made once), except the modules that read the
built book, which share one group (one build of _build/html a session), and the modules
marked ``xdist_group("lab")``, which start the course's lab or write its configuration in
_build/lab (tools/lab/launch.py). ``pytest -n 0`` runs everything in one process.
"""

import os
import pathlib
import subprocess
import sys

import matplotlib
import pytest

matplotlib.use("Agg")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # ``import support``

ROOT = pathlib.Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
JB = pathlib.Path(sys.executable).with_name("jupyter-book")


# the groups that take longest (``pytest -n 0 --durations=0``), longest first: each starts
# as early as a worker is free (``--no-loadscope-reorder``), so that no long one starts last
LONGEST_FIRST = ["book", "lab", "test_assignments", "test_grading_sandbox", "test_pdf",
                 "test_grading_cluster", "test_lateness", "test_questions", "test_calibration",
                 "test_question_mends", "test_item_analysis", "test_figures"]


# the slow markers: by the fixture a test uses, or by its module
FIXTURE_MARKS = {"built_book": "book", "site": "book", "browser": "browser",
                 "attacked_class": "sandbox",
                 # a class graded by the grader's real kernels; every question calibrated
                 # over a sample of ids (the keys themselves: tests/release/test_questions.py)
                 "planted_class": "slow", "small_sample": "slow"}
MODULE_MARKS = {
    "test_pdf": "pdf", "test_hub": "hub", "test_hub_limits": "hub", "test_hub_one_user": "hub",
    "test_limits": "hub", "test_shares": "hub",  # cgroups and mounted file systems of their own
    "test_grading_cluster": "cluster", "test_lab_browser": "browser",
    "test_assignments": "slow", "test_lateness": "slow", "test_similarity": "slow",
    "test_course_repo": "slow", "test_lab_setup": "slow", "test_suite_groups": "slow",
}
SLOW = ("book", "pdf", "browser", "hub", "sandbox", "cluster", "slow")


def mark_slow(items) -> None:
    """Each test gets the markers of ``FIXTURE_MARKS`` and ``MODULE_MARKS`` that apply."""
    for item in items:
        found = {MODULE_MARKS.get(item.module.__name__)}
        found |= {FIXTURE_MARKS.get(name) for name in item.fixturenames}
        for name in sorted(found - {None}):
            item.add_marker(getattr(pytest.mark, name))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The group of each test (see above): "book" for every test of a module that has one
    test using ``built_book``, its own module's otherwise, unless the module names one;
    the tests of the groups of ``LONGEST_FIRST`` moved ahead, in its order.

    First of the hooks: xdist's own (on each worker) reads the groups' marks to name each
    test's group; run after it, the marks set here were never read, every test was a group
    of its own, and two workers built the PDF at once into one folder (CI, 2026-12-03)."""
    mark_slow(items)
    book = {item.module.__name__ for item in items if "built_book" in item.fixturenames}
    groups = {}
    for item in items:
        marker = item.get_closest_marker("xdist_group")
        if marker is None:
            name = item.module.__name__
            marker = pytest.mark.xdist_group("book" if name in book else name)
            item.add_marker(marker)
        groups[item.nodeid] = marker.args[0] if marker.args else marker.kwargs["name"]
    rank = {group: i for i, group in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(groups[item.nodeid], len(rank)))


@pytest.fixture(scope="session")
def built_book():
    """Build the HTML book (strict, executing every chapter) and return _build/html."""
    # MathJax is served by the book itself: fetch it from the npm registry if needed
    vendored = subprocess.run(
        [sys.executable, "-m", "tools.book.vendor_mathjax"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert vendored.returncode == 0, vendored.stdout + vendored.stderr
    # outputs cached before a change to memkit are stale: execute every chapter again
    subprocess.run([sys.executable, "-m", "tools.book.execution_cache"], cwd=ROOT, check=True)
    result = subprocess.run(
        [str(JB), "build", str(ROOT), "--builder", "html", "-W", "--keep-going"],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-6000:]
    return HTML


@pytest.fixture(scope="session")
def site(built_book):
    """The built book served on a free port of 127.0.0.1, nothing compressed (a page weighs
    what its files weigh), by the server ``make bench`` serves it with: its URL."""
    from tools.book.serve import Host

    server = Host(built_book, compress=False)
    yield server.url
    server.stop()


# module scope: Playwright's sync API holds an event loop while it runs, and the other
# browser tests (and asyncio code) of the session must not overlap with it
@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, headless (tools/common/chromium.py), for one test module."""
    from playwright.sync_api import sync_playwright

    from tools.common.chromium import CHROMIUM, launch_browser

    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: run `make system-deps` (as root) first")
    with sync_playwright() as playwright:
        chromium = launch_browser(playwright)
        yield chromium
        chromium.close()
