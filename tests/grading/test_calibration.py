"""The calibration of the graded questions (``make calibrate``, ``tools.grading.calibration``).

- On toy questions it finds what it is for: a tolerance fixed around one seed's value rejects
  honest answers, a test whose band holds the theory accepts it as the measurement, and a
  test that derives its tolerance and asks for the draws passes every honest answer and
  rejects the slip; the band it reports is the test's, in honest standard deviations.
- The catalog names questions, answers and notebooks that exist; the questions it lists as
  common to everyone are exactly those that draw nothing per student, and the instructor's
  guide's table of the questions that vary is the one it makes.
- The smaller sample of the full run: every graded question of the nine sessions for a few
  ids and seeds; no failure but those the catalog lists with their reason.
- The report: the CSVs' rows and the page, escaped and cleaned, with a plot per measured
  answer.
"""

from __future__ import annotations

import csv
import json
import re

import pytest

from tools import ROOT
from tools.common import student_run
from tools.grading.calibration import __main__ as cli
from tools.grading.calibration import book, catalog, engine, report, run

SMALL_IDS, SMALL_SEEDS = 8, 3  # the suite's sample (the full run: 200 ids, 10 seeds)


def _cell(kind: str, gid: str, text: str) -> dict:
    meta = {"grade_id": gid, "locked": kind != "answer", "solution": kind == "answer",
            "grade": kind == "test", "schema_version": 3}
    if kind == "test":
        meta["points"] = 1
    return {"cell_type": "code", "id": gid, "metadata": {"nbgrader": meta}, "source": text,
            "outputs": [], "execution_count": None}


SETUP = """import math
import numpy as np
from memkit.variants import Numbers
numbers = Numbers("session-0/exercises")
d = numbers.pick("q1, q2, q3", "d", (10, 100, 1000))  # far apart: a classmate's answer is off
"""

TOY = [
    # a tolerance typed around the solution's own seed: 0.05 where a mean of 400 squares has a
    # relative spread of sqrt(2/400) = 0.07
    ("q1", "### BEGIN SOLUTION\nmeasured1 = d * float(np.mean(np.random.default_rng(0).standard_normal(400) ** 2))\n"
           "### END SOLUTION",
     "### BEGIN HIDDEN TESTS\n_once = float(np.mean(np.random.default_rng(0).standard_normal(400) ** 2))\n"
     "assert abs(measured1 / d - _once) < 0.05, 'q1: off'\n### END HIDDEN TESTS"),
    # a derived band (6 standard errors) that holds the theory value
    ("q2", "### BEGIN SOLUTION\npredicted2 = float(d)\n"
           "measured2 = d * float(np.mean(np.random.default_rng(1).standard_normal(400) ** 2))\n### END SOLUTION",
     "### BEGIN HIDDEN TESTS\nassert predicted2 == d, 'q2: theory'\n"
     "assert abs(measured2 / d - 1) < 6 * math.sqrt(2 / 400), 'q2: off'\n### END HIDDEN TESTS"),
    # the same band, and the draws asked for: the mean must be theirs
    ("q3", "### BEGIN SOLUTION\npredicted3 = float(d)\n"
           "draws3 = d * np.random.default_rng(2).standard_normal(400) ** 2\nmeasured3 = float(draws3.mean())\n"
           "### END SOLUTION",
     "### BEGIN HIDDEN TESTS\n_x = np.asarray(draws3, dtype=float)\n"
     "assert _x.shape == (400,) and abs(measured3 - _x.mean()) < 1e-9 * d, 'q3: not your mean'\n"
     "assert abs(measured3 / d - 1) < 6 * math.sqrt(2 / 400), 'q3: off'\n### END HIDDEN TESTS"),
]


@pytest.fixture
def toy(tmp_path, monkeypatch):
    cells = [_cell("locked", "setup", SETUP)]
    for qid, answer, test in TOY:
        cells += [_cell("answer", qid, answer), _cell("test", f"{qid}-tests", test)]
    folder = tmp_path / "session-0"
    folder.mkdir()
    path = folder / "exercises.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    monkeypatch.setitem(catalog.SLIPS, "session-0/exercises", {
        "q2": [catalog.slip(catalog.THEORY, measured2="predicted2")],
        "q3": [catalog.slip(catalog.THEORY, measured3="predicted3")],
    })
    ids = cli.sample_ids(20)
    results = run.calibrate(path, ids, 10, set(ids), book.Printed("none"))
    return {r.question: r for r in results}


def test_a_tolerance_fixed_around_one_seed_rejects_honest_answers(toy):
    q1 = toy["q1"]
    assert q1.kind == "Monte Carlo" and q1.honest == 200
    assert 40 < q1.false_rejects < 160, q1.false_rejects  # about half: 0.05 is 0.7 sd
    assert ("honest", f"{q1.false_rejects} of 200 honest answers rejected") in q1.failures()
    (band,) = q1.bands.values()
    assert "0.05" in band.rule
    below, above = band.sigmas()
    assert 0.3 < below < 1.5 and 0.3 < above < 1.5, (below, above)


def test_a_band_that_holds_the_theory_accepts_it_as_the_measurement(toy):
    q2 = toy["q2"]
    assert q2.false_rejects == 0
    theory = q2.slips[catalog.THEORY]
    assert theory.tried == 20 and theory.accepted == 20
    assert [kind for kind, _ in q2.failures()] == [catalog.THEORY]


def test_a_derived_band_and_the_draws_pass_the_honest_and_reject_the_slips(toy):
    q3 = toy["q3"]
    assert q3.honest == 200 and q3.false_rejects == 0
    assert q3.slips[catalog.THEORY].accepted == 0
    assert q3.slips["another id's answers"].accepted == 0
    assert q3.slips["the default id's answers"].accepted == 0
    assert q3.failures() == []
    assert q3.distinct_keys == 3 and q3.largest_share < 20  # one key per d
    (band,) = q3.bands.values()
    assert band.name == "draws3, measured3"
    below, above = band.sigmas()
    assert 4 < below < 8 and 4 < above < 8, (below, above)  # the test's 6 standard errors


def test_a_seed_is_moved_only_in_the_solution_and_only_what_it_changes_runs_again():
    question = engine.Question("session-0/x", "q1", "rng = np.random.default_rng(56)\n"
                               "### BEGIN SOLUTION\nslow = expensive(3)\n"
                               "a = memory.mc(M, d, trials=10, seed=M)\nb = a + 1\n### END SOLUTION",
                               "", ["a", "b"], [])
    again = question.reseeded(12345)
    assert "default_rng(56)" not in again and "expensive" not in again
    assert "seed=(M) + 12345" in again and "b = a + 1" in again
    assert engine.seed_offset("alice", 1) != engine.seed_offset("bob", 1) != engine.seed_offset("bob", 2)


def _notebooks() -> dict[str, engine.Notebook]:
    return {nb.name: nb for nb in map(engine.Notebook.read, cli.notebooks())}


def test_the_catalog_names_what_exists():
    notebooks = _notebooks()
    for name, questions in catalog.SLIPS.items():
        for qid, slips in questions.items():
            answers = notebooks[name].questions[qid].names
            for each in slips:
                assert {n for n, _ in each.changes} <= set(answers), (name, qid, each.label)
    for (name, qid), names in catalog.FREE.items():
        assert names <= set(notebooks[name].questions[qid].names), (name, qid)
    for name, qid, _ in catalog.EXPLAINED:
        assert qid in notebooks[name].questions, (name, qid)
    for (name, qid), known in catalog.KNOWN.items():
        labels = {each.label for each in catalog.SLIPS.get(name, {}).get(qid, [])}
        for kind, why in known.items():
            assert qid in notebooks[name].questions and why.strip(), (name, qid)
            assert kind in {"honest", "shared", catalog.BOOK, "another id's answers",
                            "the default id's answers"} | labels, (name, qid, kind)
    for name, questions in catalog.ORDERED.items():
        assert questions <= set(notebooks[name].questions), name
    for name, questions in catalog.COMMON.items():
        assert set(questions) <= set(notebooks[name].questions) and all(questions.values()), name


def test_the_common_questions_are_those_drawn_for_no_one():
    for path in cli.notebooks():
        nb = engine.Notebook.read(path)
        student = cli.sample_ids(1)[0]
        with student_run.as_student(student, path.parent):
            solved = engine.solve(nb, student)
        drawn = set(solved.before_test[list(nb.questions)[-1]]["numbers"].varied())
        common = set(catalog.COMMON.get(nb.name, {}))
        assert common == set(nb.questions) - drawn, nb.name


def test_the_guides_table_of_the_questions_that_vary_is_the_catalogs():
    text = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
    section = text.split("## Each student's own numbers", 1)[1].split("\n## ", 1)[0]
    shown = [line.strip() for line in section.splitlines() if line.strip().startswith("|")]
    assert shown == cli.table().splitlines()


@pytest.fixture(scope="module")
def small_sample():
    ids = cli.sample_ids(SMALL_IDS)
    return cli.calibrate(ids, SMALL_SEEDS, band_ids=2, jobs=1)


def test_the_small_sample_calibrates_every_graded_question(small_sample):
    found = {(r.notebook, r.question) for r in small_sample}
    assert found == {(nb.name, q) for nb in _notebooks().values() for q in nb.questions}
    for r in small_sample:
        assert r.honest >= SMALL_IDS and not r.problem, (r.notebook, r.question, r.problem)
        # each question that varies has slips tried (a common one may have none: the same
        # fixed fact for everyone, answered in names)
        assert r.slips or r.common, (r.notebook, r.question)
        if r.kind == "Monte Carlo":  # and the other order of a dict, once per id
            assert SMALL_IDS * SMALL_SEEDS <= r.honest <= SMALL_IDS * (SMALL_SEEDS + 1)


def test_the_small_sample_finds_no_failure_the_catalog_does_not_list(small_sample):
    unlisted = {f"{r.notebook} {r.question}": r.unlisted() for r in small_sample if r.unlisted()}
    assert not unlisted, unlisted


def test_the_report_writes_the_csvs_and_a_clean_page_with_the_plots(small_sample, tmp_path):
    hostile = run.Result("session-9/exercises", "q99", "exact", ids=1, honest=1)
    hostile.slips["<script>alert(1)</script>"] = run.SlipResult("<script>alert(1)</script>", 1, 1)
    paths = report.write([*small_sample, hostile], tmp_path, {"ids": str(SMALL_IDS)})
    rows = list(csv.DictReader(open(paths[0], encoding="utf-8")))
    assert len(rows) == len(small_sample) + 1 and set(report.COLUMNS) == set(rows[0])
    page = paths[2].read_text(encoding="utf-8")
    assert "<script" not in page and "&lt;script&gt;" in page
    measured = sum(1 for r in small_sample for b in r.bands.values()
                   if b.relative and max(b.high) - min(b.low) >= 1e-3)
    assert measured and len(re.findall(r"<img [^>]*src=\"data:image/png;base64,", page)) == measured
    table = report.session_table(small_sample)
    assert [row["session"] for row in table] == [f"session-{n}" for n in range(1, 10)]


def test_another_seed_copies_only_what_its_statements_read_before_binding():
    text = ("g = np.random.default_rng(5)\ndraws = np.zeros(3)\nfor i, d in enumerate(dims):\n"
            "    pairs = g.standard_normal(d)\n    pairs /= 2\n    draws[i] = pairs.sum()\n"
            "kept[0] = 1\ntotal += 1\nlisted.append(2)\nfresh = fresh + 1\n")
    read = engine.read_before_bound(text)
    assert {"kept", "total", "listed", "fresh", "dims"} <= read
    assert not read & {"g", "draws", "pairs", "i", "d"}
    # a name bound only inside a function or a comprehension, or a target that changes a
    # value in place, binds nothing at the top level: its value there is copied
    scoped = ("def f():\n    a = 1\n    return a\nb = [c for c in range(3)]\n"
              "e, h[0] = 1, 2\na[0] = 1\nc.append(2)\n")
    assert {"a", "c", "h"} <= engine.read_before_bound(scoped)
