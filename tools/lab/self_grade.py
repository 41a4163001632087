"""A grade for a student working alone: one notebook graded by the course's own grader.

    python -m tools.lab.self_grade exercises/session-3/exit-test.ipynb [...]
    (make check GRADE=1 NB=exercises/session-3/exit-test.ipynb)

Where the course's ``solutions/`` folder is present (a clone of the course repository, not
the course pulled onto a hub), a student who studies alone can grade their own work after
trying: ``grade`` builds a one-student course in a temporary folder (``nbgrader_config.py``,
``schedule.yml``, the ``solutions/`` and ``exercises/`` folders, and the
notebook as ``submitted/<student id>/<assignment>/``), runs ``make grade``'s pipeline on it
(``python -m tools.grading``: the same screening, bubblewrap sandbox, hidden tests and
re-check as the instructor's), then reads each question's points from that gradebook and
the test's message from the autograded notebook (its error's name and message, never its
traceback, which could show a hidden test). The feedback page is kept in
``feedback/<student id>/<assignment>/`` of the course folder (git-ignored).

The student id is the one the notebook drew its numbers from (``memkit.variants.student``):
the grade checks the answers against that id's numbers. A class on a hub is graded by its
instructor; this is for checking oneself. On Linux every kernel runs in the grader's
bubblewrap sandbox (``tools.grading.sandbox``); where bubblewrap does not exist (macOS) the
notebook runs unsandboxed, as ``make check`` runs it: it is the student's own, on their own
machine, and the report says so.

Depends on: ``tools.lab.check`` (the questions of a notebook, the student id),
``tools.grading.sandbox`` (whether the sandbox can run here), ``tools.release.layout``
(where the assignments live), ``tools.common.text`` (what a notebook says, printed with its
control characters escaped); ``tools.grading`` itself runs as a command.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tools import ROOT
from tools.common.text import shown
from tools.release.layout import ASSIGNMENT, RELEASE, SOURCE

RIGHT, WRONG, PARTLY, BY_HAND = "right", "wrong", "partly right", "graded by hand"
NOT_ATTEMPTED = "not attempted"  # the answer cell as released: scores 0
# the files of the course's root the grader reads besides the assignment's folders
COURSE_FILES = ("nbgrader_config.py", "schedule.yml")


class CannotGrade(Exception):
    """This notebook cannot be graded here; the message says why and what to do."""


@dataclass
class Result:
    """One question of a graded notebook."""

    answer_id: str
    title: str
    points: float
    score: float | None  # None: graded by hand (a written answer)
    messages: list[str] = field(default_factory=list)
    attempted: bool = True

    @property
    def verdict(self) -> str:
        if self.score is None:
            return BY_HAND
        if not self.attempted:
            return NOT_ATTEMPTED
        if self.score >= self.points:
            return RIGHT
        return PARTLY if self.score > 0 else WRONG


@dataclass
class Graded:
    """A notebook graded for one student: its questions, the grader's notes, the feedback."""

    notebook: Path
    student: str
    results: list[Result]
    notes: list[str]
    feedback: Path | None


def assignment_of(path: Path, root: Path = ROOT) -> str:
    """The assignment a notebook belongs to (its folder, ``session-N``), checked against
    ``solutions/``; ``CannotGrade`` when this copy of the course cannot grade it."""
    assignment = path.resolve().parent.name
    if not ASSIGNMENT.match(assignment):
        raise CannotGrade(f"{path}: not in an assignment's folder (exercises/session-N/)")
    if not (root / SOURCE).is_dir():
        raise CannotGrade(
            "this copy of the course has no solutions/ folder (the course on a hub has none): "
            "your instructor grades your work; `make check` without GRADE=1 checks its form")
    if not (root / SOURCE / assignment / path.name).is_file():
        raise CannotGrade(f"{path}: solutions/{assignment}/ has no notebook {path.name}")
    return assignment


def one_student_course(into: Path, notebook: Path, assignment: str, student: str,
                       root: Path = ROOT) -> Path:
    """The course folder the grader runs on: the course's files and assignments, and the
    notebook handed in by ``student``. Returns the course folder."""
    course = into / "course"
    course.mkdir(parents=True)
    for name in COURSE_FILES:
        if (root / name).is_file():
            shutil.copy(root / name, course / name)
    for where in (SOURCE, RELEASE):  # every assignment: the schedule names them all
        shutil.copytree(root / where, course / where,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    handed_in = course / "submitted" / student / assignment
    handed_in.mkdir(parents=True)
    shutil.copy(notebook, handed_in / notebook.name)
    return course


def _grades(db_url: str, assignment: str, student: str, name: str) -> dict:
    """{grade id: (score or None when it waits for a person, max score)} of one notebook."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gb:
        try:
            nb = gb.find_submission_notebook(name.removesuffix(".ipynb"), assignment, student)
        except MissingEntry:
            return {}
        return {g.name: (None if g.needs_manual_grade and g.manual_score is None else g.score,
                         g.max_score) for g in nb.grades}


def _messages(autograded: Path) -> dict[str, list[str]]:
    """{grade id: the error names and messages of its cell} in an autograded notebook."""
    from tools.lab.check import _meta

    if not autograded.is_file():
        return {}
    nb = json.loads(autograded.read_text())
    found = {}
    for cell in nb.get("cells", []):
        gid = _meta(cell).get("grade_id")
        errors = [f"{o.get('ename', 'Error')}: {o.get('evalue', '')}".rstrip(": ")
                  for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if gid and errors:
            found[gid] = [e[:300] for e in errors]
    return found


def _reasons(report: Path) -> list[str]:
    """The grader's reasons about this notebook (the report CSV), the missing other
    notebooks of the assignment left out: only this one was handed in."""
    import csv

    if not report.is_file():
        return []
    with open(report, newline="") as fh:
        rows = list(csv.DictReader(fh))
    reasons = [r for row in rows for r in (row.get("reasons") or "").split(" | ") if r]
    return [r for r in reasons if "not handed in" not in r]


def grade(notebook: Path, student: str, root: Path = ROOT, keep_in: Path | None = None,
          timeout: float = 1800) -> Graded:
    """Grade ``notebook`` for ``student`` with the course's grader (see the module's text);
    the feedback page is kept under ``keep_in`` (default: the course's ``feedback/``)."""
    from tools.lab.check import _meta, _unchanged, questions

    notebook = Path(notebook)
    assignment = assignment_of(notebook, root)
    sandbox = sandbox_here()
    handed_in = _read(notebook)
    released = questions(handed_in)
    with tempfile.TemporaryDirectory(prefix="memcourse-self-grade-") as tmp:
        course = one_student_course(Path(tmp), notebook, assignment, student, root)
        db_url = f"sqlite:///{course / 'gradebook.db'}"
        report = course / "report.csv"
        run = subprocess.run(
            [sys.executable, "-m", "tools.grading", assignment, "--course-dir", str(course),
             "--student", student, "--jobs", "1", "--db-url", db_url, "--sandbox", sandbox,
             "--csv", str(course / "grades.csv"), "--report", str(report)],
            cwd=ROOT, capture_output=True, text=True, timeout=timeout,
        )
        if run.returncode != 0:
            said = (run.stdout + run.stderr).strip().splitlines()[-12:]
            raise CannotGrade("the grader stopped:\n    " + "\n    ".join(said))
        grades = _grades(db_url, assignment, student, notebook.name)
        messages = _messages(course / "autograded" / student / assignment / notebook.name)
        notes = _reasons(report)
        page = course / "feedback" / student / assignment / notebook.with_suffix(".html").name
        kept = None
        if page.is_file():
            kept = (keep_in or root / "feedback") / student / assignment / page.name
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(page, kept)
    results = []
    for q in released:
        ids = [q.answer_id] if q.written else []
        ids += [_meta(handed_in.cells[i]).get("grade_id", "") for i in q.test_indices]
        scored = [grades[i] for i in ids if i in grades]
        waiting = q.written or any(s is None for s, _ in scored)
        score = None if waiting else sum(s for s, _ in scored)
        points = sum(m for _, m in scored) or q.points
        attempted = not _unchanged(handed_in.cells[q.answer_index])
        said = [m for i in ids for m in messages.get(i, [])] if attempted else []
        results.append(Result(q.answer_id, q.title, points, score, said, attempted))
    # a question shown wrong needs no second line saying its test failed in the re-check
    shown = {i for q, r in zip(released, results) if r.verdict != RIGHT
             for i in [q.answer_id] + [_meta(handed_in.cells[t]).get("grade_id", "")
                                       for t in q.test_indices]}
    notes = [n for n in notes if _cell_named(n) not in shown]
    if sandbox == "off":
        notes.append("run without the grader's sandbox (bubblewrap exists on Linux only), as "
                     "`make check` runs it: the hidden tests and the grader's re-check are the same")
    return Graded(notebook, student, results, notes, kept)


def sandbox_here() -> str:
    """The grader's ``--sandbox`` here: ``bwrap`` on Linux (``CannotGrade`` when it cannot
    run: the grader's message says what to install), ``off`` where bubblewrap does not exist."""
    if platform.system() != "Linux":
        return "off"
    from tools.grading import sandbox

    problem = sandbox.unusable()
    if problem:
        raise CannotGrade(problem)
    return "bwrap"


def _cell_named(note: str) -> str:
    """The grade id a grader's note is about ("exit-test.ipynb: q2-tests passed ..."), or ''."""
    _, _, rest = note.partition(": ")
    return rest.split(maxsplit=1)[0] if rest.strip() else ""


def _read(path: Path):
    import nbformat

    return nbformat.read(path, as_version=4)


def report(graded: Graded, root: Path = ROOT) -> str:
    """The lines ``make check GRADE=1`` prints: per question right or wrong, with the
    test's message, the total, the grader's notes and where the feedback page is."""
    try:
        name = graded.notebook.resolve().relative_to(root)
    except ValueError:
        name = graded.notebook
    lines = [f"{name}, graded for student id {graded.student!r} by the course's grader"]
    width = max((len(r.answer_id) for r in graded.results), default=2)
    for r in graded.results:
        score = "-" if r.score is None else f"{r.score:g}"
        line = f"  {r.answer_id:<{width}}  {score:>3}/{r.points:g}  {r.verdict}"
        if r.title:
            line += f"   [{r.title}]"
        lines.append(line)
        if r.verdict in (WRONG, PARTLY):
            lines += [f"  {'':<{width}}      {m}" for m in r.messages]
    auto = [r for r in graded.results if r.score is not None]
    total = sum(r.score for r in auto)
    most = sum(r.points for r in auto)
    lines.append(f"  {total:g} of {most:g} points graded by the tests"
                 + (f" ({sum(r.score is None for r in graded.results)} written answer(s) "
                    "are graded by a person)" if len(auto) < len(graded.results) else ""))
    lines += [f"  note: {n}" for n in graded.notes]
    if graded.feedback:
        try:
            page = graded.feedback.relative_to(root)
        except ValueError:
            page = graded.feedback
        lines.append(f"  feedback page: {page}")
    lines.append("  (a self-check: a class on a hub is graded by its instructor, whose grade "
                 "counts)")
    return "\n".join(shown(line) for line in lines)


def main(argv: list[str] | None = None) -> int:
    from memkit import variants
    from tools.lab.check import whose_numbers

    parser = argparse.ArgumentParser(prog="python -m tools.lab.self_grade", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="+", type=Path,
                        help="e.g. exercises/session-3/exit-test.ipynb")
    args = parser.parse_args(argv)
    try:
        student, _ = variants.student()
    except ValueError as exc:
        print(f"student id: {exc}")
        return 2
    print(whose_numbers())
    print()
    status = 0
    for path in args.notebooks:
        if not path.is_file():
            print(f"{path}: no such notebook")
            status = 2
            continue
        try:
            print(report(grade(path, student)))
        except CannotGrade as exc:
            print(f"{path}: not graded: {exc}")
            status = 2
        print()
    return status


if __name__ == "__main__":
    sys.exit(main())
