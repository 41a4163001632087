"""A course hub of a test's own, made and undone in one place: ``own_hub`` gives the
``tools.hub.local.Hub`` (its state and exchange in a new temporary folder, users of its own)
to a ``with`` block that installs and starts what the test needs, and when the block ends,
however it ends, undoes all of it: the hub stopped (``tools.hub.local.stop``: its processes
and its users', their cgroups, the homes and the exchange unmounted), its logs kept if
asked, its users removed, the folder removed once nothing is mounted in it."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from support.hub_users import remove_user
from tools.hub import exchange, local

LOGS = ("jupyterhub.log", "proxy.log")


def users_of(hub: local.Hub) -> list[str]:
    """Every Unix user ``hub`` makes: the instructor, the graders, the students, and in
    one-user mode the user every student's server runs as."""
    pods = [hub.pod_user] if hub.one_user else []
    return [hub.instructor] + list(hub.tas) + hub.student_names + pods


@contextlib.contextmanager
def own_hub(prefix: str, keep_logs: Path | None = None, **options) -> Iterator[local.Hub]:
    """A ``local.Hub`` made with ``options`` in a new folder named ``prefix...`` (reachable by
    the users: the exchange is in it), its users removed first (a run killed before its
    teardown leaves them); at the end, everything undone (above), the hub's logs copied
    into ``keep_logs`` first when given."""
    assert os.geteuid() == 0, "the hub's tests create Unix users: run them as root"
    base = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(base, 0o755)
    hub = local.Hub(state=base / "state", exchange=base / "exchange", **options)
    users = users_of(hub)
    for user in users:
        remove_user(user)
    try:  # a failed install is stopped too: its homes and exchange are mounted
        yield hub
    finally:
        try:
            local.stop(hub)
        finally:
            if keep_logs is not None:
                keep_logs.mkdir(parents=True, exist_ok=True)
                for name in LOGS:
                    if (hub.state / name).is_file():
                        shutil.copy(hub.state / name, keep_logs / name)
            for user in users:
                remove_user(user)
            if exchange.unmount(hub.exchange):
                shutil.rmtree(base, ignore_errors=True)
