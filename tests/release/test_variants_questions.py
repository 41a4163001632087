"""Every student's questions have their own numbers, checked in-process.

The solutions of every notebook run for 20 random student ids (``assignment_cells.solved``,
shared with ``test_questions.py`` and the round trip of ``test_assignments.py``, which
grades the same ids with nbgrader):

- each id's solutions pass every test, hidden parts included: the reference answers follow
  the numbers drawn for the id in use;
- a question drawn per student (its numbers or its options, ``Numbers.varied``) has answers
  that differ from one student to the next, and a question that is not is the same for all;
- a classmate's values typed in (``simulate.shared_numbers``) lose exactly the questions whose
  answers differ between the two students, and keep the others;
- two students seldom draw the same numbers for a question (never its random data);
- the instructor's guide lists the questions that vary.
"""

from __future__ import annotations

import itertools
import json
import pathlib
import re

import numpy as np
import pytest

from support import assignment_cells as nbcells
from tools.grading import hidden

# one worker with test_questions.py: both read the 20 ids' runs of the solutions, made once
pytestmark = pytest.mark.xdist_group("test_questions")

SOURCES = sorted((nbcells.ROOT / "solutions").glob("session-*/*.ipynb"))
IDS = [f"{p.parent.name}/{p.stem}" for p in SOURCES]
CLASS = nbcells.RANDOM_IDS
A, B = CLASS[0], CLASS[1]  # the student copied and the student who copies
COINCIDE = 0.35  # at most this share of pairs of students may have the same answer to a varied question
SAME_NUMBERS = 0.25  # and the same numbers for it


def answer_cells(path) -> list[str]:
    return [gid for gid, (kind, text) in nbcells.cells(path).items()
            if kind == "code" and f"{gid}-tests" in nbcells.cells(path)]


def varied(path) -> set[str]:
    return set(nbcells.solved(path, CLASS[0]).numbers.varied())


@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_the_solutions_pass_every_test_for_20_random_ids(path):
    for student in CLASS:
        results = nbcells.solved(path, student).results
        failing = {k: repr(e)[:200] for k, e in results.items() if e is not None}
        assert results and not failing, (student, failing)


def graded(path, student: str, gid: str) -> dict:
    """The values a student's answer cell gives the names its tests read, typed in."""
    source = json.loads(pathlib.Path(path).read_text())
    names = set()
    for test_gid, (kind, text) in nbcells.cells(path).items():
        if test_gid == f"{gid}-tests":
            names |= set(hidden.exported_names(source, text)[0])
    typed = nbcells.solved(path, student).typed[gid]
    return {line.split(" = ", 1)[0]: line for line in typed.splitlines()
            if " = " in line and line.split(" = ", 1)[0] in names}


@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_a_question_drawn_per_student_differs_and_the_others_do_not(path):
    """The answers of a question drawn per student are the same for few pairs of the 20 ids
    (at most ``COINCIDE``: two students share the key of a four-option question one time in
    four); those of a question that is not drawn are the same for everyone."""
    drawn = varied(path)
    assert drawn, "every notebook has questions of each student's own"
    for gid in answer_cells(path):
        values = [graded(path, s, gid) for s in CLASS]
        if gid in drawn:
            same = sum(a == b for a, b in itertools.combinations(values, 2))
            assert same <= COINCIDE * len(CLASS) * (len(CLASS) - 1) / 2, (gid, same)
        else:
            assert all(v == values[0] for v in values), f"{gid} is not drawn per student, yet its answers differ"


def _draws(numbers, question: str) -> list:
    """What was drawn for ``question`` with numbers: the values of the draws of its labels."""
    found = []
    for label, values in numbers.drawn.items():
        if question in re.findall(r"\bq\d+\b", label):
            for value in values.values():
                parts = getattr(value, "parts", None)
                found.append([np.asarray(p).tolist() for p in parts] if parts
                             else getattr(value, "seed", value))
    return found


@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_two_students_seldom_draw_the_same_numbers(path):
    """Two of the 20 ids draw the same numbers for a question at most one time in four (the
    questions with one small parameter; random data are never the same)."""
    runs = [nbcells.solved(path, s).numbers for s in CLASS]
    for question in runs[0].varied():
        draws = [repr(_draws(n, question)) for n in runs]
        if draws[0] == "[]":
            continue  # options only: their orders are the test of test_questions.py
        same = sum(a == b for a, b in itertools.combinations(draws, 2))
        assert same <= SAME_NUMBERS * len(CLASS) * (len(CLASS) - 1) / 2, (question, same)


@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_a_classmates_values_lose_exactly_the_questions_whose_answers_differ(path):
    """What ``A`` would hand in, typed in by ``B``: the questions whose answers differ between
    the two lose their points, the others keep them (a function is right for everyone; two
    students may share the key of a multiple-choice question, one time in four for four
    options, or draw the same small parameter)."""
    theirs = nbcells.solved(path, A).typed
    results = nbcells.run(path, answers=theirs, student=B)
    lost = {gid[: -len("-tests")] for gid, e in results.items() if e is not None}
    differ = {gid for gid in answer_cells(path) if graded(path, A, gid) != graded(path, B, gid)}
    assert lost == differ, {"lost but the same": lost - differ, "kept but different": differ - lost}
    assert lost, "the notebook has questions of each student's own"


def readme_table() -> dict[str, set[str]]:
    """The instructor's guide's table of the questions each notebook draws per student."""
    text = (nbcells.ROOT / "docs" / "instructor.md").read_text()
    section = text.split("## Each student's own numbers", 1)[1].split("\n## ", 1)[0]
    found = {}
    for line in section.splitlines():
        m = re.match(r"\s*\|\s*(\d+)\s*\|([^|]*)\|([^|]*)\|", line)
        if m:
            for name, cell in (("exit-test", m.group(2)), ("exercises", m.group(3))):
                found[f"session-{m.group(1)}/{name}"] = {f"q{n}" for n in re.findall(r"\d+", cell)}
    return found


def test_the_readme_says_which_questions_vary():
    table = readme_table()
    assert set(table) == set(IDS)
    for path, where in zip(SOURCES, IDS):
        assert table[where] == varied(path) & set(answer_cells(path)), where


def test_each_solution_notebook_draws_for_its_own_name():
    for path in SOURCES:
        setup = nbcells.cells(path)["setup"][1]
        assert f'numbers = Numbers("{path.parent.name}/{path.stem}")' in setup
        assert setup.rstrip().endswith("numbers.show()") or "numbers.show()\n\n# memkit is not allowed" in setup
        json.loads(path.read_text())
