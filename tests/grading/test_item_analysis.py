"""The item analysis after grading (tools/grading/item_analysis.py): facility, the corrected
item-total correlation, the options chosen counted through each student's order, and the
flags, on simulated classes (tests/support/simulate/abilities.py): a planted wrong key and a
planted broken question are flagged, an honest class's questions are not.
"""

from __future__ import annotations

import csv
import json
import pathlib
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from memkit.variants import Numbers
from tools.grading import item_analysis as ia
from support.simulate import abilities as ab

ROOT = pathlib.Path(__file__).resolve().parents[2]
HONEST = np.linspace(-1.2, 1.2, 8)  # the difficulties of an honest class's eight questions
CLASSES = 2000  # simulated classes per Monte Carlo test (a rate p is measured to sqrt(p/2000))


def _flags(results):
    return {r.item.grade_id: r.flags for r in results}


# -- the statistics on scores given directly ---------------------------------------------
def test_discrimination_is_the_item_rest_correlation_not_the_item_total():
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 3, size=(4, 25)).astype(float)
    items = [ia.Item("nb.ipynb", f"q{j}", 2.0, s) for j, s in enumerate(scores)]
    results = ia.analyse(items)
    total = scores.sum(axis=0)
    for j, r in enumerate(results):
        rest = total - scores[j]
        assert r.discrimination == pytest.approx(np.corrcoef(scores[j], rest)[0, 1], abs=1e-12)
        assert r.discrimination != pytest.approx(np.corrcoef(scores[j], total)[0, 1], abs=1e-3)
        assert r.facility == pytest.approx(scores[j].mean() / 2.0)


def test_everyone_or_no_one_is_flagged_and_a_constant_has_no_correlation():
    n = 24
    rng = np.random.default_rng(2)
    varied = [ia.Item("nb.ipynb", f"q{j}", 1.0, rng.integers(0, 2, n).astype(float))
              for j in range(3)]
    results = ia.analyse(varied + [ia.Item("nb.ipynb", "all", 2.0, np.full(n, 2.0)),
                                   ia.Item("nb.ipynb", "none", 1.0, np.zeros(n))])
    flags = _flags(results)
    assert flags["all"] == ["everyone gets it"] and flags["none"] == ["no one gets it"]
    assert np.isnan(results[-1].discrimination) and np.isnan(results[-2].discrimination)


def _class_items(c, honest, extra):
    questions = range(honest.shape[-1])
    return [ia.Item("nb.ipynb", f"q{j}", 1.0, honest[c, :, j]) for j in questions] + extra


@pytest.mark.parametrize("students, most, mean", [(20, 0.11, 0.06), (40, 0.035, 0.015)])
def test_an_honest_class_is_not_flagged(students, most, mean):
    """Honest questions of the Rasch model (difficulties -1.2 to 1.2, a multiple-choice one
    answered by guessing when not known): each is flagged by chance in few classes, fewer
    the larger the class (at 20 the correlation's sd is near 1/sqrt(17) = 0.24). Measured
    with three seeds: the most flagged question in 7.6-7.9 % of classes of 20 (a rate's sd
    over 2,000 classes: 0.6 %), 1.8-2.2 % of 40 (0.3 %); on average 4.1-4.6 % and 0.8-0.9 %
    (the bounds are five sd or more above)."""
    rng = np.random.default_rng(11)
    theta = ab.abilities(rng, CLASSES, students)
    honest = ab.knows(rng, theta, HONEST).astype(float)
    picked = ab.picks(rng, ab.knows(rng, theta, [0.0])[..., 0], 1, 4)
    choice = ia.Choice("q9", "answer", list("wxyz"), (1,))
    flagged = np.zeros(len(HONEST) + 1)
    for c in range(CLASSES):
        mc = ia.Item("nb.ipynb", "mc", 1.0, (picked[c] == 1).astype(float), choice,
                     [{int(p)} for p in picked[c]])
        flagged += [bool(r.flags) for r in ia.analyse(_class_items(c, honest, [mc]))]
    rates = flagged / CLASSES
    assert rates.max() < most and rates.mean() < mean, rates
    assert all("wrong key" not in " ".join(r.flags)
               for r in ia.analyse(_class_items(0, honest, [mc])))


def test_a_planted_wrong_key_is_flagged():
    """The students who know the answer choose option 0; the test gives the points for
    option 2: the top third prefers the true option to the key in nearly every class
    (measured with three seeds: 99.65-99.75 % of classes of 20, sd 0.13 %), and the
    question's discrimination is below the threshold in most (near 85 %, sd 0.8 %)."""
    students = 20
    rng = np.random.default_rng(12)
    theta = ab.abilities(rng, CLASSES, students)
    honest = ab.knows(rng, theta, HONEST).astype(float)
    picked = ab.picks(rng, ab.knows(rng, theta, [0.0])[..., 0], 0, 4)
    scores = ab.planted_wrong_key(picked, 2)
    choice = ia.Choice("q9", "answer", list("wxyz"), (2,))
    wrong_key = low = 0
    for c in range(CLASSES):
        mc = ia.Item("nb.ipynb", "mc", 1.0, scores[c], choice, [{int(p)} for p in picked[c]])
        flags = ia.analyse(_class_items(c, honest, [mc]))[-1].flags
        wrong_key += any(f.startswith("likely wrong key: the top third prefers a") for f in flags)
        low += any("discrimination" in f for f in flags)
    assert wrong_key / CLASSES > 0.99
    assert low / CLASSES > 0.8


@pytest.mark.parametrize("students, least", [(20, 0.9), (40, 0.96)])
def test_a_planted_broken_question_is_flagged(students, least):
    """A test that accepts a slip the weaker students make and rejects the right answer:
    its discrimination is negative or near zero (measured with three seeds: in 92.7-93.6 %
    of classes of 20, sd 0.6 %; 98.1-98.5 % of 40, sd 0.3 %)."""
    rng = np.random.default_rng(13)
    theta = ab.abilities(rng, CLASSES, students)
    honest = ab.knows(rng, theta, HONEST).astype(float)
    broken = ab.planted_slip(rng, theta)
    flagged = sum(
        bool(ia.analyse(_class_items(c, honest, [ia.Item("nb.ipynb", "slip", 1.0, broken[c])]))[-1]
             .flags) for c in range(CLASSES))
    assert flagged / CLASSES > least


def test_no_discrimination_flag_below_twenty_students():
    rng = np.random.default_rng(14)
    theta = ab.abilities(rng, 1, 19)
    honest = ab.knows(rng, theta, HONEST).astype(float)
    slip = ia.Item("nb.ipynb", "slip", 1.0, (-theta[0] > 0.5).astype(float))
    assert ia.analyse(_class_items(0, honest, [slip]))[-1].flags == []


# -- the options, counted through each student's order ---------------------------------
@pytest.mark.parametrize("seat", [None, 1, 2, 3, 4, 7])
def test_a_letter_counts_for_the_option_the_student_saw_under_it(seat):
    numbers = Numbers("session-1/exit-test", f"student-{seat}", seat)
    shown = numbers.options("q4", ["w", "x", "y", "z"])
    numbers.options("q6 state", ["s0", "s1", "s2"], letters="ABC")
    line = f"exit-test.ipynb: {numbers.summary()} | exercises.ipynb: q1: d = 3"
    order = ia.orders(line)["exit-test.ipynb"]
    for index in range(4):
        assert ia.solution_options([shown.key(index)], order["q4"]) == {index}
        assert ia.solution_options([shown.key(index).upper()], order["q4"]) == {index}
    assert ia.solution_options(["B", "c"], order["q6 state"]) == {
        numbers.choices["q6 state"].order[1], numbers.choices["q6 state"].order[2]}
    assert ia.solution_options(["q", ""], order["q4"]) == set()


def _export(value) -> str:
    from tools.grading.plain import to_plain

    return json.dumps({"values": {"rank_counts": to_plain(value)}, "calls": []})


def test_the_letters_chosen_are_read_within_bounds():
    source = json.loads((ROOT / "solutions/session-1/exit-test.ipynb").read_text())
    assert ia.choices(source)["q4-tests"].key == (3,)
    assert ia.chosen(source, {"q4-tests": _export(" b ")}) == {"q4-tests": ["b"]}
    assert ia.chosen(source, {"q4-tests": _export({"a", "c"})}) == {"q4-tests": ["a", "c"]}
    for hostile in ("<script>alert(1)</script>", 7, ["a" * 10] * 30, None):
        assert ia.chosen(source, {"q4-tests": _export(hostile)}) == {"q4-tests": []}
    deep = "[" * 100_000 + "]" * 100_000
    assert ia.chosen(source, {"q4-tests": deep, "other": "x"}) == {"q4-tests": []}
    assert ia.chosen(source, {}) == {"q4-tests": []}


def _cell(kind, text, **meta):
    return {"cell_type": kind, "source": text, "metadata": {"nbgrader": meta}, "outputs": []}


def test_several_right_options_count_each_choice_and_the_least_chosen_key():
    """A question with several right options (``keys``): each option's share is that of
    the students whose set holds it; a distractor the top third holds more often than the
    least held key is flagged."""
    source = {"cells": [
        _cell("code", 'points = numbers.options("q2", ["p0", "p1", "p2", "p3"])', locked=True,
              grade_id="q2-options"),
        _cell("code", "picked = points.keys([0, 2])", solution=True, grade_id="q2"),
        _cell("code", "_letters = set(picked)\nassert _letters == points.keys([0, 2])",
              grade=True, points=1, grade_id="q2-tests", locked=True),
    ]}
    assert ia.choices(source)["q2-tests"].key == (0, 2)
    export = json.dumps({"values": {"picked": {"t": "set", "v": [{"t": "str", "v": "a"},
                                                                 {"t": "str", "v": "d"}]}}})
    assert ia.chosen(source, {"q2-tests": export}) == {"q2-tests": ["a", "d"]}
    n = 21
    rest = np.arange(n, dtype=float)  # student i's score on an honest question
    picked = [{0, 2} if i < 14 else {0, 3} for i in range(n)]  # the top third picks 3, not 2
    choice = ia.Choice("q2", "picked", ["p0", "p1", "p2", "p3"], (0, 2))
    items = [ia.Item("nb.ipynb", "honest", 20.0, rest),
             ia.Item("nb.ipynb", "q2-tests", 1.0, np.array([1.0 * (p == {0, 2}) for p in picked]),
                     choice, picked)]
    result = ia.analyse(items)[1]
    assert result.shares == pytest.approx([1.0, 0.0, 14 / n, 7 / n])
    assert result.top_shares == pytest.approx([1.0, 0.0, 0.0, 1.0])
    assert "likely wrong key: the top third prefers d" in result.flags


def test_the_csv_and_the_page_are_text_and_nothing_runs(tmp_path):
    n = 21
    rng = np.random.default_rng(3)
    choice = ia.Choice("q1", "answer", ["=HYPERLINK(\"http://x\")", "<script>alert(1)</script>",
                                        "@SUM(A1)", "-2+3"], (0,))
    picked = [{int(j)} for j in rng.integers(0, 4, n)]
    items = [ia.Item("nb.ipynb", "<img src=x onerror=alert(1)>", 1.0, rng.integers(0, 2, n) * 1.0),
             ia.Item("nb.ipynb", "q1-tests", 1.0,
                     np.array([1.0 if 0 in p else 0.0 for p in picked]), choice, picked)]
    results = ia.analyse(items)
    path = tmp_path / "item-analysis.csv"
    ia.write_csv(path, ia.csv_rows("session-1", n, results))
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    texts = [row["option_text"] for row in rows if row["option"] in "abcd" and row["option"]]
    assert texts[0].startswith("'=") and texts[2].startswith("'@") and texts[3].startswith("'-")
    assert all(not str(v).startswith(("=", "+", "@", "\t", "\r"))
               for row in rows for v in row.values())
    shares = [float(row["share"]) for row in rows
              if row["question"] == "q1-tests" and row["option"]]
    assert sum(shares) == pytest.approx(1.0)
    # a later run of another assignment keeps these rows as they were; a rerun replaces them
    ia.write_csv(path, ia.earlier_rows(path, {"session-2"}) + ia.csv_rows("session-2", n, results))
    with open(path, newline="") as fh:
        again = list(csv.DictReader(fh))
    assert [r for r in again if r["assignment"] == "session-1"] == rows
    assert len(again) == 2 * len(rows)
    ia.write_csv(path, ia.earlier_rows(path, {"session-1"}) + ia.csv_rows("session-1", n, results))
    with open(path, newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 2 * len(rows)
    page = ia.page("session-1", n, results)
    assert "<script" not in page and not re.search(r"<[^>]*onerror", page)
    assert "&lt;img src=x onerror" in page
    assert "data:image/png;base64," in page and "&lt;script&gt;" in page


# -- one class graded end to end ------------------------------------------------------
ASSIGNMENT = "session-1"
NOTEBOOK = "exit-test.ipynb"
STUDENTS = 20
SLIP = "rank_C = len(u)\nC_left = u.T\nC_right = r"  # "four terms, so rank four"


def _design(i: int, right_q5: str) -> tuple[dict, int]:
    """Student ``i`` (0 the weakest): their answers and the option they choose on q4.

    q1, q2, q3 are answered by the students from 3, 7 and 11 on; q4's true key (option 3)
    is chosen by those from 12 on, the others spread over options 0, 1, 2; q5 is answered
    right (``right_q5``) from 10 on, with the slip by students 5 and 6, left blank by the
    others."""
    option = 3 if i >= 12 else i % 3
    answers = {"q1": "solution" if i >= 3 else None, "q2": "solution" if i >= 7 else None,
               "q3": "solution" if i >= 11 else None,
               "q5": right_q5 if i >= 10 else SLIP if i in (5, 6) else None}
    return answers, option


@pytest.fixture(scope="module")
def planted_class(tmp_path_factory):
    """Session 1's exit test graded for a class of 20 whose q4 is graded against a wrong
    key (option 2, not 3) and whose q5 test accepts the slip "rank = number of terms", each
    planted in the solution and its test alike (as an instructor's mistake ships: the
    grader checks that the solution passes its own tests)."""
    root = tmp_path_factory.mktemp("items")
    shutil.copy(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    for where in ("solutions", "exercises"):
        (root / where / ASSIGNMENT).mkdir(parents=True)
        for path in (ROOT / where / ASSIGNMENT).iterdir():
            if path.is_file() and path.name != "exercises.ipynb":
                shutil.copy(path, root / where / ASSIGNMENT / path.name)
    right_q5 = ab.answer(json.loads((root / "solutions" / ASSIGNMENT / NOTEBOOK).read_text()), "q5")
    for cell in ("q4", "q4-tests"):
        ab.plant(root, ASSIGNMENT, NOTEBOOK, cell, "rank_options.key(3)", "rank_options.key(2)")
    ab.plant(root, ASSIGNMENT, NOTEBOOK, "q5", "rank_C = int(np.linalg.matrix_rank(C))",
             "rank_C = len(u)")
    ab.plant(root, ASSIGNMENT, NOTEBOOK, "q5-tests",
             "int(rank_C) == int(np.linalg.matrix_rank(u))", "int(rank_C) == len(u)")
    source = json.loads((root / "solutions" / ASSIGNMENT / NOTEBOOK).read_text())
    answers, options = {}, {}
    for i in range(STUDENTS):
        given, options[f"student-{i:02d}"] = _design(i, right_q5)
        given["q4"] = ab.choose(source, "q4", options[f"student-{i:02d}"])
        answers[f"student-{i:02d}"] = {NOTEBOOK: given}
    ab.write_class(root, ASSIGNMENT, answers)
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "tools.grading", ASSIGNMENT, "--course-dir", str(root),
         "--jobs", "2", "--no-feedback", "--cell-timeout", "60"],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    seconds = time.monotonic() - started
    print(f"\nclass of {STUDENTS} graded with its item analysis in {seconds:.0f} s")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    with open(root / "autograded" / ia.CSV_NAME, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {"root": root, "stdout": result.stdout, "rows": rows, "options": options}


def _question(rows, gid):
    return next(r for r in rows if r["question"] == gid and not r["option"])


def test_the_planted_wrong_key_and_broken_question_are_flagged(planted_class):
    rows = planted_class["rows"]
    q4, q5 = _question(rows, "q4-tests"), _question(rows, "q5-tests")
    assert "likely wrong key: the top third prefers d" in q4["flags"]
    assert float(q4["discrimination"]) < 0 and "negative discrimination" in q4["flags"]
    assert float(q5["discrimination"]) < 0 and "negative discrimination" in q5["flags"]
    for gid in ("q1-tests", "q2-tests", "q3-tests"):  # the honest questions
        row = _question(rows, gid)
        assert row["flags"] == "" and float(row["discrimination"]) > ia.LOW_DISCRIMINATION, row
    out = planted_class["stdout"]
    flagged = [line.strip() for line in out.splitlines() if line.startswith("    exit-test")]
    assert "Item analysis" in out and len(flagged) == 2, out[-2000:]
    assert "q4-tests: negative discrimination; likely wrong key" in flagged[0]
    assert "q5-tests: negative discrimination" in flagged[1]


def test_the_options_are_counted_in_the_solutions_order(planted_class):
    """Each student saw q4's options in an order of their own (no class list); the shares
    are those of the options they chose in the solution's order, as planned."""
    chosen = list(planted_class["options"].values())
    rows = [r for r in planted_class["rows"]
            if r["question"] == "q4-tests" and r["option"] and r["option"] in "abcd"]
    assert [r["option"] for r in rows] == list("abcd")
    for j, row in enumerate(rows):
        assert float(row["share"]) == pytest.approx(chosen.count(j) / STUDENTS, abs=5e-4)
        assert row["key"] == ("yes" if j == 2 else "no")
    facility = float(_question(planted_class["rows"], "q4-tests")["facility"])
    assert facility == pytest.approx(chosen.count(2) / STUDENTS, abs=5e-4)


def test_the_page_is_the_instructors_and_nothing_in_it_runs(planted_class):
    page = (planted_class["root"] / "autograded" / ia.FOLDER / f"{ASSIGNMENT}.html").read_text()
    assert "For the instructor only" in page and "data:image/png;base64," in page
    assert "<script" not in page and "student-" not in page
