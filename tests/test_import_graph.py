"""The modules of tools/ import each other one way: no cycle (issue 17, item 3).

Every import counts, a lazy one inside a function too (``from tools import x`` in a
function is still a dependency of the module). Each module of tools/ must also import on
its own, and each stage of ``tools.grading`` says in its docstring what it depends on.
"""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, pathlib.Path]:
    return {module_name(p): p for p in sorted(TOOLS.rglob("*.py"))}


def imports_of(path: pathlib.Path, known: set[str], source: str | None = None) -> set[str]:
    """The modules of ``known`` that ``path`` imports (anywhere in it), and their packages."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    text = path.read_text() if source is None else source
    for node in ast.walk(ast.parse(text)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            # importing a.b.c runs a/__init__ and a/b/__init__ too
            pieces = target.split(".")
            for i in range(1, len(pieces) + 1):
                candidate = ".".join(pieces[:i])
                if candidate in known and candidate != name:
                    found.add(candidate)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    edges = {name: imports_of(path, known) for name, path in mods.items()}
    # a submodule's import runs its packages' __init__ first
    for name in mods:
        parts = name.split(".")
        for i in range(1, len(parts)):
            parent = ".".join(parts[:i])
            if parent in known:
                edges[name].add(parent)
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_lazy_and_relative_imports_count():
    known = {"tools", "tools.x", "tools.y", "tools.p", "tools.p.a", "tools.p.b"}
    lazy = "def f():\n    from tools import y\n    return y\n"
    assert imports_of(TOOLS / "x.py", known, lazy) == {"tools", "tools.y"}
    relative = "from . import a\nfrom .b import thing\n"
    assert imports_of(TOOLS / "p" / "c.py", known, relative) == {
        "tools", "tools.p", "tools.p.a", "tools.p.b"
    }
    assert imports_of(TOOLS / "x.py", known, "import json\nimport tools.p.b\n") == {
        "tools", "tools.p", "tools.p.b"
    }


def test_tools_import_graph_has_no_cycle():
    edges = graph()
    assert "tools.grading.cli" in edges and "tools.assignments" in edges
    # the two cycles of issue 17 are gone
    assert "tools.assignments" not in edges["tools.session_pages"]
    assert "tools.grading.pipeline" in edges and "tools.cluster" in edges["tools.grading.pipeline"]
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_grading_package_init_imports_no_stage():
    # the stages import tools.grading's __init__; it must import none of them back
    edges = graph()
    assert not {e for e in edges["tools.grading"] if e.startswith("tools.grading.")}


STAGES = sorted(n for n in modules() if n.startswith("tools.grading."))


@pytest.mark.parametrize("name", STAGES)
def test_each_stage_imports_and_says_what_it_depends_on(name):
    module = importlib.import_module(name)
    doc = module.__doc__ or ""
    assert doc.strip(), f"{name} has no docstring"
    if name != "tools.grading.__main__":
        assert "Depends on" in doc or "Stage" in doc, f"{name}: say its stage and dependencies"
    # every tools module it imports is named in its docstring
    for dep in imports_of(modules()[name], set(modules())):
        if dep in ("tools", "tools.grading"):
            continue
        assert dep in doc, f"{name} imports {dep} but its docstring does not say so"


ONE_WAY = ["tools.layout", "tools.session_pages", "tools.assignments", "tools.cluster"]


@pytest.mark.parametrize("name", ONE_WAY)
def test_the_modules_of_the_former_cycles_import_on_their_own(name):
    assert importlib.import_module(name).__doc__
