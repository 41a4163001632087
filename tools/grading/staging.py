"""Staging: the screened notebooks of one submission, written where nbgrader reads them.

``stage`` screens every notebook of a submission (``tools.grading.screening``) and notes
what is missing or extra; ``write_stage`` writes the result as nbgrader's submitted tree.
Nothing of the submission is followed or read whole (``tools.common.safe_files``, within the limits of
``tools.grading.student_files``): a
notebook that is a link or a special file is rejected, another file that is one is left
out (each with its reason), and only regular files within their size limits are read or
copied. Its ``timestamp.txt`` (when it was handed in) is read apart
(``tools.grading.lateness``): nbgrader gets a clean one, or none with the reason. A name
the student chose is quoted in its reason, never put first, and like reasons are counted
past the first few (``tools.common.text``): 20,000 files make four reasons, not 20,000.
"""

from __future__ import annotations

import datetime
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from tools.common.text import counted, quoted
from tools.common import safe_files as files
from tools.grading import lateness, student_files as limits
from tools.grading.screening import Screened, screen
from tools.grading.settings import Settings

@dataclass
class Staged:
    """A submission ready for nbgrader: its screened notebooks and what screening found."""

    assignment: str
    student: str
    folder: Path  # where the student's files are
    screened: dict[str, Screened]
    reasons: list[str]
    handed_in: bool
    suspects: list[str] = field(default_factory=list)  # notebooks a batch run failed on
    batch_error: str = ""  # nbgrader's error when a batch failed on it
    sources: dict = field(default_factory=dict)  # the source notebook of each name
    screen_seconds: float = 0.0
    files: list[str] = field(default_factory=list)  # its other regular files, copied for it
    splits: dict = field(default_factory=dict)  # the calls of each source's tests (hidden)
    numbers: dict = field(default_factory=dict)  # the student's numbers, per notebook (judgement)
    choices: dict = field(default_factory=dict)  # the letters of each multiple-choice answer
    timestamp: datetime.datetime | None = None  # when it was handed in (naive UTC)
    seat: int | None = None  # the student's seat on the class list (memkit.class_list)


def stage(
    settings: Settings, assignment: str, student: str, sources: dict, releases: dict,
    splits: dict | None = None,
) -> Staged:
    """Screen the notebooks of one submission (``screen``); note what is missing or extra.

    ``splits``: the calls of each source notebook's tests (``tools.grading.hidden``)."""
    started = time.monotonic()
    folder = settings.submitted / student / assignment
    seat = settings.seats.get(student)
    reasons: list[str] = []
    screened: dict[str, Screened] = {}
    listing = dict(files.entries(folder))
    present = {name for name in listing if name.endswith(".ipynb")}
    for name in sorted(sources):
        if name not in present:
            reasons.append(f"{name}: not handed in: scored 0")
            continue
        try:
            raw = files.read_bounded(folder / name, limits.MAX_NOTEBOOK)
        except files.Refused as exc:
            reasons.append(f"{name}: not a notebook ({exc}): scored 0")
            continue
        except OSError as exc:
            reasons.append(f"{name}: not a notebook (it cannot be read: {exc.strerror}): scored 0")
            continue
        try:
            result = screen(raw.decode("utf-8", errors="replace"), sources[name],
                            releases[name], (splits or {}).get(name), student, seat)
        except Exception as exc:  # noqa: BLE001 - whatever it holds, it is this notebook's
            reasons.append(f"{name}: not a notebook (it cannot be screened: "
                           f"{type(exc).__name__}): scored 0")
            continue
        reasons += [f"{name}: {r}" for r in result.reasons]
        if not result.rejected:
            screened[name] = result
    reasons += counted([f"the notebook {quoted(extra)} is no part of {assignment}: left out"
                        for extra in sorted(present - set(sources))],
                       f"notebooks that are no part of {assignment} left out")
    timestamp, why = lateness.read_timestamp(folder)
    if why:
        reasons.append(why)
    kept, total = [], 0
    left_out: dict[str, list[str]] = {}  # why: the names left out for it
    for name, what in sorted(listing.items()):
        if name.endswith(".ipynb") or what == "dir" or name == lateness.TIMESTAMP:
            continue
        if what != "file":
            left_out.setdefault(files.refusal(what), []).append(name)
            continue
        try:
            size = (folder / name).lstat().st_size
        except OSError:
            continue
        if size > limits.MAX_FILE or total + size > limits.MAX_FILES_TOTAL or len(kept) >= limits.MAX_FILES:
            left_out.setdefault("over the size or count limit of a submission's files",
                                []).append(name)
            continue
        kept.append(name)
        total += size
    for why, names in left_out.items():
        reasons += counted([f"the file {quoted(name)} is {why}: left out" for name in names],
                           f"files left out ({why})")
    staged = Staged(
        assignment, student, folder, screened, reasons, bool(screened), sources=sources,
        files=kept, splits=dict(splits or {}), timestamp=timestamp, seat=seat,
    )
    staged.screen_seconds = time.monotonic() - started
    return staged


def write_stage(staged: Staged, into: Path) -> None:
    """Write a staged submission as ``into/<student>/<assignment>/`` for nbgrader."""
    target = into / staged.student / staged.assignment
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in staged.files:  # regular files when staged: copied only if they still are
        try:
            files.copy_bounded(staged.folder / name, target / name, limits.MAX_FILE)
        except OSError:
            pass
    for name, s in staged.screened.items():
        nbformat.write(nbformat.from_dict(s.notebook), target / name)
    if staged.timestamp is not None:
        lateness.write_timestamp(target, staged.timestamp)
