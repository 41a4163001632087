"""A name the notebook's set-up cell defines, used before that cell ran: say so.

A student who opens an assignment and runs a test cell first gets Python's bare
``NameError: name 'np' is not defined``. Loaded into the course's kernel as an IPython
extension (``--ext=memkit.setup_hint`` in ``jupyter/kernels/python3/kernel.json``, beside
memkit.progress), this module finishes the sentence when the missing name is one the
notebook's set-up cell defines::

    NameError: name 'np' is not defined: the notebook's set-up cell defines it (its first
    code cell, "import numpy as np ..."); run that cell first, or Run > Run All Above
    Selected Cell

The notebook is the kernel's session file (``JPY_SESSION_NAME``, which Jupyter Server
sets to its path); its set-up cell is its first code cell (an assignment's locked
``setup`` cell, a chapter's hidden imports), and the names it binds are read from its
source with :mod:`ast`. Any other NameError, or a notebook that cannot be read, is left
as Python reports it.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

#: where Jupyter Server tells a kernel which notebook it runs
SESSION_VARIABLE = "JPY_SESSION_NAME"


def setup_cell(path: str | os.PathLike) -> str | None:
    """The source of the first code cell of the notebook at ``path`` (``.ipynb``, or a MyST
    notebook ``.md`` as Jupytext reads it), or None."""
    path = Path(path)
    try:
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        elif path.suffix == ".md":
            import jupytext

            cells = jupytext.read(path, fmt="md:myst")["cells"]
        else:
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    for cell in cells:
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            return "".join(source) if isinstance(source, list) else str(source)
    return None


def bound_names(source: str) -> set[str]:
    """The names a cell's code binds: imports, assignments, definitions, loop targets."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def hint(name: str | None, notebook: str | os.PathLike | None) -> str | None:
    """What to add to ``NameError: name '<name>' is not defined`` in that notebook, or None."""
    source = setup_cell(notebook) if name and notebook else None
    if source is None or name not in bound_names(source):
        return None
    first = next((line.strip() for line in source.splitlines()
                  if line.strip() and not line.lstrip().startswith("#")), "")
    return (f"the notebook's set-up cell defines it (its first code cell, \"{first} ...\"); "
            "run that cell first, or Run > Run All Above Selected Cell")


def _show(shell, etype, value, tb, tb_offset=None) -> None:
    """IPython's handler for a NameError in a cell: the usual traceback, hint included."""
    extra = hint(getattr(value, "name", None), os.environ.get(SESSION_VARIABLE))
    if extra is not None:
        value = NameError(f"{value}: {extra}", name=value.name).with_traceback(tb)
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def load_ipython_extension(ipython) -> None:
    ipython.set_custom_exc((NameError,), _show)
