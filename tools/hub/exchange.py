"""nbgrader's exchange on the course hub: laid out before anyone can squat it, on a file
system of its own size, and collected so that a submission is its student's own.

nbgrader's design has every user write to the exchange (students copy their submissions
into ``<root>/<course>/inbound``, the root mode 1777). Left so, a student can squat the
course before its first release, fill the exchange or the disk the homes share, plant
files the instructor cannot remove, hand work in under a classmate's name with any date,
or stop the collection with one odd entry. Here the root is root's (0755) and each
student hands in to a share of their own, ``inbound/<student>`` (``tools.hub.shares``,
with the nbgrader plugins that write there):

``lay_out(root, course, instructor)``
    the course's folders made by ``make hub`` (as root), owned by the instructor:
    ``<course>`` and ``outbound`` 0755, ``inbound`` 0711 (the shares in it are reached,
    not listed), ``feedback`` 0711. A folder found owned by someone else (squatted) is
    moved aside, closed, and reported; so is anything a user left in the root.
``mount_limited(root, image, megabytes)`` / ``unmount(root)``
    a file system of its own for the exchange, and one for each share: an ext4 image of
    that size, loop-mounted (``nosuid,nodev,noexec``) at ``root``. What a student writes
    there cannot fill the disk of the homes and the hub's database, nor a classmate's
    share (this Linux has no disk quotas, and a check at collect comes after the disk is
    full).
``CourseCollect``
    nbgrader's collect (``c.ExchangeFactory.collect``, so ``nbgrader collect`` and
    Formgrader's *Collect* both use it), taking from each share ``inbound/<student>``
    only entries that are folders, named as ``nbgrader submit`` names them
    (``<student>+<assignment>+<time>+<random>``, the share's student),
    owned with every file in them by that Unix user (a member of the course's
    group), holding only regular files and folders, at most ``CourseDirectory.max_dir_size``
    kB. Each entry's time is the file system's (the newest change time, ``st_ctime``, of
    anything in it: no user can set it back), never the name's or ``timestamp.txt``'s; the
    student's newest accepted entry is collected, with that time in its ``timestamp.txt``.
    Every other entry is refused with its reason: printed (its control characters
    escaped), and listed in ``refused/<assignment>.csv`` of the course folder (each cell
    text, never a formula: ``tools.common.text``). Nothing in an entry is followed or
    trusted: each folder and file is opened relative to its parent's descriptor with
    ``O_NOFOLLOW``, checked on the descriptor, read at most to the size limit and copied
    into a private folder first (``tools.common.safe_files``), so an entry changed under
    the collection is refused, not followed.

Imported by ``tools.hub.local`` and, as an nbgrader plugin, by the instructor's nbgrader
(the hub puts the lab's files, this package with them, on the users' ``PYTHONPATH``).
"""

from __future__ import annotations

import csv
import datetime
import grp
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from dateutil.tz import gettz
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import parse_utc
from traitlets import Unicode

from tools.common import safe_files
from tools.common.text import csv_cell, shown
from tools.hub.shares import SharedRoot

# the modes nbgrader's release_assignment and release_feedback give the course's folders
COURSE_MODES = {"": 0o755, "outbound": 0o755, "inbound": 0o711, "feedback": 0o711}
ROOT_MODE = 0o755  # root's: no user writes there (the plugins of tools.hub.shares accept it)
MOUNT_OPTIONS = "loop,nosuid,nodev,noexec"
MAX_ITEMS = 2000  # files and folders of one submission
MAX_DEPTH = 16  # folders inside folders of one submission


# -- the course's folders ----------------------------------------------------------
def lay_out(root: Path, course: str, instructor: str) -> list[str]:
    """The exchange's root and the course's folders, owned by ``instructor``, with the
    modes nbgrader expects; what was found squatted is moved aside. Returns what was done
    about squatters (one line each; empty when nothing was)."""
    entry = pwd.getpwnam(instructor)
    root.mkdir(parents=True, exist_ok=True)
    if root.is_symlink() or os.lstat(root).st_uid != 0:
        raise SystemExit(f"the exchange {root} must be a folder of root's, not "
                         f"{'a link' if root.is_symlink() else 'owned by uid %d' % os.lstat(root).st_uid}")
    os.chmod(root, ROOT_MODE)
    moved = []
    for name in sorted(os.listdir(root)):  # left by a user when the root was 1777
        found = _kind_and_owner(root / name)
        if name != course and found and found[1] != 0:
            moved.append(_move_aside(root / name, found, root, course))
    for name, mode in COURSE_MODES.items():
        path = root / course / name if name else root / course
        found = _kind_and_owner(path)
        if found and found != ("dir", entry.pw_uid):
            moved.append(_move_aside(path, found, root, course))
        if not path.is_dir():
            path.mkdir()
        os.chown(path, entry.pw_uid, entry.pw_gid)
        os.chmod(path, mode)
    return moved


def _kind_and_owner(path: Path) -> tuple[str, int] | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return ("dir" if stat.S_ISDIR(st.st_mode) else "other"), st.st_uid


def _move_aside(path: Path, found: tuple[str, int], root: Path, course: str) -> str:
    """A squatted folder (or a file or link in its place) renamed out of the way, closed."""
    kind, uid = found
    try:
        owner = pwd.getpwuid(uid).pw_name
    except KeyError:
        owner = f"uid {uid}"
    aside = root / f".squatted-{course}-{path.name}-{time.strftime('%Y%m%dT%H%M%S')}"
    os.rename(path, aside)
    os.lchown(aside, 0, 0)
    if not aside.is_symlink():
        os.chmod(aside, 0)
    what = "folder" if kind == "dir" else "file or link"
    return f"{path} was a {what} of {owner} (squatted): moved aside to {aside}, closed"


# -- a file system of its own --------------------------------------------------------
def mounted(root: Path) -> bool:
    """Whether a file system is mounted at ``root`` (/proc/self/mountinfo's fifth field)."""
    target = os.path.realpath(root)
    with open("/proc/self/mountinfo") as table:
        return any(line.split()[4] == target for line in table)


def mount_limited(root: Path, image: Path, megabytes: int) -> str:
    """The exchange on an ext4 image of ``megabytes`` (made once), mounted at ``root``;
    says what was done. The image is a sparse file: it takes the disk it holds."""
    if mounted(root):
        return f"{root}: mounted already ({_size_of(root)} MB)"
    made = ""
    if not image.exists():
        image.parent.mkdir(parents=True, exist_ok=True)
        with open(image, "wb") as f:
            f.truncate(megabytes * 1024 * 1024)
        os.chmod(image, 0o600)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", str(image)], check=True,
                       capture_output=True)
        made = f"made {image} ({megabytes} MB), "
    root.mkdir(parents=True, exist_ok=True)
    os.chown(root, 0, 0)
    os.chmod(root, 0o755)  # the folder under the mount: nobody's to write to
    done = subprocess.run(["mount", "-o", MOUNT_OPTIONS, str(image), str(root)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(
            f"could not mount the exchange's file system {image} at {root}: "
            f"{done.stderr.strip()}\nThe exchange needs a loop device (root, or a container "
            "run with them); or run the hub with --exchange-size 0 to keep it on the disk "
            "the homes share, with only collect's size check.")
    return f"{made}mounted at {root} ({_size_of(root)} MB)"


def _size_of(root: Path) -> int:
    st = os.statvfs(root)
    return st.f_blocks * st.f_frsize // (1024 * 1024)


def unmount(root: Path) -> bool:
    """Unmount the file systems under ``root`` (the shares), deepest first, then the
    exchange's; whether none is left (false when a process still uses one)."""
    target = os.path.realpath(root)
    with open("/proc/self/mountinfo") as table:
        inside = [line.split()[4] for line in table
                  if line.split()[4].startswith(target + "/")]
    for point in sorted(inside, key=len, reverse=True):
        subprocess.run(["umount", point], capture_output=True, check=False)
    if mounted(root):
        subprocess.run(["umount", str(root)], capture_output=True, check=False)
    return not mounted(root)


# -- collect -------------------------------------------------------------------------
class Refused(Exception):
    """An inbound entry that is not collected; its message is the reason."""


class CourseCollect(SharedRoot, ExchangeCollect):
    """``nbgrader collect`` taking only each student's own submissions, at the server's time
    (see the module's docstring). Configure as ``c.ExchangeFactory.collect =
    "tools.hub.exchange.CourseCollect"`` and ``c.CourseCollect.group``."""

    group = Unicode("", help="The Unix group of the course's students: an entry of a user "
                             "outside it is refused ('' accepts any user).").tag(config=True)
    refused_file = Unicode("refused/{assignment_id}.csv",
                           help="Where the refused entries are listed, in the course "
                                "folder.").tag(config=True)

    # nbgrader's ExchangeCollect: init_src lists the records, copy_files copies each with
    # do_copy; here init_src checks and stages them, do_copy copies the staged folder.
    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not os.access(self.inbound_path, os.R_OK | os.X_OK):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        self.refused: list[dict] = []
        self.staging = Path(tempfile.mkdtemp(prefix="memcourse-collect-"))
        self.staged: dict[str, tuple[Path, str]] = {}
        candidates = defaultdict(list)
        for share in sorted(os.listdir(self.inbound_path)):  # made by root: a folder each
            if not stat.S_ISDIR(os.lstat(os.path.join(self.inbound_path, share)).st_mode):
                continue
            for name in sorted(os.listdir(os.path.join(self.inbound_path, share))):
                student = self._claimed(name)
                if student is None:
                    continue
                try:
                    if student != share:
                        raise Refused(f"in the share of {share}, named for another student")
                    candidates[student].append((self._inspect(name, student), name))
                except Refused as why:
                    self._refuse(f"{share}/{name}", student, str(why))
        self.src_records = []
        for student, found in sorted(candidates.items()):
            for when, name in self._in_order(found):
                try:
                    self.staged[name] = (self._stage(name, student), self._stamp(when))
                except Refused as why:
                    self._refuse(f"{student}/{name}", student, f"changed while collected: {why}")
                    continue
                self.src_records.append({"username": student,
                                         "filename": f"{student}/{name}", "timestamp": when})
                break

    def _claimed(self, name: str) -> str | None:
        """The student an inbound entry of this assignment names (None: another
        assignment's, or another student's when one is asked for)."""
        student, mark, _ = name.partition(f"+{self.coursedir.assignment_id}+")
        wanted = self.coursedir.student_id
        if not mark or (wanted not in ("", "*") and student != wanted):
            return None
        return student

    def _inspect(self, name: str, student: str) -> datetime.datetime:
        """The entry's time if it may be collected (else Refused with the reason)."""
        parts = name.rsplit("+", 3)
        if len(parts) != 4 or parts[:2] != [student, self.coursedir.assignment_id]:
            raise Refused("malformed: not a name `nbgrader submit` writes "
                          "(<student>+<assignment>+<time>+<random>)")
        try:
            parse_utc(parts[2])
        except (ValueError, OverflowError, TypeError):
            raise Refused(f"malformed: {parts[2]!r} is not a time") from None
        try:
            user = pwd.getpwnam(student)
        except KeyError:
            raise Refused(f"no Unix user {student!r}") from None
        if self.group and not _in_group(user, self.group):
            raise Refused(f"{student} is not in the course's group {self.group}")
        share = os.path.join(self.inbound_path, student)
        st = os.lstat(os.path.join(share, name))
        if not stat.S_ISDIR(st.st_mode):
            raise Refused(f"not a folder but {_kind(st.st_mode)}")
        if st.st_uid != user.pw_uid:
            raise Refused(f"owned by {_user_name(st.st_uid)}, not by {student}, the student "
                          "its name gives")
        newest = read_tree(share, name, user.pw_uid, self._limit())
        return datetime.datetime.fromtimestamp(newest, datetime.timezone.utc).replace(tzinfo=None)

    def _limit(self) -> int:
        return 1000 * self.coursedir.max_dir_size  # nbgrader's kB

    def _in_order(self, found: list) -> list:
        """A student's accepted entries, the one to collect first (nbgrader's rule: the
        newest, or with --before-duedate the newest before the due date if there is one)."""
        newest = sorted(found, reverse=True)
        if self.before_duedate and self.duedate is not None:
            return ([f for f in newest if f[0] <= self.duedate]
                    + [f for f in newest if f[0] > self.duedate])
        return newest

    def _stage(self, name: str, student: str) -> Path:
        target = self.staging / name
        read_tree(os.path.join(self.inbound_path, student), name,
                  pwd.getpwnam(student).pw_uid, self._limit(), target)
        return target

    def _stamp(self, when: datetime.datetime) -> str:
        utc = when.replace(tzinfo=datetime.timezone.utc)
        return utc.astimezone(gettz(self.timezone)).strftime(self.timestamp_format)

    def _refuse(self, name: str, student: str, reason: str) -> None:
        self.refused.append({"entry": name, "student": student, "reason": reason})
        self.log.warning("Refused inbound/%s: %s", shown(name), shown(reason))

    def do_copy(self, src, dest, log=None):
        """The staged copy of the entry into ``submitted/`` (nbgrader's copy, its ignore
        rules), with the file system's time as its ``timestamp.txt``."""
        staged, stamp = self.staged[os.path.basename(src)]
        super().do_copy(str(staged), dest, log)
        with open(os.path.join(dest, "timestamp.txt"), "w") as fh:
            fh.write(stamp)

    def copy_files(self):
        try:
            super().copy_files()
        finally:
            shutil.rmtree(self.staging, ignore_errors=True)
            self._report()

    def _report(self) -> None:
        """refused/<assignment>.csv in the course folder; a summary in the log."""
        path = Path(self.coursedir.root) / self.refused_file.format(
            assignment_id=self.coursedir.assignment_id)
        if not self.refused and not path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as f:
            out = csv.DictWriter(f, fieldnames=["entry", "student", "reason"])
            out.writeheader()
            out.writerows({k: csv_cell(v) for k, v in row.items()} for row in self.refused)
        if self.refused:
            self.log.warning("%d inbound entr%s of %s refused (listed in %s)",
                             len(self.refused), "y" if len(self.refused) == 1 else "ies",
                             self.coursedir.assignment_id, path)


def _in_group(user: pwd.struct_passwd, group: str) -> bool:
    try:
        entry = grp.getgrnam(group)
    except KeyError:
        return False
    return user.pw_gid == entry.gr_gid or user.pw_name in entry.gr_mem


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _kind(mode: int) -> str:
    kinds = [(stat.S_ISLNK, "a symbolic link"), (stat.S_ISREG, "a file"),
             (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")]
    return next((name for test, name in kinds if test(mode)), "a device")


def read_tree(parent: str, name: str, uid: int, limit: int, target: Path | None = None) -> float:
    """Walk the folder ``parent/name`` without following anything: each folder and file
    opened relative to its parent's descriptor (``O_NOFOLLOW``) and checked on the
    descriptor; only folders and regular files, all owned by ``uid``, at most ``limit``
    bytes and ``MAX_ITEMS`` of them, ``MAX_DEPTH`` deep. With ``target``, copy it there
    (new files of the collecting user). Returns the newest change time (``st_ctime``) in
    it; raises Refused with the reason."""
    budget = {"bytes": limit, "limit": limit, "items": MAX_ITEMS, "newest": 0.0}
    top = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _walk(top, name, uid, budget, target, depth=0, where=name)
    finally:
        os.close(top)
    return budget["newest"]


def _open_checked(dirfd: int, name: str, uid: int, folder: bool, where: str):
    """(descriptor, stat) of ``name`` in ``dirfd``: a folder or a regular file as asked,
    not a link, owned by ``uid``, the same file that was looked at."""
    try:
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except OSError as exc:
        raise Refused(f"{where} cannot be looked at ({exc.strerror})") from None
    if not (stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)):
        raise Refused(f"{where} is {_kind(st.st_mode)} (only files and folders are collected)")
    try:
        fd, seen = safe_files.open_checked(name, dir_fd=dirfd, folder=folder)
    except OSError as exc:
        raise Refused(f"{where} cannot be read ({exc.strerror or exc})") from None
    problem = ("was replaced while it was read" if (seen.st_ino, seen.st_dev) != (st.st_ino, st.st_dev)
               else f"is owned by {_user_name(seen.st_uid)}, not by the student"
               if seen.st_uid != uid else None)
    if problem:
        os.close(fd)
        raise Refused(f"{where} {problem}")
    return fd, seen


def _walk(dirfd: int, name: str, uid: int, budget: dict, target: Path | None,
          depth: int, where: str) -> None:
    if depth > MAX_DEPTH:
        raise Refused(f"folders nested more than {MAX_DEPTH} deep")
    fd, st = _open_checked(dirfd, name, uid, folder=True, where=where)
    try:
        budget["newest"] = max(budget["newest"], st.st_ctime)
        if target is not None:
            target.mkdir(mode=0o755)
        for child in sorted(os.listdir(fd)):
            budget["items"] -= 1
            if budget["items"] < 0:
                raise Refused(f"more than {MAX_ITEMS} files and folders")
            inner = target / child if target is not None else None
            if stat.S_ISDIR(os.stat(child, dir_fd=fd, follow_symlinks=False).st_mode):
                _walk(fd, child, uid, budget, inner, depth + 1, f"{where}/{child}")
            else:
                _copy_file(fd, child, uid, budget, inner, f"{where}/{child}")
    finally:
        os.close(fd)


def _copy_file(dirfd: int, name: str, uid: int, budget: dict, target: Path | None,
               where: str) -> None:
    """Count (and with ``target`` copy) one regular file, within the budget's bytes."""
    too_big = f"over the size limit of {budget['limit'] / 1e6:g} MB (at {where})"
    fd, st = _open_checked(dirfd, name, uid, folder=False, where=where)
    try:
        budget["newest"] = max(budget["newest"], st.st_ctime)
        if target is None:  # a look: the size the file has now
            budget["bytes"] -= st.st_size
            if budget["bytes"] < 0:
                raise Refused(too_big)
            return
        try:
            budget["bytes"] -= safe_files.copy_fd(fd, target, budget["bytes"], mode=0o644)
        except safe_files.TooLarge:
            raise Refused(too_big) from None
    finally:
        os.close(fd)
