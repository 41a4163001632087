"""Run the cells of an assignment's source notebook in this process, as a fresh kernel would.

Fast (no kernel, no nbgrader): the set-up cell, then every answer cell (the solution with
its markers removed, or a replacement) and every test cell with its hidden part, in order
and in one namespace. ``memkit`` is taken out of ``sys.modules`` for the run and put back
after, so that a notebook sees it unimported, as in a new kernel (the notebooks that forbid
memkit check that no answer imported it). The nbgrader round trip of
``test_assignments.py`` grades the same notebooks for real.
"""

from __future__ import annotations

import contextlib
import io
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
MARKERS = re.compile(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$", re.M)


def notebook(session: str, name: str) -> pathlib.Path:
    return ROOT / "solutions" / session / f"{name}.ipynb"


def cells(path: pathlib.Path) -> dict[str, tuple[str, str]]:
    """{grade id: (cell type, source)}, in the order of the notebook."""
    nb = json.loads(pathlib.Path(path).read_text())
    out = {}
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
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


def run(path: pathlib.Path, answers: dict | None = None, printed: dict | None = None,
        namespace: dict | None = None) -> dict:
    """Run set-up, answers and tests; return {test grade id: None or the exception}.

    ``answers``: {answer grade id: source} replacing those solutions. ``printed``: a dict
    that receives {test grade id: what the test cell printed}. ``namespace``: the dict the
    cells run in (it holds the answers afterwards).
    """
    found = cells(path)
    namespace = {} if namespace is None else namespace
    namespace["__name__"] = "__main__"
    results = {}
    with fresh_memkit():
        exec(compile(found["setup"][1], "setup", "exec"), namespace)
        for gid, (kind, text) in found.items():
            if kind != "code" or gid == "setup":
                continue
            if gid.endswith("-tests"):
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
    return results


def solution(path: pathlib.Path, gid: str) -> str:
    """The solution of one answer cell, markers removed."""
    return code(cells(path)[gid][1])
