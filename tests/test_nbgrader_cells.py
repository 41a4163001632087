"""tools.common.nbgrader_cells: nbgrader's own predicates, on any cell a notebook may hold.

A cell read with ``json.loads`` and one read with nbformat answer alike; a cell whose
metadata is missing or not a mapping (a student's notebook may hold anything) is no
nbgrader cell; and on every notebook of the course the predicates say what the flags
the course writes say, so routing the readers through nbgrader's changed no answer.
"""

from __future__ import annotations

import json
import pathlib

import nbformat
import pytest

from tools.common import nbgrader_cells as cells

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "solutions").rglob("*.ipynb")) + sorted((ROOT / "exercises").rglob("*.ipynb"))


@pytest.mark.parametrize("cell", [
    {}, {"metadata": None}, {"metadata": []}, {"metadata": {"nbgrader": "grade"}},
    {"metadata": {"nbgrader": ["grade", True]}}, "not a cell", None,
])
def test_a_cell_without_usable_metadata_is_no_nbgrader_cell(cell):
    assert cells.metadata(cell) == {}
    assert cells.grade_id(cell) is None and cells.points(cell) == 0
    assert not (cells.is_grade(cell) or cells.is_solution(cell) or cells.is_locked(cell)
                or cells.is_task(cell))


def test_nbgraders_rule_for_locked_cells():
    def cell(**meta):
        return {"cell_type": "code", "metadata": {"nbgrader": meta}}
    assert cells.is_locked(cell(grade=True, solution=False))  # tests: always locked
    assert not cells.is_locked(cell(solution=True, locked=True))  # an answer: never
    assert cells.is_locked(cell(locked=True)) and not cells.is_locked(cell())
    assert cells.is_test(cell(grade=True, points=2)) and cells.points(cell(grade=True, points=2)) == 2
    assert not cells.is_test(cell(grade=True, solution=True))
    assert not cells.is_test({"cell_type": "markdown", "metadata": {"nbgrader": {"grade": True}}})


def test_on_the_courses_notebooks_the_predicates_say_what_the_flags_say():
    assert NOTEBOOKS
    seen = 0
    for path in NOTEBOOKS:
        plain = json.loads(path.read_text())["cells"]
        node = nbformat.read(path, as_version=4).cells
        for raw, read in zip(plain, node):
            meta = raw.get("metadata", {}).get("nbgrader")
            if meta is None:
                continue
            seen += 1
            answers = (cells.is_grade(raw), cells.is_solution(raw), cells.is_locked(raw),
                       cells.grade_id(raw))
            assert answers == (bool(meta.get("grade")), bool(meta.get("solution")),
                               bool(meta.get("locked")), meta.get("grade_id")), (path, meta)
            assert answers == (cells.is_grade(read), cells.is_solution(read),
                               cells.is_locked(read), cells.grade_id(read))
    assert seen > 100
