"""Collecting: the submissions to grade, from the submitted tree or class archives.

``collect_zips`` unpacks archives with ``nbgrader zip_collect``; ``submissions`` lists
the (assignment, student) pairs and the folders that cannot be graded, with
``odd_id_reason`` saying why.

Stage: before screening. Depends on: ``tools.grading.settings``, ``tools.release.assignments``.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from tools.release import assignments as course
from tools.grading.settings import Settings

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]*$")

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]*$")


def collect_zips(settings: Settings, zips: list[Path], which: list[str]) -> None:
    """Unpack class archives into the submitted tree with ``nbgrader zip_collect``."""
    for assignment in which:
        with tempfile.TemporaryDirectory(prefix="memcourse-zip-") as tmp:
            archive = Path(tmp) / "downloaded" / assignment / "archive"
            archive.mkdir(parents=True)
            for z in zips:
                shutil.copy(z, archive / Path(z).name)
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


def submissions(settings: Settings, which: list[str], only: list[str] | None = None):
    """(assignment, student) pairs found in the submitted tree, and the folders left out."""
    found, skipped = [], []
    if not settings.submitted.is_dir():
        return found, skipped
    for folder in sorted(settings.submitted.iterdir()):
        if not folder.is_dir() or folder.name in IGNORED_FOLDERS:
            continue
        if only and folder.name not in only:
            continue
        for assignment in which:
            if (folder / assignment).is_dir():
                if STUDENT_ID.match(folder.name):
                    found.append((assignment, folder.name))
                else:
                    skipped.append(
                        f"{folder.name}/{assignment}: not graded: {odd_id_reason(folder.name)}"
                    )
    return found, skipped


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
