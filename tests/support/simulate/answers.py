"""The honest students of a simulated class: answers filled in, and the points they earn.

An answer is the solution cell without nbgrader's markers; a question is an answer cell
with the test cells after it; a later question that reads a name only an earlier answer
defines depends on it, so a blank earlier answer costs the later one its points too.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

from tools.common import nbgrader_cells
from tools.grading.cells import cell_text
from tools.grading.hidden import solution_text as answer_text  # the solution without markers


@dataclass
class Question:
    """One answer cell of a notebook and the points of the test cell(s) that grade it."""

    answer_id: str
    code: bool
    points: float  # autograded points that depend on this answer
    test_ids: list[str] = field(default_factory=list)


def questions(source: dict) -> list[Question]:
    """The questions of a source notebook: each answer cell with the test cells after it."""
    found: list[Question] = []
    for cell in source["cells"]:
        if nbgrader_cells.is_solution(cell) and not nbgrader_cells.is_grade(cell):
            found.append(Question(nbgrader_cells.grade_id(cell), cell["cell_type"] == "code", 0.0))
        elif nbgrader_cells.is_grade(cell) and not nbgrader_cells.is_solution(cell) and found:
            found[-1].points += nbgrader_cells.points(cell)
            found[-1].test_ids.append(nbgrader_cells.grade_id(cell))
        elif nbgrader_cells.is_grade(cell) and nbgrader_cells.is_solution(cell):
            # a written answer: graded by hand, no autograded points
            found.append(Question(nbgrader_cells.grade_id(cell), False, 0.0))
    return found


def _names(text: str) -> tuple[set[str], set[str], set[str]]:
    """(names a cell defines, of those the functions and classes, names it reads)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set(), set(), set()
    defined, functions, read = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (defined if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
            functions.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return defined, functions, read


def dependencies(source: dict, release: dict | None = None) -> dict[str, set[str]]:
    """For each answer cell, the earlier answer cells whose answers it needs to pass.

    A question depends on an earlier one when its answer or test cells read a name that
    only the earlier answer provides: a name its solution defines that the released cell
    does not, or a function the released cell defines only as a stub (exit test 7, q4
    calls the ``write`` of q3). A blank or broken earlier answer then costs the later
    question its points too.
    """
    released = {}
    for cell in (release or {"cells": []})["cells"]:
        if nbgrader_cells.is_solution(cell):
            released[nbgrader_cells.grade_id(cell)] = cell_text(cell)
    texts = {nbgrader_cells.grade_id(c): cell_text(c) for c in source["cells"]}
    provides: dict[str, set[str]] = {}
    needs: dict[str, set[str]] = {}
    for q in questions(source):
        if not q.code:
            continue
        defined, _, read = _names(answer_text(next(
            c for c in source["cells"] if nbgrader_cells.grade_id(c) == q.answer_id)))
        stub_defined, stub_functions, _ = _names(released.get(q.answer_id, ""))
        provides[q.answer_id] = (defined - stub_defined) | (defined & stub_functions)
        for test_id in q.test_ids:
            test_defined, _, test_read = _names(texts.get(test_id, ""))
            read |= test_read - test_defined
        needs[q.answer_id] = read - defined
    found: dict[str, set[str]] = {}
    earlier: list[str] = []
    for answer_id, wanted in needs.items():
        direct = {e for e in earlier if provides[e] & wanted}
        found[answer_id] = direct | {x for e in direct for x in found[e]}
        earlier.append(answer_id)
    return found


def earned_points(source: dict, answered: set[str], release: dict | None = None) -> float:
    """Autograded points of the questions answered whose needed earlier answers are too."""
    needs = dependencies(source, release)
    return sum(
        q.points
        for q in questions(source)
        if q.answer_id in answered and needs.get(q.answer_id, set()) <= answered
    )


def autograded_points(source: dict) -> float:
    """All the points the autograder can give on a notebook (written answers excluded)."""
    return sum(q.points for q in questions(source))


def student_notebook(source: dict, release: dict, answered: set[str]) -> dict:
    """The release with the answers of ``answered`` (grade ids of answer cells) filled in."""
    by_id = {
        nbgrader_cells.grade_id(c): c for c in source["cells"] if nbgrader_cells.is_solution(c)
    }
    nb = copy.deepcopy(release)
    for cell in nb["cells"]:
        grade_id = nbgrader_cells.grade_id(cell)
        if nbgrader_cells.is_solution(cell) and grade_id in answered and grade_id in by_id:
            cell["source"] = answer_text(by_id[grade_id])
    return nb


def index_of(nb: dict, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb["cells"]) if nbgrader_cells.grade_id(c) == grade_id)


def code_questions(source: dict) -> list[Question]:
    return [q for q in questions(source) if q.code and q.test_ids]

