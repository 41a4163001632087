"""How long a session takes, counted from its material when the book is built.

Each session of ``_toc.yml`` (a part captioned "Session N · title") reads its chapters and
ends with its assignment (``exercises/session-N/``). Its time is the sum of

* **reading**: the words of its chapters' prose (``prose_words``: no front matter, code,
  displayed maths, directive names or options) at ``WORDS_PER_MINUTE``;
* **figures**: its live figures (each cell ending in ``figures.get("id")``), at
  ``MINUTES_PER_FIGURE`` each (the prompt read, the controls tried, the reading compared);
* **exercises**: the points of its exit test and exercises (the graded cells of the
  release), at ``MINUTES_PER_POINT`` each;

each rounded up to ``STEP`` minutes. As a Sphinx extension it gives the pages MyST
substitutions: ``{{ session_time_N }}`` (a session's line, on the session page that
``tools.release.session_pages`` writes) and ``{{ study_times }}`` (every session's time,
a table in Chapter 0), so the times follow every edit of the material.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from tools import ROOT
from tools.common import nbgrader_cells
from tools.book.toc import toc_parts

WORDS_PER_MINUTE = 100  # mathematical prose, read with a pencil
MINUTES_PER_FIGURE = 3
MINUTES_PER_POINT = 3
STEP = 5
SESSION = re.compile(r"^Session (\d+)\s*·\s*(.+)$")
FIGURE = re.compile(r'^figures\.get\(\s*"[a-z0-9-]+"\s*\)\s*$', re.M)
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)
_FENCE = re.compile(r"^(```|~~~)\{?(code-cell|python|text|math)[^\n]*\n.*?^\1\s*$", re.S | re.M)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_DISPLAY = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE = re.compile(r"\$[^$\n]+\$")
_DIRECTIVE = re.compile(r"^[`:~]{3,}\{[a-z-]+\}", re.M)
_OPTION = re.compile(r"^:[a-z-]+:.*$", re.M)
_ROLE = re.compile(r"\{[a-z:-]+\}`([^`<]*)(?:<[^`]*>)?`")
_TARGET = re.compile(r"^\([a-z0-9-]+\)=\s*$", re.M)


def sessions(root: Path = ROOT) -> list[tuple[int, str, list[str]]]:
    """(number, title, pages) of each session part of ``_toc.yml``, its session page left out."""
    found = []
    for caption, files in toc_parts(root):
        m = SESSION.match(caption)
        if m:
            pages = [f for f in files if not Path(f).name.startswith("session-")]
            found.append((int(m.group(1)), m.group(2).strip(), pages))
    return found


def prose_words(text: str) -> int:
    """The words a reader reads on a chapter's page: its text without the front matter,
    code cells, comments, displayed maths, directive names and options, and targets (a
    role counts the words it shows, an inline formula one)."""
    for pattern, by in ((_FRONT, ""), (_FENCE, ""), (_COMMENT, ""), (_DISPLAY, ""),
                        (_INLINE, " x "), (_DIRECTIVE, ""), (_OPTION, ""), (_TARGET, ""),
                        (_ROLE, r"\1")):
        text = pattern.sub(by, text)
    return len(WORD.findall(text))


def figures(text: str) -> int:
    """The live figures of a chapter: its cells ending in ``figures.get("id")``."""
    return len(FIGURE.findall(text))


def points(root: Path, assignment: str) -> float:
    """The points of an assignment as released (its graded cells)."""
    total = 0.0
    for path in sorted((Path(root) / "exercises" / assignment).glob("*.ipynb")):
        for cell in json.loads(path.read_text()).get("cells", []):
            if nbgrader_cells.is_grade(cell):
                total += nbgrader_cells.points(cell)
    return total


def _rounded(minutes: float) -> int:
    return STEP * math.ceil(minutes / STEP)


@dataclass
class SessionTime:
    """One session's material, counted, and the minutes it takes."""

    number: int
    title: str
    words: int
    figures: int
    points: float

    @property
    def reading(self) -> int:
        return _rounded(self.words / WORDS_PER_MINUTE)

    @property
    def watching(self) -> int:
        return _rounded(self.figures * MINUTES_PER_FIGURE)

    @property
    def exercising(self) -> int:
        return _rounded(self.points * MINUTES_PER_POINT)

    @property
    def total(self) -> int:
        return self.reading + self.watching + self.exercising


def session_times(root: Path = ROOT) -> list[SessionTime]:
    """Every session's material, counted from ``root`` (its toc, chapters and release)."""
    root = Path(root)
    times = []
    for number, title, pages in sessions(root):
        texts = [(root / f"{p}.md").read_text() for p in pages if (root / f"{p}.md").is_file()]
        times.append(SessionTime(number, title, sum(prose_words(t) for t in texts),
                                 sum(figures(t) for t in texts),
                                 points(root, f"session-{number}")))
    return times


def duration(minutes: int) -> str:
    """``95`` as ``1 h 35 min``, ``40`` as ``40 min``."""
    hours, rest = divmod(int(minutes), 60)
    return f"{hours} h {rest:02d} min" if hours else f"{rest} min"


def time_line(t: SessionTime) -> str:
    """A session page's line: the three parts, and what each was counted from."""
    if t.figures:
        plural = "s" if t.figures != 1 else ""
        figures_part = f"{duration(t.watching)} with its {t.figures} live figure{plural}, "
    else:
        figures_part = ""
    return (f"**Time:** about {duration(t.total)}: {duration(t.reading)} of reading "
            f"(at {WORDS_PER_MINUTE} words a minute), {figures_part}"
            f"{duration(t.exercising)} for the exit test and exercises ({t.points:g} points); "
            "{ref}`how it is counted <study-times>`.")


def table(times: list[SessionTime]) -> str:
    """Chapter 0's table of every session's time, and how it was counted."""
    rows = ["| Session | In all | Reading | Figures | Exit test and exercises |",
            "| --- | --- | --- | --- | --- |"]
    for t in times:
        figures_cell = f"{duration(t.watching)} ({t.figures})" if t.figures else "none"
        rows.append(f"| {{ref}}`Session {t.number} <session-{t.number}>` "
                    f"| **{duration(t.total)}** | {duration(t.reading)} | {figures_cell} "
                    f"| {duration(t.exercising)} ({t.points:g} points) |")
    total = sum(t.total for t in times)
    rows.append(f"| The course | **{duration(total)}** | | | |")
    note = (f"The times are counted from the material each time the book is built: "
            f"{WORDS_PER_MINUTE} words of prose a minute (code and displayed formulas not "
            f"counted), {MINUTES_PER_FIGURE} minutes for each live figure, "
            f"{MINUTES_PER_POINT} minutes for each point of the two graded notebooks, each "
            f"part rounded up to {STEP} minutes. Take them as a plan, not a rule: a first "
            "reading with a pencil is slower, a second one faster.")
    return "\n".join(rows) + "\n\n" + note + "\n"


def texts(root: Path = ROOT) -> dict[str, str]:
    """The pages' substitutions counted from the course folder ``root``: each session's
    line (``session_time_N``) and Chapter 0's table (``study_times``); the lab fills them
    in too (``tools.lab.contents``)."""
    times = session_times(root)
    return {"study_times": table(times), **{f"session_time_{t.number}": time_line(t) for t in times}}


def substitutions(app, config) -> None:
    """The pages' substitutions (:func:`texts`) for the book's build."""
    config.myst_substitutions = {**(config.myst_substitutions or {}), **texts(Path(app.srcdir))}


def setup(app):
    app.connect("config-inited", substitutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
