"""A hub where no student slows, fills or stops it for the others: the limits of
tools/hub/limits.py on a real hub (`make hub`'s install and start, users of its own, small
limits), each attack played in student1's own lab and a classmate's cell timed meanwhile.

In each user's JupyterLab (headless Chromium, through the hub's login page) a kernel is
started and code run in it as a cell is (JupyterLab's kernel API). student1 runs a fork
bomb (processes that fork until refused, spin, and all end by themselves after 12 s), a
memory hog (allocates until refused, holds it for 6 s), and writes past its home's size;
meanwhile student2's and the instructor's cells are timed. The times are printed (``-s``).
"""

from __future__ import annotations

import re
import statistics
import time

import psutil
import pytest

from support.hub import own_hub
from tools.common.ports import free_port
from tools.hub import limits
from tools.hub import local as course_hub
from tools.common import chromium
from support import lab_browser

pytestmark = pytest.mark.xdist_group("lab")  # starts the course's lab (conftest.py)

WAIT = 180_000  # ms: a single-user server starting on a loaded 2-core machine
LIMITS = limits.Limits(memory_mb=768, pids=160, cpus=1.0, home_mb=64)
CELL = "sum(i * i for i in range(200_000))"
BOMB = """
import os, time
end = time.time() + 12
while time.time() < end:
    try:
        os.fork()
    except OSError:
        pass
os._exit(0)
"""
HOG = """
import time
blocks = []
try:
    while True:
        blocks.append(b"\\x01" * (32 << 20))  # written: the group's memory
        time.sleep(0.05)
except MemoryError:
    time.sleep(6)  # held at the limit meanwhile
    blocks.clear()
    raise
"""
FILL = """
with open('big', 'wb') as f:
    for _ in range(128):
        f.write(b'x' * (1 << 20))
"""

# start code in the page's kernel (one per page, started the first time), or wait for it
START = """async ([key, code]) => {
  const app = window.jupyterapp;
  if (!window.__kernel)
    window.__kernel = await app.serviceManager.kernels.startNew({name: 'python3'});
  const kernel = window.__kernel;
  window.__runs = window.__runs || {};
  window.__runs[key] = (async () => {
    const t0 = performance.now();
    const future = kernel.requestExecute({code, store_history: false});
    let error = null;
    future.onIOPub = msg => {
      if (msg.header.msg_type === 'error') error = `${msg.content.ename}: ${msg.content.evalue}`;
    };
    try { await future.done; } catch (e) { error = error || `died: ${e}`; }
    return {error, seconds: (performance.now() - t0) / 1000, status: kernel.status};
  })();
  return true;
}"""
RESULT = "async (key) => await window.__runs[key]"


@pytest.fixture(scope="module")
def hub():
    with own_hub("memcourse-hublimits-", users="mch-", students=2, port=free_port(),
                 exchange_mb=32, share_mb=4, limits=LIMITS,
                 extra_env={"MEMCOURSE_HUB_EXPOSE_APP": "1"}) as hub:
        passwords = course_hub.install(hub)
        course_hub.start(hub)
        yield hub, passwords


@pytest.fixture(scope="module")
def pages(hub):
    from playwright.sync_api import sync_playwright

    hub, passwords = hub
    with sync_playwright() as playwright:
        browser = chromium.launch_browser(playwright)
        found = {}
        for user in [hub.instructor] + hub.student_names:
            page = browser.new_context().new_page()
            page.set_default_timeout(WAIT)
            page.goto(f"{hub.url}/hub/login")
            page.fill("#username_input", user)
            page.fill("#password_input", passwords[user])
            page.click("#login_submit")
            page.wait_for_url(re.compile(rf"/user/{user}/lab"), timeout=WAIT)
            page.evaluate(lab_browser.APP_READY)
            assert run(page, CELL)["error"] is None  # the page's kernel started
            found[user] = page
        yield hub, found
        browser.close()


def run(page, code: str, key: str = "cell") -> dict:
    page.evaluate(START, [key, code])
    return page.evaluate(RESULT, key)


def cell_times(page, seconds: float, until=None) -> list[float]:
    """The classmate's cell, again and again for ``seconds`` (or until ``until()``)."""
    times, end = [], time.monotonic() + seconds
    while time.monotonic() < end and not (until and until()):
        done = run(page, CELL)
        assert done["error"] is None, done
        times.append(done["seconds"])
    return times


def answers_quickly(times: list[float]) -> None:
    """Cells answered at once as a rule and within seconds at worst (the worst allows for
    other work on the machine: the test suite runs on every core)."""
    assert times and statistics.median(times) < 1 and max(times) < 10, times


def test_every_server_runs_in_its_users_cgroup(pages):
    hub, found = pages
    for user in found:
        pids = limits.members(user)
        assert pids, f"no process in the cgroup of {user}"
        commands = [process.info["cmdline"] or [] for process
                    in psutil.process_iter(["pid", "cmdline"]) if process.info["pid"] in pids]
        assert any("jupyterhub-singleuser" in part for c in commands for part in c), user


def test_a_fork_bomb_in_a_students_lab_leaves_the_classmate_answering(pages):
    hub, found = pages
    one, two = hub.student_names
    before = run(found[two], CELL)["seconds"]
    run(found[one], f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {BOMB!r}])")
    peak = 0
    for _ in range(10):  # the bomb at its limit
        time.sleep(0.2)
        peak = max(peak, limits.usage(one)["pids"])
    during = cell_times(found[two], 8)
    teacher = run(found[hub.instructor], CELL)["seconds"]
    print(f"\nfork bomb in {one}'s lab: {peak} tasks in its cgroup (limit {LIMITS.pids}); "
          f"{two}'s cell {before:.2f} s before, worst {max(during):.2f} s of {len(during)} "
          f"during; the instructor's {teacher:.2f} s")
    assert LIMITS.pids // 2 <= peak <= LIMITS.pids, peak
    answers_quickly(during + [teacher])
    time.sleep(5)  # the bomb ends by itself
    assert limits.usage(one)["pids"] < LIMITS.pids // 2


def test_a_memory_hog_gets_memory_error_in_its_own_cell_and_the_classmate_answers(pages):
    hub, found = pages
    one, two = hub.student_names
    found[one].evaluate(START, ["hog", HOG])
    time.sleep(2)
    held = limits.usage(one)["memory"] >> 20
    during = cell_times(found[two], 6)
    hog = found[one].evaluate(RESULT, "hog")
    print(f"\nmemory hog in {one}'s lab: {held} MB held (limit {LIMITS.memory_mb} MB), "
          f"its cell: {hog['error']!r}; {two}'s cell worst {max(during):.2f} s of {len(during)}")
    assert hog["error"] and hog["error"].startswith("MemoryError"), hog
    assert held <= LIMITS.memory_mb
    answers_quickly(during)


def test_writing_past_the_home_size_fails_for_that_student_only(pages):
    hub, found = pages
    one, two = hub.student_names
    full = run(found[one], FILL)
    mine = run(found[two], "open('notes.txt', 'w').write('mine')")
    print(f"\nhome filled by {one}: {full['error']!r}; {two} writes: {mine['error']!r}")
    assert full["error"] and "No space left on device" in full["error"], full
    assert mine["error"] is None, mine
    run(found[one], "import os; os.remove('big')")
