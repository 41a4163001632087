"""Collecting: the submissions to grade, from the submitted tree or class archives.

``collect_zips`` screens each class archive (``screen_archive``: member count, each
member's size, the total and the compression ratio bounded; no member that leaves its
folder, is a link or a special file, is encrypted or is an archive itself) and unpacks
what it accepts with ``nbgrader zip_collect``, each member filed under the student whose
folder holds it (never under a classmate whose folder is inside it); the members it
refuses (a second member for the same file included) are returned, with the reason, by
student, and the class is graded. ``submissions`` lists the (assignment, student) pairs and the
folders that cannot be graded, each a ``Skipped`` record (student folder, assignment, reason;
``odd_id_reason`` says why a folder name is no student id): a student or assignment folder
that is a symbolic link is not followed.

Stage: before screening.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tools.common.text import counted, quoted, shown
from tools.release import assignments as course, layout
from tools.common import safe_files as files
from tools.grading import student_files as limits
from tools.grading.settings import Settings

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]*$")

MAX_MEMBERS = 20_000  # members of one class archive
MAX_MEMBER = limits.MAX_NOTEBOOK  # bytes of one member, unpacked
MAX_TOTAL = 2 * 1024**3  # bytes of one archive, unpacked
MAX_RATIO = 100  # unpacked / packed size of a member over RATIO_FROM bytes
RATIO_FROM = 1024**2
NESTED = (".zip", ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z", ".rar")


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a member of a class archive is not unpacked (None: it may be)."""
    name = info.filename
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or ".." in parts or ":" in parts[0]:
        return "its path leaves the archive's folder"
    mode = info.external_attr >> 16
    if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        return files.refusal(files.kind_of(mode))
    if info.flag_bits & 0x1:
        return "it is encrypted"
    if name.lower().endswith(NESTED):
        return "it is an archive inside the archive (not unpacked)"
    if info.file_size > MAX_MEMBER:
        return f"it unpacks to more than {MAX_MEMBER // 1024**2} MB"
    if info.file_size > RATIO_FROM and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        return f"it unpacks to more than {MAX_RATIO} times its packed size"
    return None


def _filed(name: str) -> tuple[str, str | None, list[str]] | None:
    """Where a member of a class archive belongs: (the folder of the student whose folder
    holds it, the assignment folder it is in (None: the student's folder itself), the path
    below that); None for a member of a hidden folder (``.ipynb_checkpoints``,
    ``__MACOSX`` ...), which nbgrader never collects. The student's folder is the one
    before the first assignment folder (``session-N``) of its path, else its parent."""
    parts = [p for p in name.split("/") if p]
    if any(p.startswith(".") or p in IGNORED_FOLDERS for p in parts):
        return None
    for i, part in enumerate(parts[1:], start=1):
        if layout.ASSIGNMENT.match(part):
            return parts[i - 1], part, parts[i + 1:]
    if len(parts) >= 2:
        return parts[-2], None, parts[-1:]
    return "", None, parts


def _owner(name: str) -> str:
    """The student a member of a class archive belongs to ('' when it cannot be told)."""
    if name.startswith("/") or ".." in name.split("/"):
        return ""
    filed = _filed(name)
    return filed[0] if filed and STUDENT_ID.match(filed[0]) else ""


def screen_archive(archive: Path, into: Path, which: list[str],
                   taken: set | None = None) -> dict[str, list[str]]:
    """Copy the members of ``archive`` that may be unpacked into the new zip ``into``,
    each filed under the student whose folder holds it, as ``<student>/<assignment>/<file>``
    (``<student>/<file>`` for a file of the student's folder itself).

    Returns the refused members by student ('' for a member no student can be told of),
    each as a reason for the report, like reasons counted past the first few. A member
    whose unpacked size is not what its header says is refused too (the copy reads at most
    that size); so is one in a folder inside the student's assignment folder (a classmate's
    folder in a student's upload is never filed as the classmate's), one of no student's
    folder, and a second member for a file already filed (here or in ``taken``, the files
    of the archives screened before: ``(student, assignment, file)``). A member of an
    assignment not in ``which`` or of a hidden folder is left out (nbgrader would skip it).
    """
    refused: dict[str, dict[str, list[str]]] = {}
    taken = set() if taken is None else taken

    def refuse(info: zipfile.ZipInfo, why: str) -> None:
        refused.setdefault(_owner(info.filename), {}).setdefault(why, []).append(
            f"class archive {archive.name}: member {quoted(info.filename)} refused ({why})")

    try:
        source = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SystemExit(shown(f"{archive}: not a zip archive that can be read ({exc})")) from exc
    total, count, seen = 0, 0, set()
    with source, zipfile.ZipFile(into, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            if info.is_dir():
                continue
            count += 1
            why = _member_problem(info)
            if why is None and count > MAX_MEMBERS:
                why = f"the archive holds more than {MAX_MEMBERS} members"
            if why is None and total + info.file_size > MAX_TOTAL:
                why = f"the archive unpacks to more than {MAX_TOTAL // 1024**3} GB"
            filed = _filed(info.filename) if why is None else ("", None, [])
            if filed is None or (filed[1] is not None and filed[1] not in which):
                continue  # a hidden folder's, another assignment's: not collected
            student, assignment, below = filed
            if why is None and not student:
                why = "it is in no student's folder"
            if why is None and len(below) != 1:
                why = (f"it is in a folder inside the folder of {quoted(student)}: a file is "
                       "filed only under the student whose folder holds it")
            name = below[-1] if below else ""
            keys = {(student, a, name) for a in ([assignment] if assignment else which)}
            if why is None and keys & taken:
                why = "a second member for a file already filed: only the first is kept"
            if why:
                refuse(info, why)
                continue
            target = "/".join([student, *([assignment] if assignment else []), below[0]])
            try:
                with source.open(info) as member, out.open(target, "w") as copy:
                    size = 0
                    while chunk := member.read(min(1 << 20, info.file_size + 1 - size)):
                        size += len(chunk)
                        if size > info.file_size:
                            raise zipfile.BadZipFile("larger than its header says")
                        copy.write(chunk)
                        if size == info.file_size:
                            break
            except (zipfile.BadZipFile, OSError, RuntimeError, EOFError, ValueError) as exc:
                refuse(info, f"it cannot be unpacked: {exc}")
                # the entry written so far is left as an empty name: remove it below
                continue
            seen.add(target)
            taken.update(keys)
            total += info.file_size
    if any("cannot be unpacked" in why for whys in refused.values() for why in whys):
        _rewrite_without(into, seen)
    return {who: [line for why, lines in whys.items()
                  for line in counted(lines, f"members of {archive.name} refused ({why})")]
            for who, whys in refused.items()}


def _rewrite_without(archive: Path, keep: set[str]) -> None:
    """``archive`` with only the members ``keep`` (those whose copy was finished)."""
    fresh = archive.with_suffix(".kept.zip")
    with zipfile.ZipFile(archive) as old, zipfile.ZipFile(fresh, "w", zipfile.ZIP_DEFLATED) as new:
        done = set()
        for info in old.infolist():
            if info.filename in keep and info.filename not in done:
                done.add(info.filename)
                with old.open(info) as src, new.open(info.filename, "w") as dst:
                    while chunk := src.read(1 << 20):
                        dst.write(chunk)
    os.replace(fresh, archive)


def collect_zips(settings: Settings, zips: list[Path], which: list[str]) -> dict[str, list[str]]:
    """Unpack class archives into the submitted tree with ``nbgrader zip_collect``, each
    screened first (``screen_archive``); the refused members by student."""
    refused: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="memcourse-zip-") as tmp:
        screened = []
        taken: set = set()  # (student, assignment, file) filed from the archives so far
        for i, z in enumerate(zips):
            target = Path(tmp) / "screened" / f"{i}-screened.zip"
            target.parent.mkdir(parents=True, exist_ok=True)
            for who, reasons in screen_archive(Path(z), target, which, taken).items():
                refused.setdefault(who, []).extend(reasons)
            screened.append(target)
        for assignment in which:
            archive = Path(tmp) / "downloaded" / assignment / "archive"
            archive.mkdir(parents=True)
            for z in screened:
                os.link(z, archive / z.name)
            # the screened archives hold <student>/[<assignment>/]<file> only, unpacked
            # by nbgrader into extracted/<i>-screened/
            regexp = (
                rf".*/extracted/\d+-screened/(?P<student_id>[^/]+)/(?:{re.escape(assignment)}/)?"
                r"(?P<file_id>[^/]+\.ipynb)$"
            )
            # nbgrader joins this folder to the course root before formatting: give it relative
            downloaded = os.path.relpath(Path(tmp) / "downloaded", settings.root)
            result = course.run_nbgrader(
                [
                    "zip_collect",
                    assignment,
                    "--force",
                    f"--ZipCollectApp.downloaded_directory={downloaded}",
                    f"--CourseDirectory.submitted_directory={settings.submitted}",
                    f"--FileNameCollectorPlugin.named_regexp={regexp}",
                ],
                cwd=settings.root,
            )
            if result.returncode != 0:
                raise SystemExit(shown(
                    f"nbgrader zip_collect {assignment} failed:\n{result.stdout}{result.stderr}",
                    lines=True))
    return refused


@dataclass(frozen=True)
class Skipped:
    """A submission folder left out: the student folder's name, the assignment, and why.

    ``str`` gives the line shown to the instructor: ``student/assignment: not graded: reason``.
    """

    student: str
    assignment: str
    reason: str

    def __str__(self) -> str:
        return f"{self.student}/{self.assignment}: not graded: {self.reason}"


def submissions(
    settings: Settings, which: list[str], only: list[str] | None = None
) -> tuple[list[tuple[str, str]], list[Skipped]]:
    """(assignment, student) pairs found in the submitted tree, and the folders left out.

    Nothing is followed: a student or assignment folder that is a symbolic link is left
    out with its reason (it would grade someone else's work, or the solutions, as theirs).
    """
    found, skipped = [], []
    if files.kind(settings.submitted) not in ("dir", "link") or not settings.submitted.is_dir():
        return found, skipped
    for name, what in files.entries(settings.submitted):
        if name in IGNORED_FOLDERS or what not in ("dir", "link"):
            continue
        if only and name not in only:
            continue
        folder = settings.submitted / name
        inside = dict(files.entries(folder)) if what == "dir" else {}
        for assignment in which:
            if what == "link":
                if (folder / assignment).is_dir():
                    skipped.append(Skipped(name, assignment, LINK_REASON % name))
                continue
            kind = inside.get(assignment)
            if kind == "link":
                skipped.append(Skipped(name, assignment, LINK_REASON % (name + "/" + assignment)))
            elif kind == "dir":
                if STUDENT_ID.match(name):
                    found.append((assignment, name))
                else:
                    skipped.append(Skipped(name, assignment, odd_id_reason(name)))
    return found, skipped


LINK_REASON = (
    "the folder %r is a symbolic link, not a folder of its own: not followed (it would "
    "grade what it points to as this student's work); put the submission itself there"
)
IGNORED_FOLDERS = {".ipynb_checkpoints", "__MACOSX", ".DS_Store"}
def odd_id_reason(name: str) -> str:
    """Why a folder name cannot be a student id for nbgrader (said in the report)."""
    if name.startswith("."):
        why = "it starts with a dot (a hidden folder)"
    elif name.startswith("-"):
        why = "it starts with a dash (read as an option)"
    elif any(c.isspace() for c in name):
        why = "it holds a space"
    elif not name.isascii():
        why = "it holds a character outside ASCII"
    else:
        bad = sorted({c for c in name if not (c.isalnum() or c in "._@+-")})
        why = f"it holds {' '.join(repr(c) for c in bad) or 'a character nbgrader refuses'}"
    return (
        f"the folder name {name!r} is not a usable student id ({why}); rename the folder "
        "to the student's id (letters, digits, . _ @ + -) and grade again"
    )
