"""No student's key is a number the built book prints, for the questions whose keys are exact
closed forms of the student's numbers (model sizes, widths, powers): a student who copies the
book's number hands in a wrong answer.

For 200 ids of the calibration's sample, each question's reference answer is computed (its
set-up, option cells and own answer cell run, ``engine.solve(..., questions=...)``), and each
single-number answer that prints as a number of the book (``book.Printed``) is handed in as
the book prints it and graded by the question's hidden test: it must fail. The draws of these
questions avoid such keys by construction (widths of 64 times an odd number, sequence lengths
of 1024 times an odd number, no whole power of a weight ratio, no round thousand, no width
whose cube the book prints); without that, 3 to 43 of 200 ids had the book's number as key.
"""

from __future__ import annotations

import pytest

from tools import ROOT
from tools.common import student_run
from tools.grading.calibration import __main__ as cli
from tools.grading.calibration import book, engine, run

IDS = 200
EXACT = [  # (notebook, question): keys that are exact functions of the drawn numbers
    ("session-4/exit-test", "q5"),    # the smallest widths for a number of facts
    ("session-5/exit-test", "q3"),    # a weight ratio: the factor to a power
    ("session-7/exercises", "q5"),    # weights, a cache and crossings of a model
    ("session-7/exit-test", "q6"),    # n* = 2 d + ff
    ("session-7/exit-test", "q7"),    # n* = 2 d + 3 ff / 2
    ("session-8/exercises", "q5"),    # a fixed state's work n d_k d_v
    ("session-8/exit-test", "q7"),    # the state of a squared score, d^3
    ("session-9/exit-test", "q9"),    # n* = 6 d h / g
]


@pytest.fixture(scope="module")
def printed(built_book):
    found = book.printed(ROOT)
    assert "built HTML pages" in found.source and len(found) > 100, found.source
    return found


@pytest.mark.parametrize("notebook, qid", EXACT, ids=[f"{n}-{q}" for n, q in EXACT])
def test_no_key_is_a_number_the_book_prints(printed, notebook, qid):
    path = ROOT / "solutions" / f"{notebook}.ipynb"
    nb = engine.Notebook.read(path)
    question = nb.questions[qid]
    result = run.Result(nb.name, qid, "exact")
    for student in cli.sample_ids(IDS):
        with student_run.as_student(student, path.parent):
            solved = engine.solve(nb, student, questions={qid})
        answers = solved.answers[qid]
        assert set(question.names) <= set(answers), (student, sorted(answers))
        assert not engine.judge(question, solved, answers), (student, "the reference answer fails")
        run.record_key(result, question, solved, printed)
    found = result.slips[run.BOOK]
    assert found.tried == IDS
    assert found.accepted == 0, result.book_hits[:5]
