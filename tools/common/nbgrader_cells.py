"""What nbgrader's metadata says a cell is, read the way nbgrader reads it.

``metadata(cell)`` is a cell's ``metadata.nbgrader`` as a dict (``{}`` where there is none
or it is not a mapping: a notebook from a student may hold anything); ``grade_id`` and
``points`` read two of its fields. The predicates are nbgrader's own
(``nbgrader.utils``), given that dict, so a plain dict from ``json.loads`` and an
``nbformat`` node answer alike:

``is_grade``     a graded cell (tests, or an answer graded by hand)
``is_solution``  a cell the student writes
``is_locked``    a cell nbgrader restores from the release: never a solution cell; always
                 a grade cell that is not one; otherwise its ``locked`` flag
``is_task``      a task cell (graded by hand, no answer cell)
``is_test``      a code cell of tests: graded, not a solution
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader import utils


def metadata(cell) -> dict:
    """The cell's ``metadata.nbgrader`` ({} if absent or not a mapping)."""
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
    return nbg if isinstance(nbg, dict) else {}


def grade_id(cell):
    """The cell's ``grade_id`` as written (None if it has none)."""
    return metadata(cell).get("grade_id")


def points(cell) -> float:
    """The cell's ``points`` (0 if it has none)."""
    return float(metadata(cell).get("points") or 0)


def _node(cell) -> NotebookNode:
    return NotebookNode(metadata=NotebookNode(nbgrader=NotebookNode(metadata(cell))))


def is_grade(cell) -> bool:
    return bool(utils.is_grade(_node(cell)))


def is_solution(cell) -> bool:
    return bool(utils.is_solution(_node(cell)))


def is_locked(cell) -> bool:
    return bool(utils.is_locked(_node(cell)))


def is_task(cell) -> bool:
    return bool(utils.is_task(_node(cell)))


def is_test(cell) -> bool:
    return cell.get("cell_type") == "code" and is_grade(cell) and not is_solution(cell)
