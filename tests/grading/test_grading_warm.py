"""The warm nbgrader (tools.grading.warm): each run is what a new nbgrader process would be.

nbgrader reads ``nbgrader_config.py`` from its working folder as Python, so a config
file written here reports from inside the run what the run sees, or hangs it.
"""

import json
import os
import signal
import time

import pytest

from tools.grading import warm

REPORT = """
import json, os, resource, sys
json.dump({"pid": os.getpid(), "sid": os.getsid(0), "cwd": os.getcwd(),
           "env": os.environ.get("MEMCOURSE_WARM_TEST"),
           "memory": resource.getrlimit(resource.RLIMIT_AS)[0],
           "argv": sys.argv}, open("seen.json", "w"))
"""

HANG = """
import os, subprocess, sys, time
# a grandchild in a session of its own that ignores SIGTERM, as a kernel could
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"],
    start_new_session=True)
open("grandchild.pid", "w").write(str(child.pid))
time.sleep(300)
"""


@pytest.fixture()
def course(tmp_path):
    folder = tmp_path / "course"
    folder.mkdir()
    return folder


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie is dead
        return fh.read().split(")")[-1].split()[0] != "Z"


def test_a_run_is_a_new_nbgrader_process_with_its_session_limit_env_and_log(course):
    (course / "nbgrader_config.py").write_text(REPORT)
    here = warm.Warm(course, {"MEMCOURSE_WARM_TEST": "given"})
    try:
        runs = []
        for _ in range(2):  # the same warm process serves one run after another
            log = course / f"run-{len(runs)}.log"
            run = here.start(["db", "student", "list"], course, log, memory_mb=3000)
            assert run.wait(timeout=60) == 0
            runs.append((run, json.loads((course / "seen.json").read_text())))
            assert log.read_text().strip(), "nbgrader's output goes to the run's log"
        for run, seen in runs:
            assert seen["pid"] == run.pid and seen["sid"] == run.pid  # its own session
            assert seen["cwd"] == str(course)
            assert seen["env"] == "given"
            assert seen["memory"] == 3000 * 1024 * 1024
            assert seen["argv"][1:] == ["db", "student", "list"]
        assert runs[0][0].pid != runs[1][0].pid
        assert here.alive()
    finally:
        here.close()
    assert not here.alive()


def test_a_run_over_its_time_is_killed_with_everything_it_started(course):
    (course / "nbgrader_config.py").write_text(HANG)
    here = warm.Warm(course, {})
    try:
        run = here.start(["db", "student", "list"], course, course / "run.log", memory_mb=0)
        deadline = time.monotonic() + 60
        while not (course / "grandchild.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        grandchild = int((course / "grandchild.pid").read_text())
        assert run.wait(timeout=1) is None  # still running
        run.kill()
        assert run.returncode == -signal.SIGKILL
        gone = time.monotonic() + 10  # a killed process takes a moment to go
        while (alive(run.pid) or alive(grandchild)) and time.monotonic() < gone:
            time.sleep(0.05)
        assert not alive(run.pid) and not alive(grandchild)
        # the warm process goes on serving
        (course / "nbgrader_config.py").write_text("")
        assert here.start(["db", "student", "list"], course, course / "next.log", 0).wait(60) == 0
    finally:
        here.close()


def test_a_failing_run_says_so_by_its_exit_code(course):
    (course / "nbgrader_config.py").write_text("raise SystemExit(3)\n")
    here = warm.Warm(course, {})
    try:
        run = here.start(["db", "student", "list"], course, course / "run.log", memory_mb=0)
        assert run.wait(timeout=60) not in (None, 0)
    finally:
        here.close()


def test_warm_for_keeps_one_warm_process_per_folder_and_environment(course, tmp_path):
    first = warm.warm_for(course, {"A": "1"})
    try:
        assert warm.warm_for(course, {"A": "1"}) is first
        other = warm.warm_for(course, {"A": "2"})
        assert other is not first
    finally:
        warm._close_all()
    assert not first.alive()


def test_a_dead_warm_process_is_reported_not_waited_on(course):
    here = warm.Warm(course, {})
    here.process.kill()
    here.process.wait()
    with pytest.raises((RuntimeError, BrokenPipeError)):
        here.start(["db", "student", "list"], course, course / "run.log", memory_mb=0)
