"""The grader's own check: each test cell run whole in the grader's process, never in the
student's kernel, on the student's answers exported as plain data.

A test that passes in the student's kernel proves little: the student's code ran there
first and may have patched numpy, memkit, ``math.isclose`` or the builtins, registered
an IPython input transformer that reads or rewrites the next cells, installed an
exception handler that swallows the assertion, or answered with an object whose
``__eq__`` always says yes. And the hidden tests, with their expected values, must not be
there at all. So:

1. **In the kernel** (nbgrader's run of the staged notebook) each test cell has its
   visible part only (``tools.grading.hidden``). Right before it the grader adds an export
   cell (``export_cell_source``): it prints one line with the values of the names the
   whole test cell reads, as plain data (``tools.grading.plain``), and the results of
   the student's functions called on the inputs the test would give them (found in the
   grader's own run of the solutions, ``tools.grading.hidden.discover``), each call made
   with the routines the test switches off switched off and its array arguments guarded
   the same way (``__memcourse_call__``). No expected value is in that cell.
2. **In the grader** (``judge_apart``: a forked child with a time and a memory limit) the
   locked cells of the source run (set-up, then every test cell whole, visible and hidden
   parts), each test with the student's values rebuilt and a stand-in for each of the
   student's functions that answers a call with the kernel's result for the same
   arguments (``stand_in``). The names a locked cell defines come from the grader's run.
3. **Verdict.** A test cell earns its points only if its visible part passed in the
   kernel *and* the whole cell passes here. A check that fails, raises, or does not
   finish within its limit withdraws them (``tools.grading.judgement``).

The kernel can still print whatever it likes in place of its answers; that only ever
amounts to answering.

Stage: the re-check, used by screening (the export cells) and judgement (the verdict).
"""

from __future__ import annotations

import builtins
import functools
import json
import os
import sys
from dataclasses import dataclass, field

from tools.grading import hidden
from tools.common import nbgrader_cells
from tools.grading.cells import cell_text
from tools.grading.forked import run_apart
from tools.grading.plain import (
    PLAIN_SOURCE, Budget, Opaque, Unplain, parse, rebuild_within,
)

EXPORT_ID = "memcourse-export"
STUDENT_CELL_ID = "memcourse-student"
PREFIX = "memcourse-"  # the id of every cell the grader adds
MARKER = "MEMCOURSE-ANSWERS "
CHECK_TIMEOUT = 30.0  # seconds of the grader's check of one notebook
REFUSED = "a library routine this question switches off was called"

# The exporter, run in the student's kernel once before everything (self-contained: the
# student may have replaced anything else); each export cell calls it with its names and
# calls.
EXPORTER = PLAIN_SOURCE + r'''


def __memcourse_value__(d):
    import numpy as _np
    _v = __memcourse_value__
    t, v = d["t"], d.get("v")
    if t == "none":
        return None
    if t in ("bool", "str"):
        return v
    if t == "int":
        return int(v)
    if t == "float":
        return float(v)
    if t == "complex":
        return complex(float(v[0]), float(v[1]))
    if t in ("list", "tuple", "set", "frozenset"):
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[t](_v(x) for x in v)
    if t == "dict":
        return {_v(k): _v(x) for k, x in v}
    if t == "ndarray":
        dtype = {"b": bool, "i": "int64", "u": "uint64", "f": float, "c": complex}[d["kind"]]
        flat = [x == "True" for x in v] if d["kind"] == "b" else [complex(x) if d["kind"] == "c" else float(x) if d["kind"] == "f" else int(x) for x in v]
        return _np.array(flat, dtype=dtype).reshape(d["shape"])
    if t == "npscalar":
        return _np.dtype(d["dtype"]).type(complex(v) if "c" in d["dtype"] else float(v) if "f" in d["dtype"] else int(v) if v not in ("True", "False") else v == "True")
    if t == "lambda":
        return eval(v, get_ipython().user_ns)
    raise TypeError("not plain data")


def __memcourse_call__(fn, args, kwargs, guarded, blocked):
    import sys as _sys
    import types as _types
    import numpy as _np
    def _refuse(*a, **k):
        raise RuntimeError("a library routine this question switches off was called")
    saved, names = [], set()
    for mname, attr in blocked:
        mod = _sys.modules.get(mname)
        if mod is None:
            continue
        attrs = [a for a, o in list(vars(mod).items()) if not a.startswith("_") and callable(o)
                 and not isinstance(o, (type, _types.ModuleType))] if attr == "*" else [attr]
        for a in attrs:
            obj = getattr(mod, a, None)
            if obj is None:
                continue
            if not mname.startswith("memkit"):
                names.add(a)
            if isinstance(obj, _types.FunctionType) and not obj.__code__.co_freevars:
                saved.append((obj, "__code__", obj.__code__))
                obj.__code__ = _refuse.__code__
            else:
                saved.append((mod, a, obj))
                setattr(mod, a, _refuse)
    class _Guard(_np.ndarray):
        def __array_function__(self, func, types, a, k):
            if func.__name__ in names:
                _refuse()
            return super().__array_function__(func, types, a, k)
        def __array_ufunc__(self, ufunc, method, *inputs, **kw):
            if ufunc.__name__ in names:
                _refuse()
            inputs = tuple(i.view(_np.ndarray) if isinstance(i, _Guard) else i for i in inputs)
            if "out" in kw:
                kw["out"] = tuple(o.view(_np.ndarray) if isinstance(o, _Guard) else o for o in kw["out"])
            r = getattr(ufunc, method)(*inputs, **kw)
            if isinstance(r, tuple):
                return tuple(x.view(_Guard) if type(x) is _np.ndarray else x for x in r)
            return r.view(_Guard) if type(r) is _np.ndarray else r
        def dot(self, *a, **k):
            if "dot" in names:
                _refuse()
            return _np.ndarray.dot(self.view(_np.ndarray), *a, **k)
    args = [_np.asarray(x, dtype=float).view(_Guard) if i in guarded else x for i, x in enumerate(args)]
    try:
        return fn(*args, **kwargs)
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


def __memcourse_export__(names, calls):
    import json as _json
    _ns = get_ipython().user_ns
    _out = {"values": {}, "calls": []}
    for _n in names:
        if _n in _ns:
            try:
                _out["values"][_n] = __memcourse_plain__(_ns[_n])
            except Exception as _e:
                _out["values"][_n] = {"t": "opaque", "v": type(_e).__name__}
    for _c in _json.loads(calls):
        _f = _ns.get(_c["f"])
        if not callable(_f):
            _out["calls"].append({"missing": True})
            continue
        try:
            _args = [__memcourse_value__(x) for x in _c["args"]]
            _kw = {k: __memcourse_value__(x) for k, x in _c["kwargs"].items()}
            _r = __memcourse_call__(_f, _args, _kw, _c["guarded"], _c["blocked"])
            _out["calls"].append({"result": __memcourse_plain__(_r)})
        except Exception as _e:
            _out["calls"].append({"raised": [type(_e).__name__, str(_e)[:300]]})
    print("MEMCOURSE-ANSWERS " + _json.dumps(_out))
'''


def student_cell_source(student: str, seat: int | None = None) -> str:
    """The first cell the kernel runs: the student id the grader grades the notebook for
    and the student's seat on the class list (none: not set), where ``memkit.variants``
    reads them (the set-up cell draws that student's numbers, and its options their order).
    A student cell may change them afterwards; the grader's own check draws for these."""
    from memkit.variants import ENV, SEAT_ENV, STUDENT_ID, checked_seat

    if not STUDENT_ID.match(student):
        raise ValueError(f"not a student id: {student!r}")
    env = "__import__('os').environ"
    if seat is None:
        return f"{env}[{ENV!r}] = {student!r}; {env}.pop({SEAT_ENV!r}, None)"
    return f"{env}[{ENV!r}] = {student!r}; {env}[{SEAT_ENV!r}] = {str(checked_seat(seat, 'given'))!r}"


def export_cell_source(names: list[str], calls: list[hidden.Call]) -> str:
    """The export cell before a test cell: the answers it reads, the calls it makes."""
    payload = json.dumps([
        {"f": c.function, "args": c.args, "kwargs": c.kwargs, "guarded": c.guarded,
         "blocked": c.blocked}
        for c in calls
    ])
    return f"__memcourse_export__({sorted(names)!r}, {payload!r})"


def grader_cell(cell: dict) -> bool:
    return str(cell.get("id", "")).startswith(PREFIX)


def read_exports(autograded_nb: dict) -> dict[str, str]:
    """The line each export cell printed in an executed notebook, by test grade id
    (the last line with the marker; parsed in the check's own process)."""
    lines: dict[str, str] = {}
    for cell in autograded_nb.get("cells", []):
        cid = str(cell.get("id", ""))
        if not cid.startswith(EXPORT_ID + "-") or cid == EXPORT_ID + "-def":
            continue
        found = ""
        for output in cell.get("outputs", []) if isinstance(cell.get("outputs"), list) else []:
            if isinstance(output, dict) and output.get("output_type") == "stream":
                for line in cell_text({"source": output.get("text", "")}).splitlines():
                    if line.startswith(MARKER):
                        found = line[len(MARKER):]
        lines[cid[len(EXPORT_ID) + 1:]] = found
    return lines


def stand_in(name: str, calls: list[hidden.Call], results: list, budget: Budget):
    """The student's function ``name`` for the grader's run of a test: a call with the
    arguments of one of ``calls`` (the test's own inputs) returns what the student's
    function returned for them in the kernel (``results``, in the same order), or raises
    what it raised; any other call fails."""
    keys = [c.key if c.function == name else None for c in calls]
    used: set[int] = set()

    def student_function(*args, **kwargs):
        key = hidden.call_key(args, kwargs)
        matching = [i for i, k in enumerate(keys) if k == key]
        if not matching:
            raise AssertionError(f"{name}: called with arguments the grader gave it no result for")
        i = next((i for i in matching if i not in used), matching[0])
        used.add(i)
        entry = results[i] if i < len(results) and isinstance(results[i], dict) else {}
        if entry.get("missing"):
            raise NameError(f"name {name!r} is not defined")
        if "raised" in entry:
            raised = entry["raised"] if isinstance(entry["raised"], list) else []
            ename, message = [str(x) for x in (raised + ["", ""])[:2]]
            kind = getattr(builtins, ename, None)
            if not (isinstance(kind, type) and issubclass(kind, Exception)):
                kind = RuntimeError
            raise kind(message)
        if "result" not in entry:
            raise AssertionError(f"{name}: the student's kernel gave no result for this call")
        try:
            return rebuild_within(entry["result"], budget)
        except Unplain:
            return Opaque("a function")

    return student_function


# --------------------------------------------------------------------------- the judgement


@dataclass
class Verdict:
    """The grader's judgement of one test cell."""

    grade_id: str
    passed: bool
    message: str = ""


@dataclass
class Judgement:
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    problem: str = ""  # why the notebook could not be judged at all (every test fails)
    numbers: str = ""  # the student's numbers as the set-up printed them in the grader
    numbers_line: str = ""  # the same on one line, with the option orders (the report)


def _numbers_of(ns: dict) -> tuple[str, str]:
    """The record of the draws the locked cells made (``memkit.variants.Numbers``)."""
    from memkit.variants import Numbers

    drawn = [v for v in ns.values() if isinstance(v, Numbers)]
    return ("\n".join(n.report() for n in drawn) + ("\n" if drawn else ""),
            " ".join(n.summary() for n in drawn))


def judge(source_nb: dict, lines: dict[str, str], split: hidden.Split) -> Judgement:
    """Run the locked cells of ``source_nb`` here, each test whole with the student's
    values (``lines``: what ``read_exports`` found) and stand-ins for their functions."""
    result = Judgement()
    locked = hidden.locked_names(source_nb)
    functions = hidden.callable_names(source_nb)
    budget = Budget()
    ns: dict = {"__name__": "__memcourse_judge__", "__memcourse_lambda__": hidden.tag_lambda}
    for cell in source_nb.get("cells", []):
        if cell.get("cell_type") != "code" or nbgrader_cells.is_solution(cell):
            continue
        if not nbgrader_cells.is_locked(cell) and not nbgrader_cells.is_grade(cell):
            continue
        gid, text = nbgrader_cells.grade_id(cell), cell_text(cell)
        if not nbgrader_cells.is_test(cell):
            try:
                _run(hidden.compiled(text, str(gid)), ns)
            except Exception as exc:  # the set-up must run here, else nothing is judged
                result.problem = f"the locked cell {gid} does not run in the grader ({exc!r})"
                result.verdicts.clear()
                return result
            result.numbers, result.numbers_line = _numbers_of(ns)
            continue
        data = parse(lines.get(gid) or "") or {}
        values = data.get("values") if isinstance(data.get("values"), dict) else {}
        results = data.get("calls") if isinstance(data.get("calls"), list) else []
        bound = dict(ns)
        for name in hidden.names_read(text) - locked:
            if name in functions:
                bound[name] = stand_in(name, split.calls.get(gid, []), results, budget)
            elif name in values:
                try:
                    bound[name] = rebuild_within(values[name], budget)
                except Unplain:  # a function where the test expects data
                    bound[name] = Opaque("a function")
        try:
            _run(hidden.test_code(text, str(gid)), bound)
            result.verdicts[gid] = Verdict(gid, True)
        except AssertionError as exc:
            result.verdicts[gid] = Verdict(gid, False, f"AssertionError: {exc}".rstrip(": "))
        except Exception as exc:
            result.verdicts[gid] = Verdict(gid, False, f"{type(exc).__name__}: {exc}"[:500])
        # what a test cell defines for later cells comes from the grader's run
        for name in hidden.names_bound(text):
            if name in bound:
                ns[name] = bound[name]
    return result


def _quiet(*args, **kwargs) -> None:
    """``print`` of the cells run here (their output is not the grader's)."""


def _run(code, ns: dict) -> None:
    ns.setdefault("print", _quiet)
    exec(code, ns)  # noqa: S102 - instructor code, on data the grader rebuilt


_WARM: set = set()


def memkit_modules(source_nb: dict | None) -> set[str]:
    """The memkit modules the code cells of ``source_nb`` import (every one when None)."""
    import pkgutil

    import memkit

    every = {info.name for info in pkgutil.iter_modules(memkit.__path__)} - {"figures"}
    if source_nb is None:
        return every
    named: set[str] = set()
    for cell in source_nb.get("cells", []):
        if cell.get("cell_type") == "code":
            named |= _memkit_named(hidden.solution_text(cell))
    return named & every


@functools.lru_cache(maxsize=4096)
def _memkit_named(text: str) -> frozenset[str]:
    """The memkit modules one cell's code names (``import memkit.x``, ``from memkit import
    x``, ``from memkit.x import ...``, ``memkit.x``)."""
    import ast

    try:
        tree = ast.parse(text)
    except SyntaxError:
        return frozenset()
    named = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named |= {a.name.split(".")[1] for a in node.names if a.name.startswith("memkit.")}
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "memkit":
                named |= {a.name for a in node.names}
            elif node.module.startswith("memkit."):
                named.add(node.module.split(".")[1])
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "memkit":
            named.add(node.attr)
    return frozenset(named)


def warm(source_nb: dict | None = None) -> None:
    """Import numpy and the memkit modules the notebook's cells use, once in the grader,
    so that no child imports them, and parse its locked cells (``hidden.prime``), so that
    no child parses them. (Not every module: ``memkit.derivations`` brings SymPy, 1.5 s of
    CPU in each worker, and no test uses it; a child imports what it lacks.)"""
    import importlib

    import numpy  # noqa: F401

    if source_nb is not None:
        hidden.prime(source_nb)

    for name in sorted(memkit_modules(source_nb) - _WARM):
        _WARM.add(name)
        try:
            importlib.import_module(f"memkit.{name}")
        except Exception:  # noqa: BLE001 - a module the tests do not need
            pass


def judge_apart(
    source_nb: dict,
    lines: dict[str, str],
    split: hidden.Split,
    timeout: float = CHECK_TIMEOUT,
    memory_mb: int = 4096,
    student: str | None = None,
    folder=None,
    seat: int | None = None,
) -> Judgement:
    """``judge`` in a forked child of the grader, with a time and a memory limit.

    The tests are the instructor's, but they run on the student's values: a value chosen
    to make a test slow or huge must not stall or exhaust the grader. A child that does
    not answer in time (or dies) judges nothing: ``Judgement.problem`` says why, and every
    test of the notebook loses its points.

    ``student``: the id the set-up draws the numbers of (``memkit.variants``), the one the
    grader knows, whatever the kernel drew; ``seat``: that student's seat on the class list,
    or None (the order of their options). ``folder``: where the hidden tests import the
    solutions' reference code from (``answer_key.py`` beside the source notebook).
    """
    warm(source_nb)

    def work():
        from memkit.variants import ENV, SEAT_ENV

        if folder is not None:
            sys.path.insert(0, str(folder))
        if student is not None:
            os.environ[ENV] = student
        os.environ.pop(SEAT_ENV, None)
        if seat is not None:
            os.environ[SEAT_ENV] = str(seat)
        return judge(source_nb, lines, split)

    found = run_apart(work, timeout, memory_mb)
    if isinstance(found, Judgement):
        return found
    return Judgement(problem=f"the check {found}")
