"""Stage 2, staging: the screened notebooks of one submission, written where nbgrader reads them.

``stage`` screens every notebook of a submission (``tools.grading.screening``) and notes
what is missing or extra; ``write_stage`` writes the result as nbgrader's submitted tree.

Depends on: ``tools.grading.screening``, ``tools.grading.settings``.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

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


def stage(
    settings: Settings, assignment: str, student: str, sources: dict, releases: dict
) -> Staged:
    """Screen the notebooks of one submission (``screen``); note what is missing or extra."""
    started = time.monotonic()
    folder = settings.submitted / student / assignment
    reasons: list[str] = []
    screened: dict[str, Screened] = {}
    present = {p.name for p in folder.glob("*.ipynb")}
    for name in sorted(sources):
        if name not in present:
            reasons.append(f"{name}: not handed in: scored 0")
            continue
        raw = (folder / name).read_bytes().decode("utf-8", errors="replace")
        result = screen(raw, sources[name], releases[name])
        reasons += [f"{name}: {r}" for r in result.reasons]
        if not result.rejected:
            screened[name] = result
    for extra in sorted(present - set(sources)):
        reasons.append(f"{extra}: not a notebook of {assignment}: ignored")
    staged = Staged(
        assignment, student, folder, screened, reasons, bool(screened), sources=sources
    )
    staged.screen_seconds = time.monotonic() - started
    return staged


def write_stage(staged: Staged, into: Path) -> None:
    """Write a staged submission as ``into/<student>/<assignment>/`` for nbgrader."""
    target = into / staged.student / staged.assignment
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for item in staged.folder.iterdir():
        if item.is_file() and item.suffix != ".ipynb":
            shutil.copy(item, target / item.name)
    for name, s in staged.screened.items():
        nbformat.write(nbformat.from_dict(s.notebook), target / name)
