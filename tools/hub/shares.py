"""Each student's share of nbgrader's exchange: a file system of its own, and the nbgrader
plugins that hand in there.

The exchange's root is root's (0755) and ``<course>/inbound`` the instructor's (0711): no
student writes anywhere another's entry, or the instructor's clean-up, could be blocked.
Each student hands in to ``inbound/<student>/``, their **share**:

``make_share(inbound, student, graders, image, megabytes, mount)``
    the share on an ext4 image of its own size (loop-mounted ``nosuid,nodev,noexec``),
    owned by the student, group ``graders`` (the instructor and the teaching assistants,
    ``tools.hub.staff``), mode 2770: private to the student and the graders, who may
    delete anything in it; a student who fills
    it stops their own submissions only. ``megabytes`` 0: a plain folder (the exchange's
    own file system then bounds the class together, not each student).
``clear(root, course)``
    as root: every share emptied, the released assignments and the feedback removed
    (``make hub-clear-exchange``: a new term starts with a clean exchange).

The nbgrader plugins (``c.ExchangeFactory.<operation>``), used by every user's nbgrader:
each accepts a root it cannot write to (nbgrader's checks want 1777), and
``CourseSubmit`` hands in to the student's own share, as themselves (``--student``
naming another is refused), with the entry private to them and the graders (2770,
files 0660, not nbgrader's 0777), and says plainly when the share or the home is full
instead of a traceback. The instructor's collect is ``tools.hub.exchange.CourseCollect``,
which takes from each share only the entries of its student.
"""

from __future__ import annotations

import base64
import errno
import grp
import os
import pwd
import shutil
import subprocess
from pathlib import Path

from nbgrader.exchange.default import (ExchangeFetchAssignment, ExchangeFetchFeedback,
                                       ExchangeList, ExchangeReleaseAssignment,
                                       ExchangeReleaseFeedback, ExchangeSubmit)
from nbgrader.utils import check_directory, get_username

SHARE_MODE = 0o2770  # the student and the graders' group; entries inherit the group
ENTRY_MODES = (0o2770, 0o660)  # an entry's folders and files
FULL = (errno.ENOSPC, errno.EDQUOT)


# -- the shares (as root) -------------------------------------------------------------
def make_share(inbound: Path, student: str, graders: str, image: Path, megabytes: int,
               mount) -> str:
    """``inbound/<student>``, the student's share, on a file system of ``megabytes``
    (``mount(path, image, megabytes)`` mounts it: ``tools.hub.exchange.mount_limited``);
    says what was done."""
    share = inbound / student
    said = mount(share, image, megabytes) if megabytes else f"{share}: a folder"
    if not megabytes:
        share.mkdir(exist_ok=True)
    lost = share / "lost+found"
    if lost.is_dir() and not lost.is_symlink() and not any(lost.iterdir()):
        lost.rmdir()  # mkfs's, empty: the student's entries only
    user = pwd.getpwnam(student)
    os.chown(share, user.pw_uid, grp.getgrnam(graders).gr_gid, follow_symlinks=False)
    os.chmod(share, SHARE_MODE)
    return said


def clear(root: Path, course: str) -> list[str]:
    """Everything a term left in the exchange removed, as root (nothing followed:
    ``rm -rf --one-file-system`` on each entry): each share's entries, the released
    assignments, the feedback. Returns what was removed."""
    removed = []
    folders = [root / course / "outbound", root / course / "feedback"]
    inbound = root / course / "inbound"
    if inbound.is_dir():
        folders += [p for p in inbound.iterdir() if p.is_dir() and not p.is_symlink()]
    for folder in folders:
        if not folder.is_dir() or folder.is_symlink():
            continue
        for entry in sorted(os.listdir(folder)):
            subprocess.run(["rm", "-rf", "--one-file-system", "--", str(folder / entry)],
                           check=False, capture_output=True)
            removed.append(str(folder / entry))
    return removed


# -- the plugins (as each user) ---------------------------------------------------------
class SharedRoot:
    """The exchange's root is root's: reaching it is enough (nbgrader's own check wants
    every user to write there, and its release makes it 1777)."""

    def ensure_root(self):
        if not check_directory(self.root, read=True, execute=True):
            self.fail(f"The exchange {self.root} cannot be reached: ask your instructor.")


class CourseReleaseAssignment(SharedRoot, ExchangeReleaseAssignment):
    """nbgrader's release_assignment, the exchange's root left as it is."""


class CourseReleaseFeedback(SharedRoot, ExchangeReleaseFeedback):
    """nbgrader's release_feedback, the exchange's root left as it is. A teaching assistant
    releases into the instructor's feedback folder, which the graders' group writes through
    its ACL (``tools.hub.staff``): a folder this user may write is enough, where nbgrader's
    own check wants it self-owned."""

    def ensure_directory(self, path, mode):
        if os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK):
            return
        super().ensure_directory(path, mode)


class CourseFetchAssignment(SharedRoot, ExchangeFetchAssignment):
    """nbgrader's fetch_assignment from a root it cannot write to."""


class CourseFetchFeedback(SharedRoot, ExchangeFetchFeedback):
    """nbgrader's fetch_feedback from a root it cannot write to."""


class CourseList(SharedRoot, ExchangeList):
    """nbgrader's list (the Assignments tab) from a root it cannot write to."""


class CourseSubmit(SharedRoot, ExchangeSubmit):
    """``nbgrader submit`` into the student's own share, ``inbound/<student>/``, the entry
    named as nbgrader names it and private to the student and the graders."""

    def init_dest(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        student = get_username()
        if self.coursedir.student_id not in ("*", student):
            self.fail(f"You hand in as yourself ({student}), not as "
                      f"{self.coursedir.student_id!r}.")
        self.inbound_path = os.path.join(self.root, self.coursedir.course_id, "inbound",
                                         student)
        if not check_directory(self.inbound_path, write=True, execute=True):
            self.fail(f"Your folder of the exchange {self.inbound_path} is missing or not "
                      "yours: ask your instructor.")
        self.cache_path = os.path.join(self.cache, self.coursedir.course_id)
        random = base64.urlsafe_b64encode(os.urandom(9)).decode("ascii")
        self.assignment_filename = "+".join([student, self.coursedir.assignment_id,
                                             self.timestamp, random])

    def copy_files(self):
        entry = os.path.join(self.inbound_path, self.assignment_filename)
        try:
            super().copy_files()
        except OSError as exc:
            where = self._full(exc)
            if where is None:
                raise
            shutil.rmtree(entry, ignore_errors=True)  # the part that was written
            self.fail(f"Not handed in: {where} is full. Your earlier submissions are kept; "
                      "remove large files from your assignment's folder, or ask your "
                      "instructor to clear your old submissions, then submit again.")
        for folder, _, files in os.walk(entry):  # nbgrader leaves the entry 0777
            os.chmod(folder, ENTRY_MODES[0])
            for name in files:
                os.chmod(os.path.join(folder, name), ENTRY_MODES[1])


    def check_filename_diff(self):
        """nbgrader's warning of missing or extra notebooks, only when there are some once
        the paths the course ignores (``CourseDirectory.ignore``: ``.ipynb_checkpoints``,
        ``feedback``, which submit does not copy either) are left out."""
        from fnmatch import fnmatch

        from nbgrader.utils import find_all_notebooks

        handed = {nb for nb in find_all_notebooks(self.src_path)
                  if not any(fnmatch(part, pattern) for part in Path(nb).parts
                             for pattern in self.coursedir.ignore)}
        if handed != set(find_all_notebooks(self.release_path)):
            super().check_filename_diff()

    def _full(self, exc: OSError) -> str | None:
        """Which of the student's places a write failed on for want of space ("your share
        of the exchange", "your home"), or None for another error. ``shutil.copytree``
        gathers its errors as (source, destination, message) text."""
        if isinstance(exc, shutil.Error):
            found = [(dst, why) for _src, dst, why in exc.args[0]
                     if any(os.strerror(e) in str(why) for e in FULL)]
        else:
            found = [(exc.filename, "")] if exc.errno in FULL else []
        if not found:
            return None
        inside = str(found[0][0] or "").startswith(self.inbound_path)
        return "your share of the exchange" if inside else "your home"


PLUGINS = {"fetch_assignment": CourseFetchAssignment, "fetch_feedback": CourseFetchFeedback,
           "release_assignment": CourseReleaseAssignment,
           "release_feedback": CourseReleaseFeedback, "list": CourseList,
           "submit": CourseSubmit}
