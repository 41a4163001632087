"""The hub's processes found and ended (tools/hub/processes.py) on processes of this test's
own: a live one is found by its user, a zombie is not; ``end`` ends one that ignores
SIGTERM, and says when there was nothing to end."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from tools.hub import processes

IGNORES_TERM = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "print('ready', flush=True); time.sleep(60)")


def test_the_live_processes_of_a_user_are_found_and_a_zombie_is_not():
    live = subprocess.Popen(["sleep", "60"])
    dead = subprocess.Popen(["true"])
    try:
        deadline = time.monotonic() + 30
        while psutil.Process(dead.pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline, "the child never ended"
            time.sleep(0.05)
        found = processes.processes_of({os.getuid()})
        assert live.pid in found and os.getpid() in found
        assert dead.pid not in found  # ended, not yet reaped
        assert live.pid not in processes.processes_of({os.getuid() + 1})
        assert processes.processes_of(set()) == []
    finally:
        live.kill()
        live.wait()
        dead.wait()


def test_end_kills_what_ignores_sigterm_after_its_grace_time():
    stubborn = subprocess.Popen([sys.executable, "-c", IGNORES_TERM], stdout=subprocess.PIPE,
                                text=True)
    try:
        assert stubborn.stdout.readline() == "ready\n"
        assert processes.end(stubborn.pid, grace=0.5)
        assert not psutil.pid_exists(stubborn.pid)  # killed and reaped
        assert stubborn.wait(timeout=5) is not None
    finally:
        if stubborn.poll() is None:
            stubborn.kill()
            stubborn.wait()
        stubborn.stdout.close()
    assert processes.end(stubborn.pid) is False  # nothing left to signal
