"""The modules of tools/ import each other one way: no cycle, no upward arrow.

Every import counts, a lazy one inside a function too (``from tools import x`` in a
function is still a dependency of the module). Each module of ``tools.grading`` must also
import on its own and say what it does in a docstring.

tools/ holds one package per person it serves. Each package's ``__init__`` lists its
modules in the order data flows through them, and a module imports only the modules
listed above it; between packages, only the arrows of ``PACKAGE_ARROWS``.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import re

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
    assert "tools.grading.cli" in edges and "tools.release.assignments" in edges
    # the two former cycles are gone
    assert "tools.release.assignments" not in edges["tools.release.session_pages"]
    assert "tools.grading.pipeline" in edges and "tools.grading.cluster" in edges["tools.grading.pipeline"]
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_grading_package_init_imports_no_stage():
    # the stages import tools.grading's __init__; it must import none of them back
    edges = graph()
    assert not {e for e in edges["tools.grading"] if e.startswith("tools.grading.")}


STAGES = sorted(n for n in modules() if n.startswith("tools.grading."))


@pytest.mark.parametrize("name", STAGES)
def test_each_stage_imports_on_its_own_and_says_what_it_does(name):
    module = importlib.import_module(name)
    assert (module.__doc__ or "").strip(), f"{name} has no docstring"


ROLES = {"book", "grading", "hub", "lab", "release"}
# which role package may import which (one way: no package imports back); the lab imports
# the grader: a student alone grades a notebook with the grader itself (tools.lab.self_grade:
# its gradebook and box, the assignments' layout) and the instructor's kernels run in the
# grader's box (tools.lab.boxed_kernels); a chapter opened in the lab gets the substitutions
# the book's extensions give it (tools.lab.contents)
PACKAGE_ARROWS = {"grading": {"release"}, "hub": {"lab"}, "lab": {"book", "grading", "release"}}
# the layer under every role (what a student named, written as text): any role may import
# it, it imports no role
SHARED = "common"
MAX_LINES = 600


def role(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def test_tools_holds_one_folder_per_role_and_nothing_else():
    entries = {p.name for p in TOOLS.iterdir() if p.name != "__pycache__"}
    assert entries == ROLES | {SHARED, "__init__.py"}
    for name in ROLES | {SHARED}:
        assert (TOOLS / name / "__init__.py").is_file(), f"tools/{name} is not a package"


def test_packages_import_each_other_only_one_way():
    wrong = []
    for name, deps in graph().items():
        mine = role(name)
        for dep in deps:
            theirs = role(dep)
            if theirs == SHARED and mine != SHARED:
                continue
            if mine and theirs and theirs != mine and theirs not in PACKAGE_ARROWS.get(mine, ()):
                wrong.append(f"{name} -> {dep}")
    assert not wrong, "imports across packages that the layout does not allow: " + ", ".join(wrong)


def listed_modules(package: str) -> list[str]:
    """The modules a package's docstring lists, in order (its table's ``name`` column)."""
    doc = importlib.import_module(package).__doc__ or ""
    names = []
    for line in doc.splitlines():
        match = re.match(r"``([a-z_]+)``\s", line)
        if match and match.group(1) not in names:
            names.append(match.group(1))
    return names


def packages() -> list[str]:
    return sorted(n for n, p in modules().items() if p.name == "__init__.py" and n != "tools")


@pytest.mark.parametrize("package", packages())
def test_each_package_lists_its_modules_in_order_and_none_imports_a_later_one(package):
    folder = ROOT.joinpath(*package.split("."))
    own = sorted(
        p.stem if p.suffix == ".py" else p.name
        for p in folder.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__", "jupyterhub_config"))
        or (p.is_dir() and (p / "__init__.py").is_file())
    )
    order = listed_modules(package)
    assert set(own) <= set(order), f"{package}'s docstring does not list {set(own) - set(order)}"
    edges = graph()
    for i, name in enumerate(order):
        module = f"{package}.{name}"
        if module not in edges:
            continue
        later = {f"{package}.{n}" for n in order[i + 1:]}
        upward = {d for d in edges[module] if d in later or any(d.startswith(m + ".") for m in later)}
        assert not upward, f"{module} imports {upward}, listed after it in {package}"


def test_no_module_of_tools_is_over_600_lines():
    long = {n: len(p.read_text().splitlines()) for n, p in modules().items()}
    assert not {n: k for n, k in long.items() if k > MAX_LINES}


ONE_WAY = ["tools.release.layout", "tools.release.session_pages", "tools.release.assignments", "tools.grading.cluster"]


@pytest.mark.parametrize("name", ONE_WAY)
def test_the_modules_of_the_former_cycles_import_on_their_own(name):
    assert importlib.import_module(name).__doc__
