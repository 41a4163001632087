"""The processes of the hub's users: found, and all ended when the hub stops.

A student's terminal or kernel can leave a process running that is no child of anything
the hub knows (``setsid nohup sleep``, a double fork, a loop that forks): issue 26, item 7.
``processes_of`` finds the live processes of some users in ``/proc``; ``end_all`` ends
every one of them, by ``kill(-1)`` run as each user (one call that signals all of that
user's processes, so a forking process cannot outrun it), SIGTERM first, then SIGKILL.
Used by ``tools.hub.local``'s ``stop`` (``make hub-stop``) and the hub's test.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import time


def processes_of(uids: set[int]) -> list[int]:
    """PIDs of the live processes whose real user is one of ``uids`` (from /proc; a zombie,
    dead and waiting for its parent to read its status, is not one)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
            uid, state = int(fields["Uid"].split()[0]), fields["State"].split()[0]
        except (OSError, KeyError, ValueError, IndexError):
            continue
        if uid in uids and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


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
