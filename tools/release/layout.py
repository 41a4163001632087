"""Where the course's assignments live: the folders and how they are named.

solutions/session-N/*.ipynb   nbgrader's "source" (``SOURCE``)
solutions/session-N/answer_key.py   its reference code (``REFERENCE``), never released
exercises/session-N/*.ipynb   nbgrader's "release" (``RELEASE``), generated

The bottom of the assignment tools: ``tools.release.assignments`` (the release) and
``tools.release.session_pages`` (the book's pages) both read it; it depends on nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from tools import ROOT

SOURCE = "solutions"
RELEASE = "exercises"
# the solutions' reference code: the answer keys the hidden tests compute each
# student's expected values with, beside the notebooks of solutions/session-N/; nbgrader
# leaves it out of the release and of the autograded folders (nbgrader_config.py's
# CourseDirectory.ignore), and the release check refuses it in exercises/
REFERENCE = "answer_key.py"
ASSIGNMENT = re.compile(r"^session-(\d+)$")


def assignments(root: Path = ROOT, where: str = SOURCE) -> list[str]:
    """The assignment folders (session-N holding at least one notebook), in session order."""
    base = Path(root) / where
    found = [
        p.name
        for p in base.glob("session-*")
        if p.is_dir() and ASSIGNMENT.match(p.name) and any(p.glob("*.ipynb"))
    ]
    return sorted(found, key=lambda name: int(ASSIGNMENT.match(name).group(1)))


def notebooks(root: Path, assignment: str, where: str = SOURCE) -> list[Path]:
    """The notebooks of one assignment, sorted by name."""
    return sorted((Path(root) / where / assignment).glob("*.ipynb"))
