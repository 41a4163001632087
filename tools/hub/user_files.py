"""What ``make hub`` writes for each user of the course hub: nbgrader's configuration in
their home, and, in one-user mode (``make hub ONE_UNIX_USER=1``), the Unix user every
student's server runs as, with a home per student under its own.

``nbgrader_config(hub, user, course, group)``
    ``~/.jupyter/nbgrader_config.py``: the course, the largest submission, the exchange's
    plugins: each student's share (``tools.hub.shares``) and the instructor's collect
    (``tools.hub.exchange``), or in one-user mode the exchange service's
    (``tools.hub.hub_exchange_client``); a grader's course folder, a student's
    assignment folder (``~/memcourse/exercises``).
``ensure_pod_homes(hub, course, group)``
    one-user mode: the user ``hub.pod_user`` (home 0700, no password), and in its home a
    home per student (``hub.pod_home(student)``), as a pod's volume, with its nbgrader
    configuration.

``hub`` is ``tools.hub.local.Hub`` (its users, homes, exchange and sizes).
"""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

from tools.hub import course_repo, hub_exchange_client, shares


def _own(user: str, path: Path) -> None:
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)


def ensure_pod_homes(hub, course: str, group: str) -> None:
    """One-user mode: the Unix user every student's server runs as (no password: nobody
    logs in as it), and in its home (0700) a home per student, as a pod's volume, with
    nbgrader's configuration for the exchange service."""
    try:
        pwd.getpwnam(hub.pod_user)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--gid", group,
                        hub.pod_user], check=True)
    os.chmod(hub.home(hub.pod_user), 0o700)
    for student in hub.student_names:
        home = hub.pod_home(student)
        home.mkdir(exist_ok=True)
        _own(hub.pod_user, home)
        nbgrader_config(hub, student, course, group, home, owner=hub.pod_user)


def nbgrader_config(hub, user: str, course: str, group: str, home: Path | None = None,
                    owner: str = "") -> None:
    """~/.jupyter/nbgrader_config.py: the exchange and the course (nbgrader's hub setup);
    ``home`` and ``owner``: a student's pod home in one-user mode, its Unix user's."""
    home, owner = home or hub.home(user), owner or user
    folder = home / ".jupyter"
    folder.mkdir(exist_ok=True)
    limit = hub.submission_mb * 1000  # nbgrader's kB
    lines = ["# written by `make hub` (tools/hub/user_files.py)", "c = get_config()  # noqa: F821",
             *([] if hub.one_user else [f"c.Exchange.root = {str(hub.exchange)!r}"]),
             f"c.CourseDirectory.course_id = {course!r}",
             f"# a submission of at most {hub.submission_mb} MB (nbgrader submit, and collect)",
             f"c.CourseDirectory.max_dir_size = {limit}",
             f"c.CourseDirectory.max_file_size = {limit}"]
    if hub.one_user:  # the exchange service knows who calls (tools/hub/hub_exchange.py)
        lines += ["# the course's exchange service: the caller is the hub's user of the token"]
        lines += hub_exchange_client.config_lines()
    else:
        lines += ["# the exchange's root is root's; each student hands in to their share"]
        lines += [f"c.ExchangeFactory.{op} = 'tools.hub.shares.{plugin.__name__}'"
                  for op, plugin in shares.PLUGINS.items()]
    if user == hub.instructor or user in hub.tas:  # a grader works in the instructor's course
        lines += ["c.Exchange.path_includes_course = True",
                  f"c.CourseDirectory.root = {str(hub.course_dir())!r}"]
        if not hub.one_user:
            lines += ["# collect only each student's own submissions, at the file system's time",
                      "c.ExchangeFactory.collect = 'tools.hub.exchange.CourseCollect'",
                      f"c.CourseCollect.group = {group!r}"]
    else:  # fetch, submit, fetch_feedback from any folder: in the course pulled into
        # ~/memcourse, fetched into exercises/session-N beside book/ as in the course folder
        lines += [f"c.Exchange.assignment_dir = "
                  f"{str(home / course_repo.NAME / 'exercises')!r}",
                  "c.Exchange.path_includes_course = False"]
    (folder / "nbgrader_config.py").write_text("\n".join(lines) + "\n")
    for path in (folder, folder / "nbgrader_config.py"):
        _own(owner, path)
