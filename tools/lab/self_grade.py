"""A grade for a student working alone: one notebook graded by the course's own grader.

    python -m tools.lab.self_grade exercises/session-3/exit-test.ipynb [...]
    (make check GRADE=1 NB=exercises/session-3/exit-test.ipynb)

Where the course's ``solutions/`` folder is present (a clone of the course repository, not
the course pulled onto a hub), ``grade`` builds a one-student course in a temporary folder
(``nbgrader_config.py``, ``schedule.yml``, ``solutions/`` and ``exercises/``, and the
notebook handed in as ``submitted/<student id>/<assignment>/``) and runs ``make grade``'s
command on it (``python -m tools.grading``: the same screening, bubblewrap sandbox, hidden
tests and re-check as the instructor's). It then reads each question's points from that
gradebook and the test's message from the autograded notebook (its error's name and
message, never its traceback, which could show a hidden test), and keeps the feedback page
in ``_build/self-grade/<student id>/<assignment>/`` (git-ignored; the instructor's
``feedback/`` is left alone). ``report`` prints per question *right*, *partly right*,
*wrong* (with the message), *not attempted* or *graded by hand*, the points and the page.

The student id is the one ``make check ID=...`` set (``memkit.variants.student``): the
grader checks the answers against that id's numbers. Where bubblewrap does not exist
(macOS) the notebook runs unsandboxed, as ``make check`` runs it (it is the student's own,
on their machine), and the report says so. A class on a hub is graded by its instructor;
this is for checking oneself.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from tools import ROOT
from tools.common import nbgrader_cells
from tools.common.text import shown
from tools.lab.notebook_check import (NOT_ATTEMPTED, cell_error, questions, unchanged,
                             whose_numbers)
from tools.release.layout import ASSIGNMENT, RELEASE, SOURCE

RIGHT, PARTLY, WRONG, BY_HAND = "right", "partly right", "wrong", "graded by hand"
# the files of the course's root the grader reads besides the assignments' folders
COURSE_FILES = ("nbgrader_config.py", "schedule.yml")
KEPT = Path("_build") / "self-grade"  # where the feedback pages are kept, under the course
NO_SOLUTIONS = ("this copy of the course has no solutions/ folder (the course on a hub has "
                "none): grading happens with your instructor, whose grade counts; "
                "`make check` without GRADE=1 checks the form of your answers")


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
    """A notebook graded for one student: its questions, the grader's notes, the page."""

    notebook: Path
    student: str
    results: list[Result]
    notes: list[str]
    feedback: Path | None


def assignment_of(path: Path, root: Path = ROOT) -> str:
    """The assignment a notebook belongs to (its folder, ``session-N``), checked against
    ``solutions/``; ``CannotGrade`` when this copy of the course cannot grade it."""
    assignment = Path(path).resolve().parent.name
    if not (Path(root) / SOURCE).is_dir():
        raise CannotGrade(NO_SOLUTIONS)
    if not ASSIGNMENT.match(assignment):
        raise CannotGrade("not in an assignment's folder (exercises/session-N/)")
    if not (Path(root) / SOURCE / assignment / Path(path).name).is_file():
        raise CannotGrade(f"solutions/{assignment}/ has no notebook {Path(path).name}")
    return assignment


def sandbox_here() -> str:
    """The grader's ``--sandbox`` here: ``bwrap`` on Linux (``CannotGrade`` with the
    grader's message when it cannot run), ``off`` where bubblewrap does not exist."""
    if platform.system() != "Linux":
        return "off"
    from tools.grading.box import unusable

    problem = unusable()
    if problem:
        raise CannotGrade(problem)
    return "bwrap"


def one_student_course(into: Path, notebook: Path, assignment: str, student: str,
                       root: Path = ROOT) -> Path:
    """The course folder the grader runs on: the course's files and assignments (every one:
    the schedule names them all), and ``notebook`` handed in by ``student``."""
    course = into / "course"
    course.mkdir(parents=True)
    for name in COURSE_FILES:
        if (Path(root) / name).is_file():
            shutil.copy(Path(root) / name, course / name)
    for where in (SOURCE, RELEASE):
        shutil.copytree(Path(root) / where, course / where,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    handed_in = course / "submitted" / student / assignment
    handed_in.mkdir(parents=True)
    shutil.copy(notebook, handed_in / notebook.name)
    return course


def _scores(db_url: str, assignment: str, student: str, name: str) -> dict:
    """{grade id: (score, or None while it waits for a person; max score)} of a notebook."""
    from nbgrader.api import MissingEntry

    from tools.grading import gradebook

    with gradebook.opened(db_url) as gb:
        try:
            nb = gb.find_submission_notebook(name.removesuffix(".ipynb"), assignment, student)
        except MissingEntry:
            return {}
        return {g.name: (None if g.needs_manual_grade and g.manual_score is None else g.score,
                         g.max_score) for g in nb.grades}


def _messages(autograded: Path) -> dict[str, str]:
    """{grade id: its cell's error, "Name: message"} of an autograded notebook."""
    if not autograded.is_file():
        return {}
    found = {}
    for cell in nbformat.read(autograded, as_version=4).cells:
        error = cell_error(cell)
        if nbgrader_cells.grade_id(cell) and error:
            found[nbgrader_cells.grade_id(cell)] = f"{error[0]}: {error[1]}".rstrip(": ")[:300]
    return found


def _notes(report: Path, notebook: str, wrong: set[str]) -> list[str]:
    """The grader's reasons about ``notebook`` (its report CSV): none about the other
    notebooks of the assignment (only this one was handed in), nor about a question the
    report shows wrong already ("exit-test.ipynb: q2 passed in the student's kernel ...")."""
    if not report.is_file():
        return []
    with open(report, newline="") as fh:
        reasons = [r for row in csv.DictReader(fh) for r in (row.get("reasons") or "").split(" | ")]
    kept = []
    for reason in reasons:
        about, _, rest = reason.partition(": ")
        if reason and (about == notebook or not about.endswith(".ipynb")) \
                and rest.split(" ", 1)[0] not in wrong:
            kept.append(reason)
    return kept


def _grader_env() -> dict:
    """This process's environment without what points the grader at a class's gradebook
    or cluster (an instructor's shell may set them): this course is one student's."""
    return {k: v for k, v in os.environ.items()
            if k not in ("MEMCOURSE_DB_URL", "MEMCOURSE_SCHEDULER")}


def grade(notebook: Path, student: str, root: Path = ROOT, keep_in: Path | None = None,
          timeout: float = 1800) -> Graded:
    """Grade ``notebook`` for ``student`` with the course's grader (see the module's text);
    the feedback page is kept under ``keep_in`` (default: the course's ``_build/self-grade``)."""
    notebook = Path(notebook)
    assignment = assignment_of(notebook, root)
    sandbox = sandbox_here()
    handed_in = nbformat.read(notebook, as_version=4)
    asked = questions(handed_in)
    with tempfile.TemporaryDirectory(prefix="memcourse-self-grade-") as tmp:
        course = one_student_course(Path(tmp), notebook, assignment, student, root)
        db_url = f"sqlite:///{course / 'gradebook.db'}"
        try:
            run = subprocess.run(
                [sys.executable, "-m", "tools.grading", assignment, "--course-dir", str(course),
                 "--student", student, "--jobs", "1", "--db-url", db_url, "--sandbox", sandbox,
                 "--csv", str(course / "grades.csv"), "--report", str(course / "report.csv")],
                cwd=ROOT, env=_grader_env(), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CannotGrade(f"the grader ran longer than {timeout:g} s: stopped") from None
        if run.returncode != 0:
            said = (run.stdout + run.stderr).strip().splitlines()[-12:]
            raise CannotGrade("the grader stopped:\n    " + "\n    ".join(said))
        scores = _scores(db_url, assignment, student, notebook.name)
        messages = _messages(course / "autograded" / student / assignment / notebook.name)
        results, wrong = [], set()
        for q in asked:
            ids = ([q.answer_id] if q.written else []) + [
                nbgrader_cells.grade_id(handed_in.cells[i]) or "" for i in q.test_indices]
            scored = [scores[i] for i in ids if i in scores]
            waiting = q.written or any(s is None for s, _ in scored)
            attempted = not unchanged(handed_in.cells[q.answer_index])
            said = [messages[i] for i in [q.answer_id, *ids] if i in messages] if attempted else []
            results.append(Result(q.answer_id, q.title, sum(m for _, m in scored) or q.points,
                                  None if waiting else sum(s for s, _ in scored), said, attempted))
            if results[-1].verdict != RIGHT:
                wrong |= {q.answer_id, *ids}
        notes = _notes(course / "report.csv", notebook.name, wrong)
        page = course / "feedback" / student / assignment / notebook.with_suffix(".html").name
        kept = None
        if page.is_file():
            kept = (keep_in or Path(root) / KEPT) / student / assignment / page.name
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(page, kept)
    if sandbox == "off":
        notes.append("run without the grader's sandbox (bubblewrap exists on Linux only), as "
                     "`make check` runs it; the hidden tests and the grader's re-check are the same")
    return Graded(notebook, student, results, notes, kept)


def _relative(path: Path, root: Path) -> Path:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve())
    except ValueError:
        return Path(path)


def report(graded: Graded, root: Path = ROOT) -> str:
    """The lines ``make check GRADE=1`` prints: per question right or wrong, with the
    test's message, the points, the grader's notes and where the feedback page is."""
    lines = [f"{_relative(graded.notebook, root)}, graded for student id {graded.student!r} "
             "by the course's grader"]
    width = max((len(r.answer_id) for r in graded.results), default=2)
    for r in graded.results:
        score = "-" if r.score is None else f"{r.score:g}"
        line = f"  {r.answer_id:<{width}}  {score:>3}/{r.points:g}  {r.verdict}"
        lines.append(line + (f"   [{r.title}]" if r.title else ""))
        if r.verdict in (WRONG, PARTLY):
            lines += [f"  {'':<{width}}      {m}" for m in r.messages]
    auto = [r for r in graded.results if r.score is not None]
    by_hand = len(graded.results) - len(auto)
    lines.append(f"  {sum(r.score for r in auto):g} of {sum(r.points for r in auto):g} points "
                 "graded by the tests"
                 + (f" ({by_hand} written answer(s) graded by a person)" if by_hand else ""))
    lines += [f"  note: {n}" for n in graded.notes]
    if graded.feedback:
        lines.append(f"  feedback page: {_relative(graded.feedback, root)}")
    lines.append("  (a check for yourself: in a class, your instructor's grade counts)")
    return "\n".join(shown(line) for line in lines)


def main(argv: list[str] | None = None) -> int:
    from memkit import variants

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
            print(shown(f"{path}: no such notebook"))
            status = 2
            continue
        try:
            assignment_of(path, ROOT)
            print(shown(f"{_relative(path, ROOT)}: grading (a minute or so) ..."), flush=True)
            print(report(grade(path, student, root=ROOT), root=ROOT))
        except CannotGrade as exc:
            print(shown(f"{path}: not graded: {exc}", lines=True))
            status = 2
        print()
    return status


if __name__ == "__main__":
    sys.exit(main())
