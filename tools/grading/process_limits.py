"""Running a process with limits: a wall-clock limit after which its whole process tree is
killed, an address-space limit, its own session (process group).

Stage: the running of nbgrader and of the probe use it.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from tools.release import assignments as course


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (kernels run in their own session, so not in its group)."""
    import psutil

    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def kill_tree(leader: int) -> None:
    """Kill process ``leader`` (the leader of its own session), its group and all below it."""
    for pid in [leader] + descendants(leader):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(leader, signal.SIGKILL)
    except OSError:
        pass


def limits(memory_mb: int):
    def apply():
        if memory_mb:
            import resource

            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def run_limited(
    cmd: list[str], cwd: Path, wall: float, log: Path, memory_mb: int = 0, env: dict | None = None
) -> int | None:
    """Run ``cmd`` in a new process group; its output goes to ``log``.

    Returns the exit code, or None when it ran over ``wall`` seconds (then it and
    every process it started are killed).
    """
    with open(log, "w") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=limits(memory_mb),
            env=course.tool_env(env),
        )
        try:
            return proc.wait(timeout=wall)
        except subprocess.TimeoutExpired:
            kill_tree(proc.pid)
            proc.wait()
            return None
        finally:
            for pid in descendants(proc.pid):  # nothing should be left; make sure
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
