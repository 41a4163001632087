"""How long a session takes, counted from its material when the book is built.

Each session of ``_toc.yml`` (a part captioned "Session N · title") reads its chapters and
ends with its assignment (``exercises/session-N/``). Its time is the sum of

* **reading**: the words of its chapters' prose (``prose_words``: no front matter, code,
  displayed maths or directive options) at ``WORDS_PER_MINUTE``;
* **figures**: its live figures (each cell ending in ``figures.get("id")``), at
  ``MINUTES_PER_FIGURE`` each (its prompt read, its controls tried, its reading compared);
* **exercises**: the points of its exit test and exercises (the graded cells of the
  release), at ``MINUTES_PER_POINT`` each;

each rounded up to ``STEP`` minutes. As a Sphinx extension it gives the pages MyST
substitutions: ``{{ session_time_N }}`` (a session's line, on its session page, which
``tools.release.session_pages`` writes) and ``{{ study_times }}`` (the table of every
session, in Chapter 0), so that the times follow every edit of the material.

Depends on: ``tools.book.toc`` (the sessions' parts).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from tools import ROOT
from tools.book.toc import toc_parts

WORDS_PER_MINUTE = 100  # mathematical prose, read with a pencil
MINUTES_PER_FIGURE = 3
MINUTES_PER_POINT = 4
STEP = 5
SESSION = re.compile(r"^Session (\d+)\s*·\s*(.+)$")
FIGURE = re.compile(r'^figures\.get\(\s*"[a-z0-9-]+"\s*\)\s*$', re.M)
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)
_FENCE = re.compile(r"^(```|~~~)\{?(code-cell|python|text|math)[^\n]*\n.*?^\1\s*$", re.S | re.M)
_DISPLAY = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE = re.compile(r"\$[^$\n]+\$")
_OPTION = re.compile(r"^:[a-z-]+:.*$", re.M)
_ROLE = re.compile(r"\{[a-z-]+\}`([^`<]*)(?:<[^`]*>)?`")
_TARGET = re.compile(r"^\([a-z0-9-]+\)=\s*$", re.M)


def sessions(root: Path = ROOT) -> list[tuple[int, str, list[str]]]:
    """(number, title, pages) of each session part of ``_toc.yml``, the session page left out."""
    found = []
    for caption, files in toc_parts(root):
        m = SESSION.match(caption)
        if m:
            pages = [f for f in files if not Path(f).name.startswith("session-")]
            found.append((int(m.group(1)), m.group(2).strip(), pages))
    return found


def prose_words(text: str) -> int:
    """The words a reader reads on a chapter's page: its text without the front matter,
    code cells, displayed maths, directive options and targets (a role counts its words,
    an inline formula one)."""
    text = _FRONT.sub("", text)
    text = _FENCE.sub("", text)
    text = _DISPLAY.sub("", text)
    text = _INLINE.sub(" x ", text)
    text = _OPTION.sub("", text)
    text = _TARGET.sub("", text)
    text = _ROLE.sub(r"\1", text)
    return len(WORD.findall(text))


def figures(text: str) -> int:
    """The live figures of a chapter: its cells ending in ``figures.get("id")``."""
    return len(FIGURE.findall(text))


def points(root: Path, assignment: str) -> float:
    """The points of an assignment as released (its graded cells)."""
    total = 0.0
    for path in sorted((Path(root) / "exercises" / assignment).glob("*.ipynb")):
        for cell in json.loads(path.read_text()).get("cells", []):
            meta = cell.get("metadata", {}).get("nbgrader", {}) or {}
            if meta.get("grade"):
                total += float(meta.get("points", 0) or 0)
    return total


def _rounded(minutes: float) -> int:
    return STEP * math.ceil(minutes / STEP)


@dataclass
class SessionTime:
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
    """Every session's material, counted."""
    root = Path(root)
    times = []
    for number, title, pages in sessions(root):
        texts = [(root / f"{p}.md").read_text() for p in pages if (root / f"{p}.md").is_file()]
        times.append(SessionTime(number, title, sum(prose_words(t) for t in texts),
                                 sum(figures(t) for t in texts),
                                 points(root, f"session-{number}")))
    return times


def duration(minutes: int) -> str:
    """``95`` as ``1 h 35 min``."""
    hours, rest = divmod(int(minutes), 60)
    return f"{hours} h {rest:02d} min" if hours else f"{rest} min"


def time_line(t: SessionTime) -> str:
    """The session page's line: the three parts and how each was counted."""
    return (f"**Time:** about {duration(t.total)}: {duration(t.reading)} of reading "
            f"(at {WORDS_PER_MINUTE} words a minute), {duration(t.watching)} with its "
            f"{t.figures} live figure{'s' if t.figures != 1 else ''} ({MINUTES_PER_FIGURE} min "
            f"each) and {duration(t.exercising)} for the exit test and exercises "
            f"({t.points:g} points, {MINUTES_PER_POINT} min a point): "
            "{ref}`how it is counted <study-times>`.")


def table(times: list[SessionTime]) -> str:
    """Chapter 0's table of every session's time (``FRAGMENT``)."""
    rows = ["| Session | Reading | Figures | Exit test and exercises | In all |",
            "| --- | --- | --- | --- | --- |"]
    for t in times:
        rows.append(f"| {t.number} · {t.title} | {duration(t.reading)} "
                    f"| {duration(t.watching)} ({t.figures}) | {duration(t.exercising)} "
                    f"({t.points:g} points) | {duration(t.total)} |")
    total = sum(t.total for t in times)
    rows.append(f"| **The course** | | | | **{duration(total)}** |")
    note = (f"Counted from the material when the book is built (`tools/book/study_time.py`): {WORDS_PER_MINUTE} "
            f"words a minute of prose, {MINUTES_PER_FIGURE} minutes a live figure, "
            f"{MINUTES_PER_POINT} minutes a point of the graded notebooks, each rounded up to "
            f"{STEP} minutes. Take them as a plan, not a rule: a first reading with a pencil "
            "is slower, a second one faster.")
    return "\n".join(rows) + "\n\n" + note + "\n"


def substitutions(app, config) -> None:
    """The pages' substitutions: each session's line and Chapter 0's table."""
    times = session_times(Path(app.srcdir))
    config.myst_substitutions = {
        **(config.myst_substitutions or {}),
        "study_times": table(times),
        **{f"session_time_{t.number}": time_line(t) for t in times},
    }


def setup(app):
    app.connect("config-inited", substitutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
