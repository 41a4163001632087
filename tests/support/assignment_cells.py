"""Run the cells of an assignment's source notebook in this process, as a fresh kernel would.

Fast (no kernel, no nbgrader): the set-up cell, then every answer cell (the solution with
its markers removed, or a replacement) and every test cell with its hidden part, in order
and in one namespace, for one student's numbers (``STUDENT`` unless told another). ``memkit`` is taken out of ``sys.modules`` for the run and put back
after, so that a notebook sees it unimported, as in a new kernel (the notebooks that forbid
memkit check that no answer imported it). The nbgrader round trip of
``test_assignments.py`` grades the same notebooks for real.
"""

from __future__ import annotations

import contextlib
import io
import json
import pathlib
import random
import re
import sys

from dataclasses import dataclass

from tools.common import nbgrader_cells
from tools.common import student_run
from .simulate.shared_numbers import typed_cell

ROOT = pathlib.Path(__file__).resolve().parents[2]
MARKERS = re.compile(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$", re.M)


def notebook(session: str, name: str) -> pathlib.Path:
    return ROOT / "solutions" / session / f"{name}.ipynb"


def cells(path: pathlib.Path) -> dict[str, tuple[str, str]]:
    """{grade id: (cell type, source)}, in the order of the notebook."""
    nb = json.loads(pathlib.Path(path).read_text())
    out = {}
    for cell in nb["cells"]:
        gid = nbgrader_cells.grade_id(cell)
        out[gid] = (cell["cell_type"], "".join(cell["source"]))
    return out


def code(text: str) -> str:
    """A cell's source without nbgrader's markers (the solution or the hidden tests kept)."""
    return MARKERS.sub("", text)


def visible(text: str) -> str:
    """The part of a test cell a student sees."""
    return text.split("### BEGIN HIDDEN TESTS")[0]


@contextlib.contextmanager
def fresh_memkit():
    """memkit's modules out of ``sys.modules`` (a new kernel's state), put back afterwards."""
    def ours(name):
        return name == "memkit" or name.startswith("memkit.")

    saved = {name: module for name, module in sys.modules.items() if ours(name)}
    for name in saved:
        del sys.modules[name]
    try:
        yield
    finally:
        for name in [n for n in sys.modules if ours(n)]:
            del sys.modules[name]
        sys.modules.update(saved)


STUDENT = "student-01"  # the id a run draws the numbers of, unless told another
# 20 random student ids: the class the tests draw numbers for, on the class list in this
# order (seats 1 to 20: memkit.class_list); other ids have no seat
RANDOM_IDS = [f"u{random.Random(30 + i).getrandbits(40):010x}" for i in range(20)]
SEATS = {student: seat for seat, student in enumerate(RANDOM_IDS, start=1)}


def as_student(student: str, folder: pathlib.Path | None = None):
    """The numbers of ``student`` drawn (``memkit.variants``), with their seat of ``SEATS``
    if they have one, and the reference code of the solutions beside the notebook
    (``answer_key.py`` in ``folder``) importable, for a run."""
    return student_run.as_student(student, folder, SEATS.get(student))


def run(path: pathlib.Path, answers: dict | None = None, printed: dict | None = None,
        namespace: dict | None = None, student: str = STUDENT, typed: dict | None = None) -> dict:
    """Run set-up, answers and tests; return {test grade id: None or the exception}.

    ``answers``: {answer grade id: source} replacing those solutions. ``printed``: a dict
    that receives {test grade id: what the test cell printed}. ``namespace``: the dict the
    cells run in (it holds the answers afterwards). ``student``: whose numbers the set-up
    draws. Locked cells other than the tests (the set-up, the options of a question) run
    in order, as in a kernel. ``typed``: a dict that receives {answer grade id: the answers
    as a classmate would copy them, typed in} (``tests.support.simulate.shared_numbers``).
    """
    found = cells(path)
    namespace = {} if namespace is None else namespace
    namespace["__name__"] = "__main__"
    results = {}
    with fresh_memkit(), as_student(student, pathlib.Path(path).parent):
        for gid, (kind, text) in found.items():
            if kind != "code":
                continue
            if gid == "setup" or gid.endswith("-options"):
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(text, gid, "exec"), namespace)
            elif gid.endswith("-tests"):
                out = io.StringIO()
                try:
                    with contextlib.redirect_stdout(out):
                        exec(compile(code(text), gid, "exec"), namespace)
                    results[gid] = None
                except Exception as error:  # noqa: BLE001 - any failure loses the points
                    results[gid] = error
                if printed is not None:
                    printed[gid] = out.getvalue()
            else:
                source = (answers or {}).get(gid, code(text))
                try:  # nbgrader runs on past an answer that raises: its test fails
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(compile(source, gid, "exec"), namespace)
                except Exception:  # noqa: BLE001
                    pass
                if typed is not None:
                    typed[gid] = typed_cell(source, namespace)
    return results


@dataclass
class Solved:
    """The solutions of a notebook run for one student (``solved``)."""

    results: dict  # {test grade id: None or the exception}
    typed: dict  # {answer grade id: the answers typed in as values, as a classmate copies them}
    numbers: object  # the notebook's memkit.variants.Numbers: what was drawn, the options
    values: dict  # {name: value} of the small plain answers and of the tests' _table


_SOLVED: dict = {}


def solved(path: pathlib.Path, student: str) -> Solved:
    """``run`` of the solutions for ``student``, once per test session (several test modules
    ask for the same 20 students' runs)."""
    key = (str(path), student)
    if key not in _SOLVED:
        namespace: dict = {}
        typed: dict = {}
        results = run(path, namespace=namespace, student=student, typed=typed)
        values = {name: value for name, value in namespace.items()
                  if (not name.startswith("_") or name == "_table")
                  and isinstance(value, (str, int, float, set, frozenset, dict, tuple, list))}
        _SOLVED[key] = Solved(results, typed, namespace["numbers"], values)
    return _SOLVED[key]


def solution(path: pathlib.Path, gid: str) -> str:
    """The solution of one answer cell, markers removed."""
    return code(cells(path)[gid][1])
