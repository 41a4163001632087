"""The gradebook is the grader's alone: what anything else writes during a run is undone.

``tools.grading`` takes a snapshot of every grade and comment of the gradebook before it
grades, records each submission's rows again right after the grader wrote them, and at
the end compares the gradebook with that record. A difference (a manual score that
appeared, another student's grade set to zero, a row the grader never wrote) is reported
and put back as the grader left it, before the grades are exported. With the sandbox no
kernel can reach the gradebook at all (it is neither in the kernel's file system nor on
its network); this is the second line, and it catches a person or a process outside
the sandbox too.

Stage: around the whole run (``tools.grading.pipeline`` and ``cli``).
"""

from __future__ import annotations

Key = tuple  # (assignment, student, notebook, cell, "grade" | "comment")


def _rows(gb, assignment: str | None = None, student: str | None = None) -> dict:
    from nbgrader.api import Comment, Grade, Notebook, SubmittedAssignment, SubmittedNotebook
    from nbgrader.api import Assignment, Student

    rows: dict = {}
    for model, kind in ((Grade, "grade"), (Comment, "comment")):
        query = (
            gb.db.query(model, SubmittedNotebook, Notebook, SubmittedAssignment, Assignment, Student)
            .join(SubmittedNotebook, model.notebook_id == SubmittedNotebook.id)
            .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
            .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
            .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
            .join(Student, SubmittedAssignment.student_id == Student.id)
        )
        if assignment is not None:
            query = query.filter(Assignment.name == assignment)
        if student is not None:
            query = query.filter(Student.id == student)
        for row, _snb, nb, _sa, a, st in query.all():
            key = (a.name, st.id, nb.name, row.name, kind)
            if kind == "grade":
                rows[key] = (row.auto_score, row.manual_score, row.extra_credit)
            else:
                rows[key] = (row.auto_comment, row.manual_comment)
    return rows


def _path() -> None:
    """nbgrader creates a new gradebook with the ``alembic`` of this Python's scripts."""
    import os
    import sys
    from pathlib import Path

    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([scripts, os.environ.get("PATH", "")])


def snapshot(db_url: str, assignment: str | None = None, student: str | None = None) -> dict:
    """Every grade and comment row (of one submission when both names are given)."""
    from tools.grading import gradebook

    _path()
    with gradebook.opened(db_url) as gb:
        return _rows(gb, assignment, student)


def _describe(key: Key, before, after) -> str:
    assignment, student, notebook, cell, kind = key
    if kind == "grade":
        names = ("auto_score", "manual_score", "extra_credit")
    else:
        names = ("auto_comment", "manual_comment")
    if before is None:
        return f"{assignment} {student} {notebook} {cell}: a {kind} the grader never wrote"
    changed = [
        f"{n} {b!r} -> {a!r}" for n, b, a in zip(names, before, after or (None,) * 3) if b != a
    ]
    return f"{assignment} {student} {notebook} {cell}: {', '.join(changed)}"


def check_and_restore(db_url: str, expected: dict, only: set | None = None) -> list[str]:
    """Compare the gradebook with ``expected``; put every changed row back; say what changed.

    ``only``: the (assignment, student) pairs to compare (None: every row), for a gradebook
    other graders write to at the same time (``tools.grading.gradebook.guarded``).
    """
    from nbgrader.api import Gradebook, MissingEntry

    _path()
    problems = []
    with Gradebook(db_url) as gb:
        now = _rows(gb)
        if only is not None:
            now = {k: v for k, v in now.items() if k[:2] in only}
            expected = {k: v for k, v in expected.items() if k[:2] in only}
        changed = [k for k in sorted(set(now) | set(expected)) if now.get(k) != expected.get(k)]
        for key in changed:
            problems.append(_describe(key, expected.get(key), now.get(key)))
            assignment, student, notebook, cell, kind = key
            try:
                if kind == "grade":
                    row = gb.find_grade(cell, notebook, assignment, student)
                    values = expected.get(key) or (None, None, None)
                    row.auto_score, row.manual_score, row.extra_credit = values
                else:
                    row = gb.find_comment(cell, notebook, assignment, student)
                    values = expected.get(key) or (None, None)
                    row.auto_comment, row.manual_comment = values
            except MissingEntry:
                continue
        if changed:
            gb.db.commit()
    return problems
