"""A student alone grades a notebook with the course's own grader (``make check GRADE=1``),
and the lab's Validate says what ``make check`` says.

The planted answers are of session 1's exit test, for a student id that is not the
default: question 1 the solution's code (right), question 2 zeros of the right shapes (its
visible test passes, ``make check`` says *format ok*: the form is right, the values are
not), the others as released (not attempted). The notebook and the feedback are written in
a temporary folder; the grader runs on a temporary one-student copy of the course.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

from tools.common import nbgrader_cells
import pytest

from memkit import variants
from tools.lab import self_grade, validate
from tools.lab.notebook_check import FORMAT_OK, check

ROOT = pathlib.Path(__file__).resolve().parents[2]
SESSION, NAME = "session-1", "exit-test.ipynb"
STUDENT = "solo-student"
MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$\n?", re.M)
WRONG_Q2 = "scaled_columns = np.zeros((4, 3))\ny_from_columns = np.zeros(3)\n"


def planted(folder: pathlib.Path) -> pathlib.Path:
    """Session 1's exit test with q1 answered as the solution, q2 wrong, in ``folder``."""
    source = {nbgrader_cells.grade_id(c): "".join(c["source"])
              for c in json.loads((ROOT / "solutions" / SESSION / NAME).read_text())["cells"]}
    nb = json.loads((ROOT / "exercises" / SESSION / NAME).read_text())
    for cell in nb["cells"]:
        gid = nbgrader_cells.grade_id(cell)
        if gid == "q1":
            cell["source"] = MARKERS.sub("", source["q1"])
        elif gid == "q2":
            cell["source"] = WRONG_Q2
    path = folder / SESSION / NAME
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(nb))
    return path


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    assert STUDENT != variants.DEFAULT_ID
    tmp = tmp_path_factory.mktemp("self-grade")
    return self_grade.grade(planted(tmp / "work"), STUDENT, keep_in=tmp / "kept")


@pytest.mark.sandbox
def test_the_solutions_answer_is_right_and_a_planted_wrong_one_wrong_with_its_message(graded):
    assert graded.student == STUDENT
    by_id = {r.answer_id: r for r in graded.results}
    assert by_id["q1"].verdict == self_grade.RIGHT and by_id["q1"].score == by_id["q1"].points == 2
    assert by_id["q2"].verdict == self_grade.WRONG and by_id["q2"].score == 0
    assert any(m.startswith("AssertionError: q2") for m in by_id["q2"].messages), by_id["q2"]
    for gid in ("q3", "q4", "q5"):
        assert by_id[gid].verdict == self_grade.NOT_ATTEMPTED and by_id[gid].score == 0
    text = self_grade.report(graded)
    assert f"student id {STUDENT!r}" in text
    assert re.search(r"q1 +2/2 +right", text) and re.search(r"q2 +0/2 +wrong", text), text
    assert "2 of 10 points" in text, text
    assert "NameError" not in text and "Traceback" not in text, text


@pytest.mark.sandbox
def test_the_feedback_page_is_kept_named_in_the_report_and_shows_no_hidden_test(graded):
    page = graded.feedback
    assert page is not None and page.is_file()
    assert page.parts[-3:] == (STUDENT, SESSION, "exit-test.html")
    assert str(page) in self_grade.report(graded)
    assert "BEGIN HIDDEN TESTS" not in page.read_text()


@pytest.mark.slow
def test_make_check_says_format_ok_for_both_what_the_visible_tests_cannot_tell(tmp_path):
    by_id = {q.answer_id: q for q in check(planted(tmp_path))[0]}
    assert by_id["q1"].status == by_id["q2"].status == FORMAT_OK


def test_a_copy_without_solutions_says_the_instructor_grades(tmp_path):
    path = planted(tmp_path)
    with pytest.raises(self_grade.CannotGrade, match="grading happens with your instructor"):
        self_grade.grade(path, STUDENT, root=tmp_path)


def test_make_check_grade_without_solutions_says_so(tmp_path, monkeypatch, capsys):
    """``make check GRADE=1`` in the course as a hub holds it: exercises/, no solutions/."""
    clone = tmp_path / "course"
    path = planted(clone / "exercises")
    monkeypatch.setattr(self_grade, "ROOT", clone)
    monkeypatch.setenv(variants.ENV, STUDENT)
    assert self_grade.main([str(path)]) == 2
    said = capsys.readouterr().out
    assert "not graded: this copy of the course has no solutions/ folder" in said, said
    assert "grading happens with your instructor" in said, said


def test_make_check_grade_runs_from_the_command_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tools.lab.self_grade",
                           str(tmp_path / "missing.ipynb")], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "no such notebook" in done.stdout, done.stdout + done.stderr


@pytest.mark.slow
def test_validate_answers_as_make_check_not_with_tracebacks():
    value = validate.answer(ROOT / "exercises" / SESSION / NAME)
    failed = value["failed"]
    said = " ".join(f["raw_error"] for f in failed)
    assert "not attempted" in said
    assert "NameError" not in said and "Traceback" not in said
    assert {f["source"].split()[0] for f in failed} >= {"q1", "q2", "q3", "q4", "q5"}


def test_validate_runs_only_a_notebook_of_the_lab_never_a_students_submission(tmp_path):
    root = tmp_path.resolve()
    mine = root / "exercises" / SESSION / NAME
    theirs = root / "submitted" / "alice" / SESSION / NAME
    for path in (mine, theirs, root / "notes.md"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    outside = tmp_path.parent / "elsewhere.ipynb"
    assert validate.refusal(root, mine) == ""
    assert "submission" in validate.refusal(root, theirs)
    for path in (root / "notes.md", outside, root / "missing.ipynb"):
        assert validate.refusal(root, path) == "not a notebook of this course"
