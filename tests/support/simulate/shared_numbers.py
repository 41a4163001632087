"""A classmate's answers copied: what a student hands in who took another student's values.

Every student draws their own numbers (``memkit.variants``), so the solutions
compute each student's own answers. ``copied_answers`` runs a source notebook's set-up and
solutions for one student (``neighbour``) in a forked child of this process and writes each
answer cell as that student's values, typed in: ``name = <literal>`` for every value an
answer defines, the functions and imports of the solution kept as they are (a function is
right or wrong whoever runs it). ``copied_notebook`` puts them in the release, as a student
who copied them would hand it in: graded for their own id, the questions whose answers
depend on the numbers lose their points.
"""

from __future__ import annotations

import ast
import copy
import math
import os
import sys

from tools.common import nbgrader_cells
from tools.grading.cells import cell_text
from tools.grading.forked import run_apart
from tools.grading.hidden import names_bound, solution_text

RUN_TIMEOUT = 300.0


def literal(value) -> str | None:
    """``value`` as Python source that rebuilds it (numpy arrays as ``np.array([...])``);
    None for what has no literal (a function, a module, an object)."""
    import numpy as np

    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, np.generic):
        return literal(value.item())
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, complex):
        return f"complex({literal(value.real)}, {literal(value.imag)})"
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufc":
            return None
        if value.dtype.kind in "biu" or (value.dtype.kind == "f" and np.isfinite(value).all()):
            return f"np.array({value.tolist()!r})"  # what the loop below writes, at C speed
        inner = literal(value.tolist())
        return None if inner is None else f"np.array({inner})"
    if isinstance(value, (list, tuple, set, frozenset)):
        parts = [literal(v) for v in value]
        if any(p is None for p in parts):
            return None
        if isinstance(value, list):
            return "[" + ", ".join(parts) + "]"
        if isinstance(value, tuple):
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        body = "{" + ", ".join(sorted(parts)) + "}" if parts else "set()"
        return body if isinstance(value, set) else f"frozenset({body})"
    if isinstance(value, dict):
        parts = [(literal(k), literal(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in parts):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in parts) + "}"
    return None


def _kept_code(text: str) -> list[str]:
    """The imports, functions and classes of a solution, as written."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    kept = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return [ast.get_source_segment(text, node) for node in tree.body if isinstance(node, kept)]


def typed_cell(text: str, ns: dict) -> str:
    """An answer cell as typed by a student who copies its values: the solution's imports,
    functions and classes as written, then ``name = <literal>`` for every other name it binds
    (read in ``ns``, right after the solution ran; names of one's own, ``_x``, left out)."""
    code = _kept_code(text)
    defined = {n.split(".")[0] for line in code for n in names_bound(line)}
    for name in sorted(names_bound(text) - defined):
        typed = literal(ns.get(name)) if not name.startswith("_") else None
        if typed is not None:
            code.append(f"{name} = {typed}")
    return "\n".join(code)


def copied_answers(source_nb: dict, neighbour: str, folder=None,
                   timeout: float = RUN_TIMEOUT) -> dict[str, str]:
    """{answer grade id: the cell as typed by a student who copied ``neighbour``'s values}.

    The set-up, the options of the questions and the solutions run for ``neighbour`` in a
    forked child (the solutions' reference code importable from ``folder``)."""

    def work():
        from memkit.variants import ENV

        os.environ[ENV] = neighbour
        os.environ["MPLBACKEND"] = "agg"
        if folder is not None:
            sys.path.insert(0, str(folder))
        ns: dict = {"__name__": "__main__"}
        found = {}
        for cell in source_nb.get("cells", []):
            if cell.get("cell_type") != "code" or (nbgrader_cells.is_grade(cell) and not nbgrader_cells.is_solution(cell)):
                continue
            if not nbgrader_cells.is_solution(cell):  # the set-up, the options of a question
                exec(compile(cell_text(cell), str(nbgrader_cells.grade_id(cell)), "exec"), ns)  # noqa: S102
                continue
            text = solution_text(cell)
            exec(compile(text, str(nbgrader_cells.grade_id(cell)), "exec"), ns)  # noqa: S102 - the solution
            found[nbgrader_cells.grade_id(cell)] = typed_cell(text, ns)
        return found

    result = run_apart(work, timeout)
    if not isinstance(result, dict):
        raise RuntimeError(f"the solutions could not be run for {neighbour!r}: {result}")
    return result


def copied_notebook(release: dict, answers: dict[str, str]) -> dict:
    """The release with the answer cells of ``answers`` (``copied_answers``) filled in."""
    nb = copy.deepcopy(release)
    for cell in nb["cells"]:
        gid = nbgrader_cells.grade_id(cell)
        if nbgrader_cells.is_solution(cell) and gid in answers:
            cell["source"] = answers[gid]
    return nb
