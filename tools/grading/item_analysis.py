"""The item analysis of a graded class: how each question of an assignment behaved.

After grading, for each assignment, ``report`` reads every graded submission's score on
each autograded question (a test cell of the source notebooks, from the gradebook:
``tools.grading.gradebook``) and, for each multiple-choice question, the option the
student chose, and computes what the quiz statistics of Moodle and Canvas give:

* **facility**: the class's mean fraction of the question's points;
* **discrimination**: the corrected item-total correlation, Pearson's correlation over
  the students of the question's score ``x`` with the rest of their score on the
  assignment's autograded questions, ``r = corr(x, T - x)`` (the question itself left out
  of the total, so that a question does not correlate with itself); undefined where
  either side is the same for everyone;
* **option shares** (multiple choice): the share of the class that chose each option,
  counted in the solution's options: a student's letter is mapped back through the order
  that student saw (``memkit.variants.Numbers.options``, recorded in the report's
  ``numbers`` column as ``q4 letters a=2 b=0 ...``), so that "a" of a student whose first
  option was the solution's third counts for the solution's third (``c``); also the share
  of the *top third* of the class by the rest score (ties at its edge included).

**What is flagged** (the constants below; docs/instructor.md says how to read them):

* a question whose discrimination is below ``LOW_DISCRIMINATION`` (negative: the students
  who did well on the rest did worse on it; near zero: it tells the strong from the weak
  no better than chance), in a class of at least ``MIN_CLASS`` students (below it a
  correlation is too noisy to tell);
* a multiple-choice option that is not the key and that the top third chooses more
  often than the key (of a question with several right options, than its least chosen
  key): a likely wrong key; with a top third of at least ``MIN_TOP`` students;
* a question every student or no student gets (all the points, or none), in a class of
  at least ``MIN_ALL_OR_NONE`` students: it measures nothing (or its test rejects every
  answer).

The key of a multiple-choice question is the option (or options) its test cell compares
with: the one literal ``options.key(i)`` (or ``keys([i, ...])``) call of the test, what
the grader gives the points for. A question whose key is computed (drawn per student) has
its shares counted but no key, so no wrong-key flag. Matching questions (a dict of
letters) are analysed as any question, without option shares.

**Where the choices come from.** Judgement (``tools.grading.judgement``) calls ``chosen``
on the answers the kernel exported (``tools.grading.recheck``) before it removes them from
the autograded notebook: the letters of each multiple-choice answer, parsed within the
bounds of ``tools.grading.plain``, at most ``MAX_LETTERS`` short strings a question.

**What is written.** ``autograded/item-analysis.csv`` (a row per question, and per option
of a multiple-choice question; every text cell through ``tools.common.text.csv_row``: a
spreadsheet reads it as text) and an instructor-only page per assignment,
``autograded/_items/<assignment>.html`` (the folder cannot be a student id; nothing under
``autograded/`` is released), with a plot of the questions (matplotlib, an embedded PNG).
The page names no student and shows no student text; it is still built from escaped
text only and cleaned (``tools.common.sanitize.clean_html``) as every page the grader
writes.

Stage: after the gradebook guard (the scores it reads are the grader's), beside the
similarity report. It imports ``tools.grading.cells``, ``tools.common.nbgrader_cells``, ``tools.grading.hidden``,
``tools.grading.plain``, ``tools.common.sanitize``, ``tools.grading.outcome``,
``tools.grading.settings``, ``tools.grading.gradebook`` and ``tools.common.text``.
"""

from __future__ import annotations

import ast
import base64
import csv
import html
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tools.common.text import csv_row
from tools.grading import gradebook, hidden
from tools.common import nbgrader_cells
from tools.grading.cells import cell_text
from tools.grading.outcome import Outcome
from tools.grading.plain import Budget, parse, rebuild_within
from tools.common.sanitize import clean_html
from tools.grading.settings import Settings

LOW_DISCRIMINATION = 0.1  # below it: near zero (Ebel's rule of thumb: under 0.2 poor)
MIN_CLASS = 20  # students at least for a discrimination flag (sd of r near 1/sqrt(n - 3))
MIN_TOP = 3  # students at least in the top third for a wrong-key flag
MIN_ALL_OR_NONE = 5  # students at least for an "everyone" or "no one" flag
MAX_LETTERS = 26  # letters kept of one answer (a question has at most 26 options)
ANALYSED = ("ok", "repaired", "overruled", "incomplete")  # statuses of a handed-in submission
FOLDER = "_items"  # under autograded/: no student id starts with "_"
CSV_NAME = "item-analysis.csv"
LETTERS = "abcdefghijklmnopqrstuvwxyz"


# -- the multiple-choice questions of a source notebook ----------------------------------
@dataclass
class Choice:
    """A multiple-choice question: its options' label, the answer's name, the key."""

    label: str  # the question passed to ``numbers.options`` ("q4")
    answer: str  # the name the student's letter (or set of letters) is bound to
    texts: list[str]  # the options in the solution's order
    key: tuple[int, ...] | None  # the options the test gives the points for (None: computed)


def _options_cells(source_nb: dict) -> dict[str, tuple[str, list[str]]]:
    """``var -> (label, texts)`` of every ``var = numbers.options("label", [texts])``."""
    found = {}
    for cell in source_nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        try:
            tree = ast.parse(cell_text(cell))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            call = node.value if isinstance(node, ast.Assign) else None
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "options" and len(call.args) >= 2
                    and isinstance(call.args[0], ast.Constant)
                    and isinstance(call.args[1], ast.List)
                    and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
                texts = [e.value if isinstance(e, ast.Constant) else "" for e in call.args[1].elts]
                found[node.targets[0].id] = (str(call.args[0].value), [str(t) for t in texts])
    return found


def _key_calls(text: str, var: str) -> list[ast.Call]:
    """The calls ``var.key(...)`` and ``var.keys(...)`` of a cell."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr in ("key", "keys")
            and isinstance(n.func.value, ast.Name) and n.func.value.id == var]


def _literal(call: ast.Call) -> tuple[int, ...] | None:
    """The option indices of ``key(i)`` or ``keys([i, ...])`` when they are literals."""
    try:
        value = ast.literal_eval(call.args[0]) if call.args else None
    except ValueError:
        return None
    values = [value] if call.func.attr == "key" else value
    if not isinstance(values, (list, tuple, set)) or not all(type(v) is int for v in values):
        return None
    return tuple(sorted(values))


def choices(source_nb: dict) -> dict[str, Choice]:
    """The multiple-choice questions of a source notebook, by the grade id of their test.

    One is an answer cell ``name = var.key(...)`` (or ``var.keys([...])``) with ``var``
    an options cell's, and the test cell after it that reads ``name`` and calls ``var``.
    """
    options = _options_cells(source_nb)
    found: dict[str, Choice] = {}
    pending: dict[str, tuple[str, str]] = {}  # answer name -> (options variable, label)
    for cell in source_nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        text = cell_text(cell)
        if nbgrader_cells.is_solution(cell):
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            for node in tree.body:
                if (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Name)
                        and isinstance(node.value, ast.Call)
                        and isinstance(node.value.func, ast.Attribute)
                        and node.value.func.attr in ("key", "keys")
                        and isinstance(node.value.func.value, ast.Name)
                        and node.value.func.value.id in options):
                    var = node.value.func.value.id
                    pending[node.targets[0].id] = (var, options[var][0])
        elif nbgrader_cells.is_test(cell):
            read = hidden.names_read(text)
            for name, (var, label) in list(pending.items()):
                if name not in read:
                    continue
                calls = _key_calls(text, var)
                key = _literal(calls[0]) if len(calls) == 1 else None
                found[str(nbgrader_cells.grade_id(cell))] = Choice(label, name, options[var][1], key)
                del pending[name]
    return found


def chosen(source_nb: dict, exports: dict[str, str]) -> dict[str, list[str]]:
    """The letters of each multiple-choice answer as the kernel exported them, by test
    grade id (``exports``: ``tools.grading.recheck.read_exports``): a letter is a string
    of at most two characters, stripped; anything else chooses nothing."""
    found = {}
    for gid, choice in choices(source_nb).items():
        data = parse(exports.get(gid) or "") or {}
        values = data.get("values") if isinstance(data.get("values"), dict) else {}
        if choice.answer not in values:
            found[gid] = []
            continue
        try:
            value = rebuild_within(values[choice.answer], Budget())
        except Exception:  # noqa: BLE001 - what nothing could rebuild chooses nothing
            value = None
        items = [value] if isinstance(value, str) else (
            list(value) if isinstance(value, (list, tuple, set, frozenset)) else [])
        letters = [str(v).strip() for v in items[:MAX_LETTERS] if isinstance(v, str)]
        found[gid] = sorted({v for v in letters if 0 < len(v) <= 2})
    return found


LETTERS_LINE = re.compile(r"^(.+) letters ((?:\S=\d+)(?: \S=\d+)*)$")


def orders(numbers: str) -> dict[str, dict[str, dict[str, int]]]:
    """Each notebook's option orders from a report's ``numbers`` column (``exit-test.ipynb:
    seat 3; ...; q4 letters a=2 b=0 c=1 d=3 | exercises.ipynb: ...``): notebook -> the
    question's label -> letter -> the option of the solution's list it shows."""
    found: dict[str, dict[str, dict[str, int]]] = {}
    for part in (numbers or "").split(" | "):
        name, sep, line = part.partition(": ")
        if not sep:
            continue
        for piece in line.split("; "):
            m = LETTERS_LINE.match(piece.strip())
            if m:
                found.setdefault(name, {})[m.group(1)] = {
                    letter: int(index) for letter, index in
                    (pair.split("=") for pair in m.group(2).split())}
    return found


def solution_options(letters: list[str], order: dict[str, int]) -> set[int]:
    """The solution's options a student's ``letters`` name, through their ``order``
    (letter -> option; a letter is matched as written, else in either case)."""
    lower = {k.lower(): v for k, v in order.items()}
    return {order[x] if x in order else lower[x.lower()] for x in letters
            if x in order or x.lower() in lower}


# -- the statistics -------------------------------------------------------------------
@dataclass
class Item:
    """One question of an assignment and what the class did on it."""

    notebook: str
    grade_id: str
    points: float
    scores: np.ndarray  # points earned, one per student (the class's order)
    choice: Choice | None = None
    picked: list[set[int]] = field(default_factory=list)  # solution options, per student


@dataclass
class Result:
    """The statistics and flags of one question."""

    item: Item
    facility: float
    discrimination: float  # nan where undefined
    shares: list[float] = field(default_factory=list)  # per solution option, of the class
    top_shares: list[float] = field(default_factory=list)  # of the top third
    unanswered: float = 0.0  # share of the class that chose no option
    flags: list[str] = field(default_factory=list)


def correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's correlation of ``x`` and ``y``; nan when either is constant."""
    x, y = np.asarray(x, float) - np.mean(x), np.asarray(y, float) - np.mean(y)
    scale = math.sqrt(float(x @ x) * float(y @ y))
    return float(x @ y) / scale if scale > 1e-12 else float("nan")


def top_third(rest: np.ndarray) -> np.ndarray:
    """The students of the top third by ``rest`` (ties at its edge included), as a mask."""
    n = len(rest)
    if n == 0:
        return np.zeros(0, bool)
    edge = np.sort(rest)[::-1][math.ceil(n / 3) - 1]
    return rest >= edge


def analyse(items: list[Item]) -> list[Result]:
    """The statistics and flags of every question of one assignment's class (each item's
    ``scores`` over the same students, in the same order)."""
    if not items:
        return []
    scores = np.array([i.scores for i in items], dtype=float)  # (questions, students)
    total = scores.sum(axis=0)
    n = scores.shape[1]
    results = []
    for item, x in zip(items, scores):
        rest = total - x
        facility = float(np.mean(x) / item.points) if item.points > 0 and n else float("nan")
        r = correlation(x, rest) if n > 2 else float("nan")
        found = Result(item, facility, r)
        if n >= MIN_ALL_OR_NONE and item.points > 0:
            if np.all(x >= item.points):
                found.flags.append("everyone gets it")
            elif np.all(x <= 0):
                found.flags.append("no one gets it")
        if n >= MIN_CLASS and not found.flags and not math.isnan(r) and r < LOW_DISCRIMINATION:
            found.flags.append(f"{'negative' if r < 0 else 'near-zero'} discrimination")
        if item.choice is not None and n:
            _shares(found, rest)
        results.append(found)
    return results


def _shares(found: Result, rest: np.ndarray) -> None:
    """The option shares of the class and of its top third, and the wrong-key flag."""
    item, k = found.item, len(found.item.choice.texts)
    picked = (item.picked + [set()] * len(rest))[: len(rest)]
    chose = np.array([[j in p for j in range(k)] for p in picked], dtype=bool).reshape(len(rest), k)
    top = top_third(rest)
    found.shares = chose.mean(axis=0).tolist()
    found.top_shares = chose[top].mean(axis=0).tolist() if top.any() else [0.0] * k
    found.unanswered = float(np.mean(~chose.any(axis=1)))
    key = item.choice.key
    if key is None or top.sum() < MIN_TOP or not all(0 <= j < k for j in key):
        return
    weakest_key = min(found.top_shares[j] for j in key)
    above = [j for j in range(k) if j not in key and found.top_shares[j] > weakest_key]
    if above:
        found.flags.append("likely wrong key: the top third prefers "
                           + ", ".join(LETTERS[j] for j in above))


# -- the class's items, from the gradebook and the outcomes -------------------------------
def class_items(settings: Settings, assignment: str, outcomes: list[Outcome],
                sources: dict[str, dict]) -> tuple[list[str], list[Item]]:
    """The students analysed (their submission graded: a status of ``ANALYSED``) and each
    autograded question's scores from the gradebook, with the choices of the
    multiple-choice ones (``sources``: the source notebooks, by file name)."""
    mine = sorted((o for o in outcomes if o.assignment == assignment and o.status in ANALYSED),
                  key=lambda o: o.student)
    students = [o.student for o in mine]
    handed_in = set(students)
    tests = [(name, str(nbgrader_cells.grade_id(c)), nbgrader_cells.points(c))
             for name, nb in sorted(sources.items()) for c in nb.get("cells", [])
             if nbgrader_cells.is_test(c)]
    earned = {(s, name, gid): 0.0 for s in students for name, gid, _ in tests}
    from nbgrader.api import MissingEntry

    with gradebook.opened(settings.db_url) as gb:
        try:
            submissions = gb.find_assignment(assignment).submissions
        except MissingEntry:  # nothing of it was recorded: nothing to analyse
            return [], []
        for sub in submissions:
            if sub.student.id not in handed_in:
                continue
            for nb in sub.notebooks:
                for grade in nb.grades:
                    key = (sub.student.id, f"{nb.name}.ipynb", grade.name)
                    if key in earned:
                        earned[key] = float(grade.score or 0.0)
    asked = {name: choices(nb) for name, nb in sources.items()}
    items = []
    for name, gid, points in tests:
        choice = asked[name].get(gid)
        item = Item(name, gid, points, np.array([earned[(s, name, gid)] for s in students]),
                    choice)
        if choice is not None:
            for o in mine:
                order = orders(o.numbers).get(name, {}).get(choice.label, {})
                item.picked.append(solution_options(o.choices.get(name, {}).get(gid, []), order))
        items.append(item)
    return students, items


def report(settings: Settings, outcomes: list[Outcome], sources: dict[str, dict[str, dict]]
           ) -> dict[str, tuple[Path, int, list[Result]]]:
    """The page of each assignment graded and the CSV (``sources``: each assignment's
    source notebooks, by file name): assignment -> (page, students, results). The CSV
    keeps the rows of the assignments analysed before and not in this run."""
    written = {}
    rows = []
    for assignment in sorted({o.assignment for o in outcomes} & set(sources)):
        students, items = class_items(settings, assignment, outcomes, sources[assignment])
        if not students or not items:
            continue
        results = analyse(items)
        rows += csv_rows(assignment, len(students), results)
        path = settings.root / "autograded" / FOLDER / f"{assignment}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page(assignment, len(students), results))
        written[assignment] = (path, len(students), results)
    if written:
        path = settings.root / "autograded" / CSV_NAME
        write_csv(path, earlier_rows(path, set(written)) + rows)
    return written


# -- the CSV, the page, the summary ---------------------------------------------------
COLUMNS = ["assignment", "notebook", "question", "points", "students", "facility",
           "discrimination", "flags", "option", "option_text", "key", "share", "top_third_share"]


def _number(value: float) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.3f}"


def csv_rows(assignment: str, students: int, results: list[Result]) -> list[list]:
    """A row per question, then one per option of a multiple-choice question."""
    rows = []
    for r in results:
        head = [assignment, r.item.notebook, r.item.grade_id, f"{r.item.points:g}", students,
                _number(r.facility), _number(r.discrimination), "; ".join(r.flags)]
        rows.append(head + ["", "", "", "", ""])
        choice = r.item.choice
        for j, share in enumerate(r.shares):
            key = "" if choice.key is None else ("yes" if j in choice.key else "no")
            rows.append(head + [LETTERS[j], choice.texts[j][:200], key, _number(share),
                                _number(r.top_shares[j])])
        if r.shares:
            rows.append(head + ["none", "no option chosen", "", _number(r.unanswered), ""])
    return rows


def earlier_rows(path: Path, redone: set[str]) -> list[list]:
    """The rows of ``path`` (the grader's CSV, if it is one) of the assignments not in
    ``redone``; none when it is missing or not the grader's (other columns)."""
    try:
        with open(path, newline="") as fh:
            reader = csv.reader(fh)
            if next(reader, None) != COLUMNS:
                return []
            return [row for row in reader if len(row) == len(COLUMNS) and row[0] not in redone]
    except (OSError, csv.Error, UnicodeDecodeError):
        return []


def write_csv(path: Path, rows: list[list]) -> None:
    """``rows`` under ``COLUMNS``, ordered by assignment, each cell read as text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        writer.writerows(csv_row(row) for row in sorted(rows, key=lambda row: str(row[0])))


def plot(assignment: str, results: list[Result]) -> str:
    """The assignment's questions as a PNG (base64): discrimination against facility, and
    the option shares of each multiple-choice question (the key hatched)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mc = [r for r in results if r.shares]
    size = (11 if mc else 6, max(4.2, 0.5 * len(mc) + 1.5))
    fig, axes = plt.subplots(1, 2 if mc else 1, figsize=size, squeeze=False)
    ax = axes[0][0]
    for r in results:
        y = 0.0 if math.isnan(r.discrimination) else r.discrimination
        ax.scatter(r.facility, y, color="#c62828" if r.flags else "#1565c0", zorder=3)
        ax.annotate(_label(r, results), (r.facility, y), textcoords="offset points",
                    xytext=(4, 4), fontsize=8)
    ax.axhline(LOW_DISCRIMINATION, color="#999", linestyle="--", linewidth=1)
    ax.axhline(0, color="#333", linewidth=0.8)
    ax.set(xlim=(-0.05, 1.05), ylim=(-1.05, 1.05), xlabel="facility (mean fraction of the points)",
           ylabel="discrimination (item-rest correlation)", title=f"{assignment}: the questions")
    if mc:
        ax = axes[0][1]
        bars = [(f"{_label(r, results)} {who}", shares, r.item.choice.key or ())
                for r in mc for who, shares in (("class", r.shares), ("top third", r.top_shares))]
        for row, (_, shares, key) in enumerate(bars):
            left = 0.0
            for j, share in enumerate(shares):
                ax.barh(row, share, left=left, color=f"C{j % 10}", hatch="//" if j in key else None,
                        edgecolor="black", linewidth=0.5)
                if share >= 0.06:
                    ax.text(left + share / 2, row, LETTERS[j], ha="center", va="center", fontsize=8)
                left += share
        ax.set_yticks(range(len(bars)), [label for label, _, _ in bars])
        ax.set(xlim=(0, 1), xlabel="share choosing each option (hatched: the key)",
               title="options chosen, in the solution's order")
        ax.invert_yaxis()
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _label(r: Result, results: list[Result]) -> str:
    """A question's short name: its grade id, with its notebook where two share it."""
    gid = r.item.grade_id.removesuffix("-tests")
    twins = [x for x in results if x.item.grade_id == r.item.grade_id]
    return gid if len(twins) == 1 else f"{Path(r.item.notebook).stem} {gid}"


STYLE = """body{font-family:sans-serif;margin:2em;max-width:80em}td,th{padding:0.2em 0.8em;
text-align:left;vertical-align:top}tr.flagged{background:#fff3e0}img{max-width:100%}"""


def page(assignment: str, students: int, results: list[Result]) -> str:
    """The item analysis of one assignment: escaped text only, then cleaned."""
    name = html.escape(assignment)
    flagged = [r for r in results if r.flags]
    rows = []
    for r in results:
        options = ""
        if r.shares:
            key = r.item.choice.key or ()
            lines = []
            for j, (share, top) in enumerate(zip(r.shares, r.top_shares)):
                line = f"{LETTERS[j]}: {share:.0%} (top third {top:.0%})"
                line = f"<strong>{line} key</strong>" if j in key else line
                lines.append(f"{line} {html.escape(r.item.choice.texts[j][:80])}")
            options = "<br>".join(lines + [f"no option: {r.unanswered:.0%}"])
        rows.append(
            f"<tr class=\"{'flagged' if r.flags else ''}\"><td>{html.escape(r.item.notebook)}</td>"
            f"<td>{html.escape(r.item.grade_id)}</td><td>{r.item.points:g}</td>"
            f"<td>{_number(r.facility)}</td><td>{_number(r.discrimination)}</td>"
            f"<td>{html.escape('; '.join(r.flags))}</td><td>{options}</td></tr>")
    verdict = (f"{len(flagged)} question(s) flagged: "
               + ", ".join(f"{r.item.notebook} {r.item.grade_id}" for r in flagged) + "."
               if flagged else "No question is flagged.")
    body = (
        f"<h1>Item analysis: {name}</h1>"
        f"<p>For the instructor only (never released). {students} students who handed it in. "
        "Facility: the mean fraction of a question's points. Discrimination: the correlation "
        "of a question's score with the rest of the assignment's autograded score (the "
        "question left out). Options are counted in the solution's order, each student's "
        "letter mapped back through the order that student saw; the top third is the third "
        "of the class with the highest rest score. Flags: discrimination below "
        f"{LOW_DISCRIMINATION} (with at least {MIN_CLASS} students), a distractor the top "
        f"third chooses more often than the key (a top third of at least {MIN_TOP}), a "
        f"question every or no student gets (at least {MIN_ALL_OR_NONE} students). A flag "
        "asks for a look at the question and its test: docs/instructor.md, <em>After "
        "grading: the item analysis</em>.</p>"
        f"<p><strong>{html.escape(verdict)}</strong></p>"
        f"<p><img alt=\"the questions of {name}\" src=\"data:image/png;base64,"
        f"{plot(assignment, results)}\"></p>"
        "<table><tr><th>notebook</th><th>question</th><th>points</th><th>facility</th>"
        "<th>discrimination</th><th>flags</th><th>options (class, top third)</th></tr>"
        + "".join(rows) + "</table>")
    document = (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Item analysis: "
                f"{name}</title><style>{STYLE}</style></head><body>{body}</body></html>")
    return clean_html(document)


def summary_lines(written: dict[str, tuple[Path, int, list[Result]]]) -> list[str]:
    """The summary's lines: each assignment's page, and its flagged questions."""
    lines = []
    for assignment, (path, students, results) in sorted(written.items()):
        lines.append(f"  {assignment} ({students} students): {path}")
        for r in results:
            if r.flags:
                lines.append(f"    {r.item.notebook} {r.item.grade_id}: {'; '.join(r.flags)} "
                             f"(facility {_number(r.facility)}, discrimination "
                             f"{_number(r.discrimination) or '-'})")
        if not any(r.flags for r in results):
            lines.append("    no question flagged")
    return lines
