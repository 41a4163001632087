"""A student alone grades a notebook with the course's own grader (``make check GRADE=1``),
and the lab's Validate says what ``make check`` says.

The planted answers are of session 1's exit test: question 1 the solution's code (right),
question 2 zeros of the right shapes (its visible test passes: the form is right, the
values are not), the others as released (not attempted).
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest

from tools.lab import self_grade, validate

ROOT = pathlib.Path(__file__).resolve().parents[2]
SESSION, NAME = "session-1", "exit-test.ipynb"
MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$\n?", re.M)


def planted(folder: pathlib.Path) -> pathlib.Path:
    source = {c["metadata"].get("nbgrader", {}).get("grade_id"): "".join(c["source"])
              for c in json.loads((ROOT / "solutions" / SESSION / NAME).read_text())["cells"]}
    nb = json.loads((ROOT / "exercises" / SESSION / NAME).read_text())
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if gid == "q1":
            cell["source"] = MARKERS.sub("", source["q1"])
        elif gid == "q2":
            cell["source"] = "scaled_columns = np.zeros((4, 3))\ny_from_columns = np.zeros(3)\n"
    path = folder / SESSION / NAME
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(nb))
    return path


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("self-grade")
    return self_grade.grade(planted(tmp / "work"), "solo-student", keep_in=tmp / "feedback")


def test_a_right_answer_is_right_and_a_planted_wrong_one_wrong_with_the_tests_message(graded):
    by_id = {r.answer_id: r for r in graded.results}
    assert by_id["q1"].verdict == self_grade.RIGHT and by_id["q1"].score == by_id["q1"].points > 0
    assert by_id["q2"].verdict == self_grade.WRONG and by_id["q2"].score == 0
    assert any("q2" in m and "AssertionError" in m for m in by_id["q2"].messages)
    for gid in ("q3", "q4", "q5"):
        assert by_id[gid].verdict == self_grade.NOT_ATTEMPTED and by_id[gid].score == 0
    text = self_grade.report(graded)
    assert re.search(r"q1 +2/2 +right", text) and re.search(r"q2 +0/2 +wrong", text), text
    assert "NameError" not in text and "Traceback" not in text, text


def test_the_feedback_page_is_kept_and_named_and_shows_no_hidden_test(graded):
    page = graded.feedback
    assert page is not None and page.is_file()
    assert page.parts[-3:] == ("solo-student", SESSION, "exit-test.html")
    assert str(page) in self_grade.report(graded)
    assert "BEGIN HIDDEN TESTS" not in page.read_text()


def test_make_check_says_format_ok_for_the_planted_wrong_answer():
    """What the visible tests cannot tell: both answers have the form asked for."""
    from tools.lab.check import FORMAT_OK, check

    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        qs, _ = check(planted(pathlib.Path(tmp)))
    by_id = {q.answer_id: q for q in qs}
    assert by_id["q1"].status == by_id["q2"].status == FORMAT_OK


def test_a_copy_without_solutions_says_the_instructor_grades(tmp_path):
    path = planted(tmp_path)
    with pytest.raises(self_grade.CannotGrade, match="instructor grades"):
        self_grade.assignment_of(path, root=tmp_path)


def test_validate_answers_as_make_check_not_with_tracebacks():
    value = validate.answer(ROOT / "exercises" / SESSION / NAME)
    failed = value["failed"]
    assert failed, "a released notebook has unanswered questions"
    said = " ".join(f["raw_error"] for f in failed)
    assert "not attempted" in said
    assert "NameError" not in said and "Traceback" not in said
    assert {f["source"].split()[0] for f in failed} >= {"q1", "q2", "q3", "q4", "q5"}


def test_make_check_grade_runs_from_the_command_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "tools.lab.self_grade",
                          str(tmp_path / "missing.ipynb")], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2 and "no such notebook" in out.stdout
