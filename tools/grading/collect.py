"""Collecting: the submissions to grade, from the submitted tree or class archives.

``collect_zips`` screens each class archive (``screen_archive``: member count, each
member's size, the total and the compression ratio bounded; no member that leaves its
folder, is a link or a special file, is encrypted or is an archive itself) and unpacks
what it accepts with ``nbgrader zip_collect``; the members it refuses are returned, with
the reason, by student. ``submissions`` lists the (assignment, student) pairs and the
folders that cannot be graded, with ``odd_id_reason`` saying why: a student or
assignment folder that is a symbolic link is not followed.

Stage: before screening. Depends on: ``tools.grading.settings``,
``tools.grading.student_files``, ``tools.release.assignments``.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import zipfile
from pathlib import Path

from tools.release import assignments as course
from tools.grading import student_files as files
from tools.grading.settings import Settings

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]*$")

MAX_MEMBERS = 20_000  # members of one class archive
MAX_MEMBER = files.MAX_NOTEBOOK  # bytes of one member, unpacked
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


def _owner(name: str, which: list[str]) -> str:
    """The student a member of a class archive belongs to ('' when it cannot be told)."""
    if name.startswith("/") or ".." in name.split("/"):
        return ""
    parts = [p for p in name.split("/") if p]
    for i, part in enumerate(parts[1:], start=1):
        if part in which and STUDENT_ID.match(parts[i - 1]):
            return parts[i - 1]
    if len(parts) >= 2 and STUDENT_ID.match(parts[-2]):
        return parts[-2]
    return ""


def screen_archive(archive: Path, into: Path, which: list[str]) -> dict[str, list[str]]:
    """Copy the members of ``archive`` that may be unpacked into the new zip ``into``.

    Returns the refused members by student ('' for a member no student can be told of),
    each as a reason for the report. A member whose unpacked size is not what its header
    says is refused too (the copy reads at most that size).
    """
    refused: dict[str, list[str]] = {}

    def refuse(info: zipfile.ZipInfo, why: str) -> None:
        refused.setdefault(_owner(info.filename, which), []).append(
            f"class archive {archive.name}: member {info.filename!r} refused ({why})"
        )

    try:
        source = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SystemExit(f"{archive}: not a zip archive that can be read ({exc})") from exc
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
            if why is None and info.filename in seen:
                why = "a second member of that name"
            if why:
                refuse(info, why)
                continue
            try:
                with source.open(info) as member, out.open(info.filename, "w") as copy:
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
            seen.add(info.filename)
            total += info.file_size
    if any("cannot be unpacked" in r for rs in refused.values() for r in rs):
        _rewrite_without(into, seen)
    return refused


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
        for i, z in enumerate(zips):
            target = Path(tmp) / "screened" / f"{i}-{Path(z).stem}.zip"
            target.parent.mkdir(parents=True, exist_ok=True)
            for who, reasons in screen_archive(Path(z), target, which).items():
                refused.setdefault(who, []).extend(reasons)
            screened.append(target)
        for assignment in which:
            archive = Path(tmp) / "downloaded" / assignment / "archive"
            archive.mkdir(parents=True)
            for z in screened:
                os.link(z, archive / z.name)
            regexp = (
                rf".*/(?P<student_id>(?!session-\d+/)[^/.][^/]*)/(?:{re.escape(assignment)}/)?"
                r"(?P<file_id>[^/.][^/]*\.ipynb)$"
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
                raise SystemExit(
                    f"nbgrader zip_collect {assignment} failed:\n{result.stdout}{result.stderr}"
                )
    return refused


def submissions(settings: Settings, which: list[str], only: list[str] | None = None):
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
                    skipped.append(f"{name}/{assignment}: not graded: {LINK_REASON % name}")
                continue
            kind = inside.get(assignment)
            if kind == "link":
                skipped.append(
                    f"{name}/{assignment}: not graded: {LINK_REASON % (name + '/' + assignment)}"
                )
            elif kind == "dir":
                if STUDENT_ID.match(name):
                    found.append((assignment, name))
                else:
                    skipped.append(f"{name}/{assignment}: not graded: {odd_id_reason(name)}")
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
