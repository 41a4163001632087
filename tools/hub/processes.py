"""The hub's processes, and its users': started, waited on, found, and all ended when the
hub stops.

The hub's own processes (the proxy, JupyterHub) are started in the background in a
session of their own (``background``), their PIDs in the state folder; the start waits
for them to listen (``wait_listening``) and the stop ends them, and the single-user
servers, by PID (``end``: SIGTERM, then SIGKILL after a grace time).

A student's terminal or kernel can leave a process running that is no child of anything
the hub knows (``setsid nohup sleep``, a double fork, a loop that forks).
``processes_of`` finds the live processes of some users (psutil); ``end_all`` ends
every one of them, by ``kill(-1)`` run as each user (one call that signals all of that
user's processes, so a forking process cannot outrun it), SIGTERM first, then SIGKILL.
Used by ``tools.hub.local``'s ``stop`` (``make hub-stop``) and the hub's test.

``remove_files_of`` then removes what the users left in the folders every user may write
to (``/tmp``, ``/var/tmp``, ``/dev/shm``, ``/run/lock``): each entry they own, whole,
found without following a link or crossing into another file system.
"""

from __future__ import annotations

import os
import pwd
import signal
import stat
import subprocess
import time
from pathlib import Path

import psutil

from tools.common.ports import port_free


def processes_of(uids: set[int]) -> list[int]:
    """PIDs of the live processes whose real user is one of ``uids`` (psutil; a zombie, dead
    and waiting for its parent to read its status, is not one)."""
    return [process.info["pid"] for process in psutil.process_iter(["pid", "uids", "status"])
            if process.info["uids"] is not None and process.info["uids"].real in uids
            and process.info["status"] not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)]


def end_all(users: list[str], say=print, grace: float = 5) -> list[int]:
    """Every process of these users ended, however it was started (``setsid nohup``,
    double-forked, a fork loop): ``kill(-1)`` run as each user signals all of theirs in
    one call, SIGTERM, then SIGKILL until none is left. Returns the PIDs found."""
    ids = {}
    for user in users:
        try:
            entry = pwd.getpwnam(user)
        except KeyError:
            continue
        if entry.pw_uid != 0:
            ids[entry.pw_uid] = entry.pw_gid
    ended = processes_of(set(ids))
    deadline = time.monotonic() + grace
    for sig in ["TERM"] + ["KILL"] * 20:
        for uid, gid in ids.items():  # signals every process of that user but the sender
            subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups",
                            "kill", f"-{sig}", "-1"], capture_output=True, check=False)
        while processes_of(set(ids)) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not processes_of(set(ids)):
            break
        deadline = time.monotonic() + 1
    left = processes_of(set(ids))
    if left:
        say(f"WARNING: processes of the hub's users still running: {left}")
    return ended


SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")


def remove_files_of(uids: set[int], folders=SHARED_FOLDERS, depth: int = 3) -> list[str]:
    """Remove every entry owned by one of ``uids`` in ``folders``: looked for down to
    ``depth`` folders of others (a world-writable folder in /tmp), on the folder's own
    file system, never through a link; an entry of theirs is removed whole (``rm -rf
    --one-file-system``: nothing under it is followed either). Returns the paths removed."""
    removed = []

    def visit(folder: str, device: int, left: int) -> None:
        try:
            names = os.listdir(folder)
        except OSError:
            return
        for name in names:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if st.st_dev != device:
                continue
            if st.st_uid in uids:
                subprocess.run(["rm", "-rf", "--one-file-system", "--", path],
                               capture_output=True, check=False)
                removed.append(path)
            elif left and stat.S_ISDIR(st.st_mode):
                visit(path, device, left - 1)

    for folder in folders:
        try:
            st = os.lstat(folder)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            visit(folder, st.st_dev, depth)
    return removed


def running_pid(path: Path) -> int | None:
    """The PID written in ``path`` if that process is alive, else None."""
    try:
        pid = int(path.read_text().strip())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def background(command: list[str], folder: Path, env: dict, log_name: str,
               pid_name: str) -> subprocess.Popen:
    """A process of the hub's started in ``folder`` (the hub's state), in a session of its
    own, its output appended to the folder's ``log_name``, its PID written to ``pid_name``
    (what the hub's stop ends it by)."""
    log = open(folder / log_name, "a")  # noqa: SIM115 (the child keeps it)
    process = subprocess.Popen(command, cwd=folder, env=env, stdout=log,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               start_new_session=True)
    log.close()
    (folder / pid_name).write_text(f"{process.pid}\n")
    return process


def wait_listening(process: subprocess.Popen, ports: list[int], log: Path,
                   deadline: float) -> None:
    """Return when something listens on each of ``ports`` of 127.0.0.1; raise, with the tail
    of ``log``, when ``process`` ends first or ``deadline`` (monotonic) passes."""
    waiting = list(ports)
    while waiting:
        if process.poll() is not None or time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:]
            state = "stopped" if process.poll() is not None else "not listening in time"
            raise RuntimeError(f"{process.args[0]} {state}:\n{tail}")
        if port_free(waiting[0]):
            time.sleep(0.2)
        else:
            waiting.pop(0)


def end(pid: int, grace: float = 15) -> bool:
    """Process ``pid`` ended: SIGTERM, then SIGKILL when it is alive after ``grace`` s (and
    reaped, if it is our child). False when there was no such process to signal."""
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return False
    if not wait_gone(pid, grace):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            return True
        wait_gone(pid, 10)
    return True


def wait_gone(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` has ended (reaped, if it is our child) within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return True
        try:  # our child: reap it
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.2)
    return False
