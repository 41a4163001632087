"""The course's graders: the instructor and teaching assistants, as nbgrader's multi-grader
setup describes it (a group of graders per course, a course folder they share).

    python -m tools.hub start --tas "mc-ta1 mc-ta2"      (make hub TAS="mc-ta1 mc-ta2", as root)

A teaching assistant is a Unix user of the course's group (they log in as everyone does)
and of the graders' group ``formgrade-<course>`` (``GRADERS``), which is also the hub's group
of that name (``c.JupyterHub.load_groups``, with ``nbgrader-<course>`` for the students, as
nbgrader's documentation names them). Their lab is the instructor's (Formgrader), and their
nbgrader works in the instructor's course folder (``~mc-instructor/memcourse``).

What the graders' group may do there is set with POSIX ACLs (``share_course``), so that the
instructor keeps owning every file and nothing depends on anyone's umask:

* read the whole course folder (the solutions too: a grader reads the rubric), and pass
  through the instructor's home to reach it (``--x`` only: nothing else of the home is listed);
* write the gradebook (``gradebook.db``: Formgrader's manual grades) and, in the course
  folder itself, only make and remove their own files (SQLite's journal): the folder is
  sticky, so no grader renames or replaces a file of the instructor's (``solutions/``,
  ``schedule.yml``, ``extensions.yml``, ``nbgrader_config.py`` stay the instructor's);
* write ``autograded/`` and ``feedback/`` (nbgrader's ``generate_feedback``), with default
  ACLs so that what ``make grade`` writes there later is the graders' too;
* release feedback: write the exchange's ``<course>/feedback`` folder, whose files each
  student reads by name (its default ACL reads for the owning group and others).

A grader is in no other course's group, so no other course folder is theirs to read.

``ensure`` does it for a hub (``tools.hub.local``'s ``Hub``), after putting the schedule's due
dates and the extensions in the gradebook (``python -m tools.grading.lateness`` run in the
course folder as the instructor: Formgrader shows them before anything is graded).
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import subprocess
from pathlib import Path

GRADER_DIRS = ("autograded", "feedback")  # the graders write there
READ_DIRS = ("submitted",)  # the graders read there (collect writes)


def graders_group(course: str) -> str:
    """The graders' group of ``course`` (Unix, and the hub's): nbgrader's ``formgrade-<course>``."""
    return f"formgrade-{course}"


def students_group(course: str) -> str:
    """The hub's group of the course's students: nbgrader's ``nbgrader-<course>``."""
    return f"nbgrader-{course}"


def ensure_group(group: str, members: list[str]) -> None:
    """The Unix group ``group`` with ``members`` in it (added, never removed)."""
    try:
        have = set(grp.getgrnam(group).gr_mem)
    except KeyError:
        subprocess.run(["groupadd", group], check=True)
        have = set()
    for user in members:
        if user not in have:
            subprocess.run(["gpasswd", "-a", user, group], check=True, capture_output=True)


def _acl(*args: str) -> None:
    if shutil.which("setfacl") is None:
        raise SystemExit("setfacl is missing: apt-get install acl (make system-deps)")
    done = subprocess.run(["setfacl", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"setfacl {' '.join(args)}: {done.stderr.strip()}")


def share_course(course: Path, group: str, owner: tuple[int, int],
                 exchange_feedback: Path | None = None) -> None:
    """The course folder ``course`` (owned by ``owner``, uid and gid) shared with the
    graders' ``group`` as the module says; ``exchange_feedback``: the exchange's feedback
    folder of the course. Run after anything that chmods the home or the course."""
    course = Path(course)
    for name in GRADER_DIRS + READ_DIRS:
        (course / name).mkdir(exist_ok=True)
        os.chown(course / name, *owner)
    gradebook = course / "gradebook.db"
    _acl("-m", f"g:{group}:--x", str(course.parent))  # through the home, listing nothing
    _acl("-R", "-m", f"g:{group}:rX", str(course))
    _acl("-m", f"g:{group}:rwx,d:g:{group}:rX", str(course))  # new files of the root: read
    os.chmod(course, os.stat(course).st_mode | 0o1000)  # sticky: a grader removes their own only
    for name in GRADER_DIRS:
        _acl("-R", "-m", f"g:{group}:rwX,d:g:{group}:rwX", str(course / name))
    for name in READ_DIRS:
        _acl("-R", "-m", f"d:g:{group}:rX", str(course / name))
    if gradebook.is_file() and not gradebook.is_symlink():
        _acl("-m", f"g:{group}:rw", str(gradebook))
    if exchange_feedback is not None and exchange_feedback.is_dir():
        # a released file is read by its student, who knows its name (the folder lists
        # nothing): the owning group's and others' default entries read, as nbgrader's 0644
        _acl("-m", f"g:{group}:rwx,d:g:{group}:rw,d:g::r,d:o::r", str(exchange_feedback))


def environment(hub, course: str) -> dict[str, str]:
    """What the hub's configuration reads: the graders, and the course folder (whose
    ``extensions.yml`` gives each student's server their own due dates)."""
    try:
        folder = str(hub.home(hub.instructor) / course)
    except KeyError:  # no instructor yet
        folder = ""
    return {"MEMCOURSE_HUB_GRADERS": ",".join(hub.tas), "MEMCOURSE_HUB_COURSE": folder}


def ensure(hub, course: str) -> None:
    """The schedule in the gradebook, the graders' group and their share of the course."""
    entry = pwd.getpwnam(hub.instructor)
    folder = hub.home(hub.instructor) / course
    recorded = subprocess.run(
        ["runuser", "-u", hub.instructor, "--", "env", "-i", f"HOME={entry.pw_dir}",
         f"PATH={hub.venv}/bin:/usr/bin:/bin", "LANG=C.UTF-8",
         str(hub.venv / "bin" / "python"), "-m", "tools.grading.lateness"],
        cwd=folder, capture_output=True, text=True, check=False)
    if recorded.returncode != 0:
        raise SystemExit(f"the schedule of {folder} is not in its gradebook:\n"
                         f"{recorded.stdout[-2000:]}{recorded.stderr[-2000:]}")
    group = graders_group(course)
    ensure_group(group, [hub.instructor] + list(hub.tas))
    share_course(folder, group, (entry.pw_uid, entry.pw_gid), hub.exchange / course / "feedback")
