"""The hidden tests split off: what of them a student's kernel may see, found in the grader.

nbgrader's own format stays (``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` in
the test cells of ``solutions/``), but the hidden part never reaches the student's kernel:
an input transformer there sees every cell it runs. The kernel runs the visible part
only (``tools.grading.preprocessors.sanitize_preprocessors``: nbgrader's ``ClearHiddenTests``
after ``OverwriteCells``), and the grader runs the whole test cell again in its own
process (``tools.grading.recheck``), on the student's values exported as plain data
(``tools.grading.plain``). What a test needs of the student's *functions* is their
results on the test's own inputs. Those inputs are found here, before any student runs:

``discover(source)`` runs the source notebook (its set-up, its solutions, its tests) in a
forked child of the grader (``tools.grading.forked``: instructor code only, never a student's) with
each function an answer cell defines wrapped, and records each call a test cell makes
(``Call``: the arguments as plain data, which of them were array subclasses, and which
routines of numpy, scipy.linalg and memkit the test had switched off at that moment).
The kernel is then given those calls (inputs only, never an expected result) and calls
the student's function on them under the same switches (``tools.grading.recheck``).

A hidden test the grader cannot split is an error that names it (``Split.problems``):
markers that do not pair, a call whose arguments are not plain data or read the
student's answers, a solution that fails its own test. ``CONTRIBUTING.md`` says how
hidden tests are written for it.

Each student draws their own numbers (``memkit.variants``): the run is made for
two students (``CHECK_IDS``), and a test whose calls differ between them is a problem, since
the calls are found once for the class. The hidden tests may import the solutions' reference
code (``answer_key.py`` beside the notebook, never released); the run finds it there.

Stage: none (the split, used by screening and the re-check).
"""

from __future__ import annotations

import ast
import builtins
import collections
import functools
import keyword
import os
import sys
import types
from dataclasses import dataclass, field

from tools.common import nbgrader_cells
from tools.grading.cells import cell_text
from tools.grading.forked import run_apart
from tools.grading.plain import to_plain

BEGIN, END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
SOLUTION_MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN MARK SCHEME", "END MARK SCHEME")
WATCHED = ("numpy", "numpy.linalg", "scipy.linalg")  # routines a test may switch off (and memkit)
DISCOVERY_TIMEOUT = 300.0


@dataclass
class Call:
    """One call a test cell makes to a function the student writes."""

    function: str
    args: list  # plain data (tools.grading.plain)
    kwargs: dict
    guarded: list[int]  # positions of arguments that were ndarray subclasses
    blocked: list[list[str]]  # [module, name] switched off during it ([module, "*"]: all)

    @property
    def key(self) -> str:
        return _key(self.args, self.kwargs)


def _key(args: list, kwargs: dict) -> str:
    import json

    return json.dumps([args, kwargs], sort_keys=True)


def call_key(args: tuple, kwargs: dict) -> str:
    """What identifies a call by its arguments (their plain forms)."""
    return _key([to_plain(a) for a in args], {str(k): to_plain(v) for k, v in kwargs.items()})


@dataclass
class Split:
    """What the grader found in a source notebook's tests."""

    calls: dict[str, list[Call]] = field(default_factory=dict)  # by test grade id
    problems: list[str] = field(default_factory=list)


def solution_text(cell: dict) -> str:
    """A solution cell as the student who knows the answer writes it (markers dropped)."""
    lines = cell_text(cell).splitlines()
    return "\n".join(l for l in lines if not any(m in l for m in SOLUTION_MARKERS)).strip("\n")


# The instructor's cells are parsed for every submission, in the grader and in each of its
# forked checks: their results are kept by text (``prime`` fills them before a fork, so the
# children inherit them).
@functools.lru_cache(maxsize=4096)
def names_read(source: str) -> frozenset[str]:
    """The names a cell may read: loaded names and identifiers in string constants.

    (Test cells look answers up as ``globals()[name]`` too.)
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.isidentifier() and not keyword.iskeyword(node.value):
                found.add(node.value)
    return frozenset(n for n in found if not hasattr(builtins, n) and not n.startswith("__"))


@functools.lru_cache(maxsize=4096)
def names_bound(source: str) -> frozenset[str]:
    """The names a cell binds in its namespace (assignments, loops, defs, imports at top
    level; not the variables local to a function, a lambda or a comprehension)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    found: set[str] = set()
    scoped = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

    def visit(node) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(child.name)
                continue
            if isinstance(child, scoped):
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
                found.add(child.id)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                for alias in child.names:
                    found.add((alias.asname or alias.name).split(".")[0])
            visit(child)

    visit(tree)
    return frozenset(found)


@functools.lru_cache(maxsize=4096)
def _defined(source: str) -> frozenset[str]:
    """The functions and classes a cell defines at its top level."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    return frozenset(node.name for node in tree.body
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))


def callable_names(source_nb: dict) -> set[str]:
    """Names the answer cells of the source define as functions or classes."""
    found: set[str] = set()
    for cell in source_nb.get("cells", []):
        if cell.get("cell_type") == "code" and nbgrader_cells.is_solution(cell):
            found |= _defined(cell_text(cell))
    return found


def locked_names(source_nb: dict) -> set[str]:
    """Names the locked cells bind (the set-up's data, the tests' own helpers)."""
    found: set[str] = set()
    for cell in source_nb.get("cells", []):
        if nbgrader_cells.is_locked(cell):
            found |= names_bound(cell_text(cell))
    return found


def exported_names(source_nb: dict, test_text: str) -> tuple[list[str], list[str]]:
    """(answer names a test cell reads, functions of the student it reads), sorted."""
    needed = names_read(test_text) - locked_names(source_nb)
    functions = callable_names(source_nb)
    return sorted(needed - functions), sorted(needed & functions)


def marker_problem(text: str) -> str | None:
    """Why a test cell's hidden region cannot be split off as nbgrader would (None: fine)."""
    inside = False
    for line in text.split("\n"):
        if BEGIN in line:
            if inside:
                return "a BEGIN HIDDEN TESTS inside another"
            inside = True
        elif END in line:
            if not inside:
                return "an END HIDDEN TESTS without its BEGIN"
            inside = False
    return "a BEGIN HIDDEN TESTS without its END" if inside else None


def given_names(source_nb: dict) -> set[str]:
    """Names an answer cell binds outside its solution region: data the release gives."""
    found: set[str] = set()
    for cell in source_nb.get("cells", []):
        if cell.get("cell_type") != "code" or not nbgrader_cells.is_solution(cell):
            continue
        kept, inside = [], False
        for line in cell_text(cell).split("\n"):
            if "BEGIN SOLUTION" in line:
                inside = True
            elif "END SOLUTION" in line:
                inside = False
            elif not inside:
                kept.append(line)
        found |= names_bound("\n".join(kept))
    return found


def _answer_arguments(text: str, functions: set[str], answers: set[str]) -> list[str]:
    """Answer names a test passes straight to a student's function (those would give
    the kernel the expected answer as an input)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
            for arg in list(node.args) + [k.value for k in node.keywords]:
                params = {a.arg for n in ast.walk(arg) if isinstance(n, ast.Lambda)
                          for a in n.args.args + n.args.kwonlyargs}
                found |= {n.id for n in ast.walk(arg) if isinstance(n, ast.Name)} & answers - params
    return sorted(found)


class _TagLambdas(ast.NodeTransformer):
    """``lambda ...`` of a test becomes ``__memcourse_lambda__(lambda ..., "its source")``:
    a function a test hands to the student's function crosses as its source (an input)."""

    def __init__(self, text: str):
        self.text = text

    def visit_Lambda(self, node):
        self.generic_visit(node)
        source = ast.get_source_segment(self.text, node) or ""
        call = ast.Call(ast.Name("__memcourse_lambda__", ast.Load()), [node, ast.Constant(source)], [])
        return ast.copy_location(call, node)


@functools.lru_cache(maxsize=1024)
def test_code(text: str, name: str):
    """A test cell compiled for the grader's runs: its lambdas tagged (``_TagLambdas``)."""
    tree = _TagLambdas(text).visit(ast.parse(text))
    return compile(ast.fix_missing_locations(tree), name, "exec")


@functools.lru_cache(maxsize=1024)
def compiled(text: str, name: str):
    """A locked cell that is not a test (a set-up cell) compiled as it is."""
    return compile(text, name, "exec")


def prime(source_nb: dict) -> None:
    """Parse and compile the locked cells of ``source_nb`` here, once: what the checks of
    every submission ask of them (``names_read``, ``names_bound``, ``test_code``,
    ``compiled``, ``callable_names``) is then found in this process's caches, and in those
    of the children it forks."""
    callable_names(source_nb)
    for cell in source_nb.get("cells", []):
        if cell.get("cell_type") != "code" or nbgrader_cells.is_solution(cell):
            continue
        text, name = cell_text(cell), str(nbgrader_cells.grade_id(cell))
        if nbgrader_cells.is_test(cell):
            names_read(text)
            names_bound(text)
            try:
                test_code(text, name)
            except SyntaxError:
                pass  # the check says so, on its own run
        elif nbgrader_cells.is_locked(cell):
            names_bound(text)
            try:
                compiled(text, name)
            except SyntaxError:
                pass


def tag_lambda(fn, source: str):
    """What ``__memcourse_lambda__`` does: the function, with its source kept on it."""
    try:
        fn.__memcourse_source__ = source
    except AttributeError:
        pass
    return fn


# --------------------------------------------------------------------------- the discovery


def _watched() -> dict:
    return {
        name: mod for name, mod in list(sys.modules.items())
        if mod is not None and (name in WATCHED or name == "memkit" or name.startswith("memkit."))
    }


def _snapshot(mods: dict) -> dict:
    snap = {}
    for mname, mod in mods.items():
        for attr, obj in list(vars(mod).items()):
            if attr.startswith("_") or isinstance(obj, (type, types.ModuleType)) or not callable(obj):
                continue
            snap[(mname, attr)] = (obj, getattr(obj, "__code__", None))
    return snap


def _switched_off(snap: dict, mods: dict) -> list[list[str]]:
    """The routines of ``snap`` replaced (or whose code was swapped) since it was taken."""
    counts = collections.Counter()
    off = collections.defaultdict(list)
    for (mname, attr), (obj, code) in snap.items():
        counts[mname] += 1
        now = getattr(mods[mname], attr, None)
        if now is not obj or (code is not None and getattr(obj, "__code__", None) is not code):
            off[mname].append(attr)
    found = []
    for mname in sorted(off):
        found += [[mname, "*"]] if len(off[mname]) == counts[mname] else [[mname, a] for a in off[mname]]
    return found


def _not_plain(value) -> str | None:
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            if item.get("t") in ("callable", "opaque", "module") or (
                    item.get("t") == "lambda" and "lambda" not in str(item.get("v"))):
                return {"callable": "a function", "module": "a module"}.get(item["t"], str(item.get("v")))
            todo += [x for x in item.values() if isinstance(x, (dict, list))]
        elif isinstance(item, list):
            todo += item
    return None


def discover(source_nb: dict) -> Split:
    """Run ``source_nb`` with its solutions here; record each call its tests make to a
    function an answer defines (this process runs the instructor's code: use
    ``discover_apart``)."""
    import numpy as np

    split = Split()
    functions = callable_names(source_nb)
    locked = locked_names(source_nb)
    given = given_names(source_nb)
    ns: dict = {"__name__": "__main__", "__memcourse_lambda__": tag_lambda}
    for cell in source_nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        gid = str(nbgrader_cells.grade_id(cell) or "")
        text = solution_text(cell) if nbgrader_cells.is_solution(cell) else cell_text(cell)
        if not nbgrader_cells.is_test(cell):
            try:
                exec(compile(text, gid or "<cell>", "exec"), ns)  # noqa: S102 - the solution
            except Exception as exc:  # noqa: BLE001 - said, and the tests after it tell more
                split.problems.append(f"{gid or 'a cell'} fails in the grader's run ({exc!r})")
            continue
        problem = marker_problem(text)
        if problem:
            split.problems.append(f"{gid}: {problem}")
            continue
        answers = names_read(text) - locked - functions - given
        for name in _answer_arguments(text, functions, answers):
            split.problems.append(
                f"{gid}: passes the student's answer {name!r} to a function the student writes "
                "(the kernel would be given the right answer as an input)")
        mods = _watched()
        snap = _snapshot(mods)
        log: list[Call] = []
        depth = [0]
        saved = {name: ns[name] for name in functions if callable(ns.get(name))}

        def recorder(name, fn):
            def record(*args, **kwargs):
                if depth[0] == 0:  # a call the test makes (not one a solution makes inside)
                    log.append(Call(
                        name, [to_plain(a) for a in args],
                        {str(k): to_plain(v) for k, v in kwargs.items()},
                        [i for i, a in enumerate(args)
                         if isinstance(a, np.ndarray) and type(a) is not np.ndarray],
                        _switched_off(snap, mods),
                    ))
                depth[0] += 1
                try:
                    return fn(*args, **kwargs)
                finally:
                    depth[0] -= 1
            return record

        for name, fn in saved.items():
            ns[name] = recorder(name, fn)
        try:
            exec(test_code(text, gid), ns)  # noqa: S102 - the instructor's test
        except Exception as exc:  # noqa: BLE001
            split.problems.append(f"{gid}: the solution fails its own test in the grader ({exc!r})")
        finally:
            for name, fn in saved.items():
                ns[name] = fn
        for call in log:
            what = _not_plain([call.args, call.kwargs])
            if what:
                split.problems.append(
                    f"{gid}: passes {what} to {call.function}: only plain data (numbers, "
                    "strings, lists, dicts, numeric arrays) can be handed to the student's kernel")
        split.calls[gid] = log
    return split


# Two students the grader's own run of the solutions is made for: each student
# draws their own numbers (memkit.variants), while the calls a test makes to the student's
# functions must not depend on them, since they are found once for the whole class.
CHECK_IDS = ("grader-check-1", "grader-check-2")


def calls_of(split: Split) -> dict[str, list[tuple[str, str]]]:
    return {gid: [(c.function, c.key) for c in calls] for gid, calls in split.calls.items()}


def discover_apart(source_nb: dict, timeout: float = DISCOVERY_TIMEOUT,
                   folder: str | os.PathLike | None = None) -> Split:
    """``discover`` in a forked child (its own matplotlib backend, prints, and a limit),
    once for each student of ``CHECK_IDS``: a test whose calls differ between the two is a
    problem. ``folder``: the source notebook's folder, where its hidden tests import the
    reference code of the solutions (``answer_key.py``) from."""

    def work():
        from memkit.variants import ENV

        os.environ["MPLBACKEND"] = "agg"
        if folder is not None:
            sys.path.insert(0, str(folder))
        found = []
        for student in CHECK_IDS:
            os.environ[ENV] = student
            found.append(discover(source_nb))
        split, other = found
        for gid, calls in calls_of(split).items():
            if calls != calls_of(other).get(gid):
                split.problems.append(
                    f"{gid}: calls the student's function with inputs that depend on the "
                    "student's numbers (give it fixed inputs: they are found once for everyone)")
        split.problems += [p for p in other.problems if p not in split.problems]
        return split

    result = run_apart(work, timeout)
    if isinstance(result, Split):
        return result
    return Split(problems=[f"the grader's own run of the solutions {result}"])
