"""What ``make hub-stop`` asks the running hub through JupyterHub's REST API: the PIDs of the
single-user servers, from each server's model.

``make hub`` gives the hub a service of its own, ``hub-stop``, whose token may list the
users, read their servers and read a server's state (``admin:server_state``): ``grant``
writes that token and the address of the hub's API to ``api.json`` in the hub's state
folder (root's only) before the hub starts; ``jupyterhub_config.py`` registers the service
and its role from that file (``service``, ``role``); ``server_pids`` reads the file and
asks ``GET /hub/api/users?include_stopped_servers=1``, whose server models carry the state
LocalProcessSpawner keeps, ``{"pid": ...}``.

Only a running hub answers. When it does not (it crashed, or was never started), no PID
comes from here: its servers still run as the hub's users, and the stop ends every process
of theirs (``tools.hub.processes.end_all``).
"""

from __future__ import annotations

import json
import os
import secrets
import urllib.request
from pathlib import Path

SERVICE = "hub-stop"
FILE = "api.json"  # in the hub's state folder: {"url": ".../hub/api", "token": ...}
SCOPES = ["list:users", "read:users:name", "read:servers", "admin:server_state"]


def grant(state: Path, api_port: int) -> None:
    """A new token of the ``hub-stop`` service, and the API's address on 127.0.0.1 at
    ``api_port``, written to ``state/api.json``, readable by its owner only."""
    record = {"url": f"http://127.0.0.1:{api_port}/hub/api", "token": secrets.token_hex(32)}
    path = state / FILE
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(json.dumps(record) + "\n")


def _record(state: Path) -> dict | None:
    try:
        record = json.loads((state / FILE).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("token") else None


def service(state: Path) -> dict | None:
    """The ``hub-stop`` service of JupyterHub's ``services``, with the token ``grant``
    wrote in ``state``; None when there is none (a hub ``make hub`` did not start)."""
    record = _record(state)
    return {"name": SERVICE, "api_token": record["token"]} if record else None


def role() -> dict:
    """The role of JupyterHub's ``load_roles`` that gives the ``hub-stop`` service its scopes."""
    return {"name": SERVICE, "scopes": SCOPES, "services": [SERVICE]}


def server_pids(state: Path, timeout: float = 10) -> list[int]:
    """PIDs of the single-user servers of the hub whose state folder is ``state``, from the
    ``state`` of each server model the running hub returns, page after page (JupyterHub's
    paginated list of users), stopped servers included; the PIDs of the pages read when
    the hub stops answering, none when it does not answer within ``timeout`` s or there is
    no ``api.json``."""
    record = _record(state)
    if record is None:
        return []
    headers = {"Authorization": f"token {record['token']}",
               "Accept": "application/jupyterhub-pagination+json"}
    pids, offset = [], 0
    while offset is not None:
        request = urllib.request.Request(
            f"{record['url']}/users?include_stopped_servers=1&offset={offset}", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                page = json.loads(response.read())
            users, following = page["items"], page["_pagination"]["next"]
        except (OSError, ValueError, KeyError, TypeError):
            return pids
        for user in users:
            for server in (user.get("servers") or {}).values():
                pid = (server.get("state") or {}).get("pid")
                if isinstance(pid, int) and pid > 0:
                    pids.append(pid)
        offset = following["offset"] if following and following["offset"] > offset else None
    return pids
