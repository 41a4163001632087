"""The assignments of the course: where they live, how the release is made, what stays secret.

solutions/session-N/*.ipynb   instructor notebooks, nbgrader's "source": the one source
solutions/session-N/answer_key.py   their reference code (answer keys), never released
exercises/session-N/*.ipynb   student notebooks, nbgrader's "release", generated (committed)
book/session-N.md             the book's page of each session, rendered from the release

python -m tools.release                regenerate exercises/, the session pages and start.md (make assignments)
python -m tools.release --check        only say whether exercises/ and the pages are up to date

Where the assignments live (``ROOT``, ``SOURCE``, ``RELEASE``, ``ASSIGNMENT``,
``assignments``, ``notebooks``) is defined in ``tools.release.layout`` and is part of this module's
surface too (``course.notebooks(...)``); the session pages are ``tools.release.session_pages``,
which this module's command regenerates. The dependencies run one way: assignments ->
session_pages -> layout.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from tools.common.nbgrader_cli import (  # noqa: F401 - part of this module's surface
    nbgrader_command, run_nbgrader, skip_slow_imports, tool_env,
)
from tools.release import schedule, session_pages, start_page
from tools.release.layout import (  # noqa: F401 - ASSIGNMENT and notebooks: the surface
    ASSIGNMENT, REFERENCE, RELEASE, ROOT, SOURCE, assignments, notebooks,
)


# Markers of what nbgrader removes from the release; none may survive in exercises/.
MARKERS = (
    "BEGIN SOLUTION",
    "END SOLUTION",
    "BEGIN HIDDEN TESTS",
    "END HIDDEN TESTS",
    "BEGIN MARK SCHEME",
    "END MARK SCHEME",
)
_BLOCKS = (
    ("BEGIN SOLUTION", "END SOLUTION"),
    ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"),
    ("BEGIN MARK SCHEME", "END MARK SCHEME"),
)


def generate(
    root: Path = ROOT, release_dir: Path | None = None, which: list[str] | None = None
) -> Path:
    """Run ``nbgrader generate_assignment`` (without a gradebook) for the assignments.

    Writes to ``release_dir`` (default: the course's ``exercises/``) and returns it.
    Every assignment of ``solutions/`` unless ``which`` lists some.
    """
    root = Path(root)
    release_dir = Path(release_dir) if release_dir else root / RELEASE
    every = assignments(root)
    names = which or every
    if not names:
        raise SystemExit(f"no assignment under {root / SOURCE}")
    # one nbgrader process for all (its assignment id is a glob), else one per assignment
    patterns = ["session-*"] if sorted(names) == sorted(every) and len(names) > 1 else names
    for pattern in patterns:
        result = run_nbgrader(
            [
                "generate_assignment",
                pattern,
                "--force",
                "--no-db",
                f"--CourseDirectory.release_directory={release_dir}",
            ],
            cwd=root,
        )
        if result.returncode != 0:
            raise SystemExit(
                f"nbgrader generate_assignment failed:\n{result.stdout}{result.stderr}"
            )
    return release_dir


def normalised(path: Path) -> dict:
    """A notebook as data, without what may change from one generation to the next."""
    nb = json.loads(Path(path).read_text())
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
    return nb


def release_differences(root: Path = ROOT) -> list[str]:
    """What differs between ``exercises/`` and a fresh generation from ``solutions/``.

    The generation runs in a temporary copy of the course (configuration and sources
    only), so that nothing of the course directory is used or touched.
    """
    root = Path(root)
    problems = []
    with tempfile.TemporaryDirectory(prefix="memcourse-release-") as tmp:
        course = Path(tmp)
        shutil.copy(root / "nbgrader_config.py", course / "nbgrader_config.py")
        if (root / schedule.FILE).exists():  # the due dates of the headers
            shutil.copy(root / schedule.FILE, course / schedule.FILE)
        shutil.copytree(root / SOURCE, course / SOURCE)
        fresh = generate(course)
        expected = {p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file()}
        actual = {
            p.relative_to(root / RELEASE).as_posix()
            for p in (root / RELEASE).rglob("*")
            if p.is_file() and ".ipynb_checkpoints" not in p.parts
        }
        for name in sorted(expected - actual):
            problems.append(f"missing from exercises/: {name}")
        for name in sorted(actual - expected):
            problems.append(f"not generated from solutions/: exercises/{name}")
        for name in sorted(expected & actual):
            if name.endswith(".ipynb"):
                same = normalised(fresh / name) == normalised(root / RELEASE / name)
            else:
                same = (fresh / name).read_bytes() == (root / RELEASE / name).read_bytes()
            if not same:
                problems.append(f"differs from generation: exercises/{name}")
    return problems


def _secret_and_public_lines(source: dict) -> tuple[set[str], set[str]]:
    """Lines inside the solution / hidden-test / mark-scheme blocks, and lines outside them."""
    secret, public = set(), set()
    for cell in source.get("cells", []):
        text = "".join(cell.get("source", ""))
        depth = None
        for line in text.splitlines():
            stripped = line.strip()
            opened = next((end for begin, end in _BLOCKS if begin in stripped), None)
            if opened:
                depth = opened
                continue
            if depth and depth in stripped:
                depth = None
                continue
            (secret if depth else public).add(stripped)
    return secret, public


def _meaningful(line: str) -> bool:
    """A line long and specific enough that finding it in the release means a leak."""
    return (
        len(line) >= 12 and not line.startswith("#") and re.search(r"[A-Za-z0-9]", line) is not None
    )


def reference_leaks(root: Path = ROOT) -> list[str]:
    """The solutions' reference code (``answer_key.py``) found under exercises/, by name or
    by content."""
    root = Path(root)
    keys = {p.read_bytes() for p in (root / SOURCE).glob(f"session-*/{REFERENCE}")}
    found = []
    for path in sorted((root / RELEASE).rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        if path.name == REFERENCE or (path.suffix == ".py" and path.read_bytes() in keys):
            found.append(f"{path.relative_to(root).as_posix()}: the solutions' reference code")
    return found


def leaks(root: Path = ROOT) -> list[str]:
    """Solution lines, hidden tests or their markers found in the notebooks under exercises/,
    and the solutions' reference code (``reference_leaks``)."""
    root = Path(root)
    secret, public = set(), set()
    for source in sorted((root / SOURCE).rglob("*.ipynb")):
        s, p = _secret_and_public_lines(json.loads(source.read_text()))
        secret |= s
        public |= p
    secret = {line for line in secret - public if _meaningful(line)}
    found = []
    for release in sorted((root / RELEASE).rglob("*.ipynb")):
        nb = json.loads(release.read_text())
        name = release.relative_to(root).as_posix()
        for index, cell in enumerate(nb.get("cells", [])):
            text = "".join(cell.get("source", ""))
            for marker in MARKERS:
                if marker in text:
                    found.append(f"{name}, cell {index}: marker '{marker}'")
            for line in text.splitlines():
                if line.strip() in secret:
                    found.append(f"{name}, cell {index}: solution or hidden line {line.strip()!r}")
            for output in cell.get("outputs", []):
                found.append(f"{name}, cell {index}: an output ({output.get('output_type')})")
    return found + reference_leaks(root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.release",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; fail if exercises/ or the pages are out of date",
    )
    args = parser.parse_args(argv)
    if args.check:
        problems = (release_differences(ROOT) + leaks(ROOT) + session_pages.differences(ROOT)
                    + start_page.differences(ROOT))
        for problem in problems:
            print(problem)
        print("up to date" if not problems else f"{len(problems)} problem(s)")
        return 1 if problems else 0
    names = assignments(ROOT)
    generate(ROOT)
    for stale in (ROOT / RELEASE).glob("session-*"):
        if stale.name not in names:
            shutil.rmtree(stale)
    written = session_pages.write_all(ROOT)
    start = start_page.write(ROOT)
    print(f"exercises/: {', '.join(names)} regenerated from solutions/")
    print(f"book/: {', '.join(p.name for p in written)}")
    print(f"{start.name}: the students' start page (sessions, chapters, assignments, due dates)")
    problems = leaks(ROOT)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
