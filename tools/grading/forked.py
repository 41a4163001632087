"""A function run in a forked child of the grader, with a time and a memory limit.

``run_apart(work, timeout, memory_mb)`` forks, runs ``work()`` in the child (its output
sent to /dev/null, an alarm set at ``timeout`` + 1 s, its address space capped at
``memory_mb`` MB when given) and returns the child's result, pickled back through a pipe,
or a string saying why there is none. The parent waits at most ``timeout`` seconds, then
kills the child and reaps it. It runs instructor code (the solutions, the hidden tests),
never a student's: the child has every right the grader has.

Stage: none (used by the hidden tests' split and the re-check).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time


def run_apart(work, timeout: float, memory_mb: int = 0):
    """``work()`` in a forked child of this process: its result (pickled back), or a
    string saying why there is none (it did not finish within ``timeout`` seconds or its
    memory, or it raised). Its output goes nowhere."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: work, send the result, leave at once
        try:
            os.close(read)
            quiet = os.open(os.devnull, os.O_WRONLY)
            os.dup2(quiet, 1)
            os.dup2(quiet, 2)
            signal.alarm(int(timeout) + 1)
            if memory_mb:
                import resource

                limit = memory_mb * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            try:
                result = work()
            except BaseException as exc:  # noqa: BLE001 - told to the parent
                result = f"failed ({type(exc).__name__}: {str(exc)[:300]})"
            data = pickle.dumps(result)
            with os.fdopen(write, "wb") as out:
                out.write(data)
        finally:
            os._exit(0)
    os.close(write)
    chunks = []
    deadline = time.monotonic() + timeout
    with os.fdopen(read, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                break
            chunk = os.read(pipe.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    os.waitpid(pid, 0)
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 - nothing (complete) came back
        return f"did not finish within {timeout:g} s or its memory"
