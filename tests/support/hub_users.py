"""What the tests of a real hub share: the Unix users they make and remove, a command run
as one of them with a clean environment, and a user's own hub API token, asked for with
their password."""

from __future__ import annotations

import pwd
import subprocess
from pathlib import Path


def remove_user(name: str) -> None:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return
    subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)


def run_as(user: str, argv: list[str], home: Path, bin_dir: Path, pythonpath: Path | str,
           cwd: Path | None = None, env: dict | None = None, timeout: float = 600):
    """Run ``argv`` as the Unix ``user`` with only HOME, USER, PATH (``bin_dir`` first),
    PYTHONPATH and ``env`` set."""
    clean = ["env", "-i", f"HOME={home}", f"USER={user}", f"LOGNAME={user}", "LANG=C.UTF-8",
             f"PATH={bin_dir}:/usr/local/bin:/usr/bin:/bin", f"PYTHONPATH={pythonpath}",
             *(f"{k}={v}" for k, v in (env or {}).items())]
    return subprocess.run(["runuser", "-u", user, "--", *clean, *argv], cwd=cwd or home,
                          capture_output=True, text=True, timeout=timeout, check=False)


def hub_token(hub_url: str, user: str, password: str) -> str:
    """A new API token of ``user``, asked for with their password (the hub's token API
    authenticates the body's ``auth`` as its login page does)."""
    import requests

    made = requests.post(f"{hub_url}/hub/api/users/{user}/tokens", timeout=60,
                         json={"auth": {"username": user, "password": password},
                               "note": "the test's nbgrader"})
    assert made.status_code == 201, (user, made.status_code, made.text)
    return made.json()["token"]
