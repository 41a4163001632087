"""Copied work found: the pairs of a class's submissions whose answers are unusually alike.

After grading, for each assignment, ``report`` compares every pair of submissions and
writes an instructor-only page, ``autograded/_similarity/<assignment>.html`` (the folder
name cannot be a student id, which starts with a letter or digit; nothing under
``autograded/`` is released: ``nbgrader release_feedback`` sends ``feedback/`` only).

**What is compared.** A submission's code answers: its answer cells (nbgrader's
``solution`` cells) and the code cells the student added, from the autograded notebooks
(screened, locked cells restored). The released notebooks' code (the template: set-up
cells, the stubs and any code an answer cell starts with) is left out: its lines are
taken out of each answer (also renamed: lines are compared as copydetect sees them), and its fingerprints are copydetect's *boilerplate*, so two
students who only kept the template are not alike.
Each answer is compared as a whole, whatever the order of the cells, up to its first
``COMPARED_CHARS`` characters (what a megabyte of typed-in numbers beyond that adds is
seconds of Pygments, not evidence).

**How.** copydetect (PyPI; Stanford MOSS's winnowing: Schleimer, Wilkerson and Aiken,
SIGMOD 2003): the code is tokenized by Pygments with every name, function and string
replaced by one letter, so renamed variables do not hide a copy; fingerprints are the
hashes of its k-grams of ``NOISE`` characters, winnowed (one kept in each window, so any
common run of ``GUARANTEE`` characters is found); the similarity of a pair is the share
of each side's tokens in runs the other shares. A pair is *flagged* when both sides share
at least ``THRESHOLD`` of their answers and that is also unusual for these two students:
at least ``LIFT`` more than each of them shares with their typical classmate (the median
of their pairs). Honest students who solve the same questions the same way share much
with everyone; copiers share far more with each other than with anyone else. In a class
of fewer than ``MIN_CLASS`` submissions compared, the share alone. Chosen
against a simple alternative by ``benchmarks/similarity.py`` (README, *Copied work*).

**What the page shows.** The flagged pairs first, then the closest pairs of the class
(the ten most alike), the flagged and the three closest with both students' shared code
marked (up to ``SHOWN_CHARS`` characters a side), and the class's median. It shows student code, so it is built from escaped text only and cleaned
(``tools.common.sanitize.clean_html``) as every page the grader writes: nothing in it runs.

Stage: after the feedback, before the export (``cli`` lists the pages in the summary).
"""

from __future__ import annotations

import functools
import html
import io
import itertools
import logging
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from tools.common import nbgrader_cells
from tools.grading.cells import cell_text, read_nb
from tools.grading.outcome import Outcome
from tools.common.sanitize import clean_html
from tools.grading.settings import Settings

NOISE = 40  # characters of filtered code in a fingerprint's k-gram (copydetect's noise threshold)
GUARANTEE = 40  # every common run this long is found: a window of one, every k-gram kept (no winnowing, whose pick depends on Python's per-process string hash)
THRESHOLD = 0.85  # both sides share at least this much of their answers
LIFT = 0.20  # ... and that is this much more than each of the two shares with a typical classmate
MIN_CLASS = 8  # fewer submissions than this tell nothing of a class's spread: THRESHOLD alone
SHOWN = 10  # the closest pairs shown besides the flagged ones
SHOWN_CHARS = 20_000  # of each side's code on the page
COMPARED_CHARS = 200_000  # of each submission's answers (an honest one has a few thousand;
# Pygments takes seconds over a megabyte typed in)
FOLDER = "_similarity"  # under autograded/: no student id starts with "_"
TEMPLATE_LINE = 2_000  # a student's line longer than this is their own, never shaped (a
# template line is under a hundred characters; shaping a megabyte line takes Pygments
# seconds, and the shapes are kept)


def answer_code(nb: dict, template: str = "") -> str:
    """The code a student wrote in a notebook: its code answer cells and the code cells it
    added (no nbgrader metadata), one after the other, without the lines of ``template``
    (a stub kept, a set-up line copied)."""
    given = {_shape(line) for line in template.splitlines() if line.strip()}
    parts = []
    for cell in nb.get("cells", []) if isinstance(nb, dict) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        meta = nbgrader_cells.metadata(cell)
        if nbgrader_cells.is_solution(cell) or not meta:
            lines = [ln for ln in cell_text(cell).split("\n")
                     if len(ln) > TEMPLATE_LINE or _shape(ln) not in given]
            parts.append("\n".join(lines))
    return "\n\n".join(p for p in parts if p.strip())


@functools.lru_cache(maxsize=65536)
def _shape(line: str) -> str:
    """A line as copydetect sees it (names, functions and strings one letter each), or the
    line itself when that is too short to tell lines apart. (Kept by line: the template's
    lines and the lines students share come again in every submission.)"""
    from copydetect.utils import filter_code

    text = line.strip()
    shape = filter_code(text, "line.py")[0] if text else ""
    return shape if len(shape) >= 10 else text


def template_code(releases: list[dict]) -> str:
    """Every code cell of the released notebooks: what no student wrote."""
    return "\n\n".join(cell_text(c) for nb in releases for c in nb.get("cells", [])
                       if c.get("cell_type") == "code")


@dataclass
class Pair:
    """Two submissions and how much of each one's answers the other shares."""

    first: str
    second: str
    shares: tuple[float, float]  # of the first's tokens, of the second's
    slices: tuple = ((), ())  # the shared runs of each side's code (start, end)
    flagged: bool = False

    @property
    def score(self) -> float:
        return min(self.shares)


@dataclass
class Comparison:
    """The pairs of one assignment's class, most alike first, and the class's spread."""

    assignment: str
    pairs: list[Pair] = field(default_factory=list)
    median: float = 0.0
    typical: dict[str, float] = field(default_factory=dict)  # each student's median pair
    codes: dict[str, str] = field(default_factory=dict)

    def lift(self, pair: Pair) -> float:
        """How much more the two share than each shares with a typical classmate."""
        return min(pair.score - self.typical.get(pair.first, 0.0),
                   pair.score - self.typical.get(pair.second, 0.0))

    @property
    def flagged(self) -> list[Pair]:
        return [p for p in self.pairs if p.flagged]


def _fingerprints(codes: dict[str, str], template: str) -> dict:
    from copydetect import CodeFingerprint

    logging.getLogger().setLevel(max(logging.getLogger().level, logging.ERROR))
    window = GUARANTEE - NOISE + 1
    boiler = CodeFingerprint("template.py", NOISE, window, fp=io.StringIO(template))
    boilerplate = list(boiler.hashes)
    found = {}
    for student, code in codes.items():
        fp = CodeFingerprint(f"{student}.py", NOISE, window, boilerplate=boilerplate,
                             fp=io.StringIO(code[:COMPARED_CHARS]))
        if fp.token_coverage > 0:  # nothing of its own: not compared
            found[student] = fp
    return found


def compare(assignment: str, codes: dict[str, str], template: str) -> Comparison:
    """Every pair of ``codes`` (student -> their answers' code) compared, with the
    ``template`` left out; the unusual pairs flagged."""
    from copydetect import compare_files

    prints = _fingerprints(codes, template)
    pairs = []
    for a, b in itertools.combinations(sorted(prints), 2):
        _overlap, shares, slices = compare_files(prints[a], prints[b])
        pairs.append(Pair(a, b, (float(shares[0]), float(shares[1])), slices))
    pairs.sort(key=lambda p: (-p.score, p.first, p.second))
    scores = [p.score for p in pairs]
    result = Comparison(assignment, pairs, codes={s: codes[s] for s in prints})
    if scores:
        result.median = statistics.median(scores)
    for student in prints:
        own = [p.score for p in pairs if student in (p.first, p.second)]
        result.typical[student] = statistics.median(own) if own else 0.0
    small = len(prints) < MIN_CLASS
    for p in pairs:
        p.flagged = p.score >= THRESHOLD and (small or result.lift(p) >= LIFT)
    return result


def class_codes(settings: Settings, assignment: str, students: list[str], template: str = ""
                ) -> dict[str, str]:
    """Each graded student's answers' code, from the autograded notebooks."""
    codes = {}
    for student in students:
        folder = settings.root / "autograded" / student / assignment
        parts = []
        for path in sorted(folder.glob("*.ipynb")):
            if path.is_symlink() or not path.is_file():
                continue
            try:
                parts.append(answer_code(read_nb(path), template))
            except (OSError, ValueError, RecursionError):
                continue
        codes[student] = "\n\n".join(p for p in parts if p)
    return codes


def report(settings: Settings, outcomes: list[Outcome], releases: dict[str, list[dict]]
           ) -> dict[str, tuple[Path, Comparison]]:
    """The page of each assignment graded (``releases``: its released notebooks)."""
    written = {}
    for assignment in sorted({o.assignment for o in outcomes}):
        students = sorted({o.student for o in outcomes
                           if o.assignment == assignment and o.status != "skipped"})
        if len(students) < 2 or assignment not in releases:
            continue
        template = template_code(releases[assignment])
        result = compare(assignment, class_codes(settings, assignment, students, template),
                         template)
        path = settings.root / "autograded" / FOLDER / f"{assignment}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page(result))
        written[assignment] = (path, result)
    return written


# -- the page ----------------------------------------------------------------------
def _marked(code: str, slices) -> str:
    """The code, escaped, with the shared runs in <mark>."""
    starts, ends = (list(slices[0]), list(slices[1])) if len(slices) == 2 else ([], [])
    out, at = [], 0
    for start, end in sorted(zip(map(int, starts), map(int, ends))):
        start, end = max(start, at), min(end, len(code))
        if start >= end:
            continue
        out.append(html.escape(code[at:start]))
        out.append(f"<mark>{html.escape(code[start:end])}</mark>")
        at = end
    out.append(html.escape(code[at:]))
    return "".join(out)


def _pair_html(result: Comparison, pair: Pair) -> str:
    """Both sides of a pair, each side's code shown up to ``SHOWN_CHARS`` characters (a
    submission can hold a megabyte of typed-in numbers; the rest is in its notebook)."""
    sides = []
    for who, share, slices in ((pair.first, pair.shares[0], pair.slices[0]),
                               (pair.second, pair.shares[1], pair.slices[1])):
        code = result.codes.get(who, "")
        rest = len(code) - SHOWN_CHARS
        more = (f"<p>... and {rest:,} more characters, not shown: the notebooks are in "
                f"autograded/{html.escape(who)}/{html.escape(result.assignment)}/.</p>"
                if rest > 0 else "")
        sides.append(f"<div class=\"side\"><h4>{html.escape(who)}: {share:.0%} shared</h4>"
                     f"<pre>{_marked(code[:SHOWN_CHARS], slices)}</pre>{more}</div>")
    title = f"{html.escape(pair.first)} and {html.escape(pair.second)}: {pair.score:.0%}"
    return f"<section class=\"pair\"><h3>{title}</h3>{''.join(sides)}</section>"


STYLE = """body{font-family:sans-serif;margin:2em;max-width:90em}
.pair{border-top:1px solid #999;margin-top:1.5em}.side{display:inline-block;vertical-align:top;
width:48%;margin-right:1%}pre{white-space:pre-wrap;font-size:0.85em;background:#f6f6f6;
padding:0.5em}mark{background:#ffd54f}td,th{padding:0.2em 0.8em;text-align:left}"""


def page(result: Comparison) -> str:
    """The report of one assignment: escaped text only, then cleaned."""
    name = html.escape(result.assignment)
    flagged = result.flagged
    closest = [p for p in result.pairs if not p.flagged][:SHOWN]
    rows = "".join(
        f"<tr><td>{html.escape(p.first)}</td><td>{html.escape(p.second)}</td>"
        f"<td>{p.shares[0]:.0%}</td><td>{p.shares[1]:.0%}</td><td>{result.lift(p):+.0%}</td>"
        f"<td>{'flagged' if p.flagged else ''}</td></tr>" for p in flagged + closest)
    verdict = (f"{len(flagged)} pair(s) flagged: {', '.join(f'{p.first} and {p.second}' for p in flagged)}."
               if flagged else "No pair is unusually alike.")
    body = (
        f"<h1>Similar answers: {name}</h1>"
        "<p>For the instructor only (never released). Each pair's share is the part of a "
        "student's own code (answer cells and added cells, the released template left out) "
        f"found in the other's (of its first {COMPARED_CHARS:,} characters), names and strings "
        "aside (copydetect). A pair is flagged when "
        f"both share at least {THRESHOLD:.0%} and that is at least {LIFT:.0%} more than each "
        "shares with their typical classmate (their median pair; with at least "
        f"{MIN_CLASS} submissions). The class's median pair: {result.median:.0%}, of "
        f"{len(result.pairs)} pairs of {len(result.codes)} submissions. Alike is not proof: "
        "read the code.</p>"
        f"<p><strong>{html.escape(verdict)}</strong></p>"
        "<table><tr><th>student</th><th>student</th><th>share of the first</th>"
        "<th>share of the second</th><th>above their typical classmate</th><th>verdict</th>"
        f"</tr>{rows}</table>"
        + "".join(_pair_html(result, p) for p in flagged + closest[:3]))
    document = (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Similar answers: "
                f"{name}</title><style>{STYLE}</style></head><body>{body}</body></html>")
    return clean_html(document)


def summary_lines(written: dict[str, tuple[Path, Comparison]]) -> list[str]:
    """The summary's lines: each page, and the pairs it flags."""
    lines = []
    for assignment, (path, result) in sorted(written.items()):
        pairs = ", ".join(f"{p.first} and {p.second} ({p.score:.0%})" for p in result.flagged)
        lines.append(f"  {assignment}: {pairs or 'no pair unusually alike'}  ({path})")
    return lines
