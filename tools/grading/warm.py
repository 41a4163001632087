"""A warm nbgrader: a process that has nbgrader imported and forks a copy of itself per run.

Starting ``nbgrader autograde`` costs about a second of CPU before the first notebook
(importing nbgrader, Jupyter Server's handlers, nbconvert ...). A worker of the cluster
grades many batches, so it keeps one *warm* process (``serve``, started once per worker
and environment) that has done those imports; each run is a fork of it, which starts at
once. The run is what a new process would be: its own session (process group), the
address-space limit, its output to its log, the course folder as its working folder,
the environment it would have been given, nbgrader's command line. The warm process
only forks and reports: ``{"pid": ...}`` when a run starts, ``{"pid": ..., "rc": ...}``
when it ends (a negative rc: killed by that signal).

Stage: the running of nbgrader (``tools.grading.autograde``).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from tools import ROOT
from tools.grading.process_limits import kill_tree, limits
from tools.release import assignments as course



def serve() -> None:
    """The warm process: import nbgrader, then fork one run per request line on stdin."""
    course.skip_slow_imports()
    from nbgrader.apps.nbgraderapp import main  # the import each run would pay

    import tools.grading.preprocessors  # noqa: F401 - the preprocessors nbgrader loads by name

    replies = os.dup(1)
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 1)  # a stray print of an import cannot garble the replies
    for line in sys.stdin.buffer:
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the run
            os.close(replies)
            _run(job, main, quiet)
        os.write(replies, (json.dumps({"pid": pid}) + "\n").encode())
        _, status = os.waitpid(pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        os.write(replies, (json.dumps({"pid": pid, "rc": rc}) + "\n").encode())


def _run(job: dict, main, quiet: int) -> None:
    """In the forked run: become what a new nbgrader process would be, run, exit."""
    code = 1
    try:
        os.setsid()
        limits(job["memory_mb"])()
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(quiet, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.chdir(job["cwd"])
        os.environ.clear()
        os.environ.update(job["env"])
        sys.argv = ["nbgrader", *job["argv"]]
        try:
            result = main()
            code = result if isinstance(result, int) else 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except BaseException:  # noqa: BLE001 - told in the log, the exit code says failed
        import traceback

        traceback.print_exc()
    finally:
        try:  # what a new process does at its exit (the sandbox kills its spare kernel)
            atexit._run_exitfuncs()
        except BaseException:  # noqa: BLE001
            pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)


class WarmRun:
    """One nbgrader run forked from a warm process."""

    def __init__(self, warm: Warm, pid: int) -> None:
        self.warm, self.pid = warm, pid
        self.returncode: int | None = None

    def wait(self, timeout: float) -> int | None:
        """Its exit code, or None if it is still running after ``timeout`` seconds."""
        if self.returncode is None:
            reply = self.warm.reply(timeout)
            if reply is not None:
                self.returncode = reply["rc"]
        return self.returncode

    def kill(self) -> None:
        """Kill it and every process it started; wait for its end."""
        kill_tree(self.pid)
        while self.wait(30) is None:
            kill_tree(self.pid)


class Warm:
    """A warm nbgrader process for one environment, and the runs forked from it."""

    def __init__(self, cwd: Path, env: dict) -> None:
        self.env = course.tool_env(env)
        launch = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                  "from tools.grading.warm import serve; serve()")
        # (its own errors go to this process's stderr; each run's to its log)
        self.process = subprocess.Popen(
            [sys.executable, "-c", launch], cwd=cwd, env=self.env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True,
        )
        self._pending = b""
        self.active: WarmRun | None = None

    def alive(self) -> bool:
        return self.process.poll() is None

    def start(self, argv: list[str], cwd: Path, log: Path, memory_mb: int) -> WarmRun:
        """Fork a run of ``nbgrader <argv>`` in ``cwd``, its output to ``log``."""
        if self.active is not None and self.active.returncode is None:
            self.active.kill()  # one run at a time: one left behind ends now
        job = {"argv": argv, "cwd": str(cwd), "log": str(log), "memory_mb": memory_mb,
               "env": self.env}
        self.process.stdin.write((json.dumps(job) + "\n").encode())
        self.process.stdin.flush()
        reply = self.reply(60)
        if reply is None:
            raise RuntimeError("the warm nbgrader process did not start a run in 60 s")
        self.active = WarmRun(self, reply["pid"])
        return self.active

    def reply(self, timeout: float) -> dict | None:
        """The next reply, or None when none came in ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 4096)
                if not chunk:
                    raise RuntimeError(
                        f"the warm nbgrader process ended (exit code {self.process.wait()})")
                self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        if self.alive():
            self.process.stdin.close()  # it ends at the end of its input
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


_WARM: dict[tuple, Warm] = {}


def warm_for(cwd: Path, env: dict) -> Warm:
    """This process's warm nbgrader for ``cwd`` and ``env`` (started on first use)."""
    key = (str(cwd), tuple(sorted(env.items())))
    warm = _WARM.get(key)
    if warm is None or not warm.alive():
        warm = _WARM[key] = Warm(cwd, env)
    return warm


@atexit.register
def _close_all() -> None:
    for warm in _WARM.values():
        warm.close()
    _WARM.clear()
