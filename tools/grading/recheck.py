"""The grader's own check of the answers: test cells re-run outside the student's kernel.

A test cell that passes in the student's kernel proves little: the student's code ran in
that kernel first and may have patched numpy, memkit, ``math.isclose`` or the builtins,
registered an IPython input transformer that rewrites the next cells, installed an
exception handler that swallows the assertion, or answered with an object whose
``__eq__`` always says yes. So the grader does not take the kernel's word alone:

1. **Export.** Right before each graded test cell, the grader adds a cell (``export_cell``)
   that prints, as JSON, the values of the names the test reads. Only plain data crosses:
   numbers, strings, None, lists, tuples, sets, dicts, numpy arrays and scalars of
   numeric dtype; anything else is converted to a float array when it can be (what
   the tests do anyway) and is otherwise an ``Opaque`` value that fails every use. A
   ``str``/``int``/``float`` subclass crosses as a bare subclass of the grader's (so
   ``type(x) is str`` still fails), without its methods.
2. **Judgement.** In the grader's own process (which never ran student code: its numpy,
   memkit and builtins are untouched) each notebook's locked cells run from the source
   (setup, then the test cells with their hidden tests), each test cell with the
   student's exported values bound first. The names a locked cell defines (the data of
   the set-up) come from the grader's run, never from the student.
3. **Verdict.** A test cell earns its points only if it passed in the kernel *and* here.

The student's kernel can still print whatever it likes in place of its answers; that only
ever amounts to answering. What the grader cannot re-run is a test that calls a function
the student wrote (``callable_names``): those tests keep the kernel's verdict (README).

Stage: the re-check, used by screening (the export cells) and judgement (the verdict).
Depends on nothing of the course.
"""

from __future__ import annotations

import ast
import time
import builtins
import json
import keyword
import math
from dataclasses import dataclass, field

EXPORT_ID = "memcourse-export"
MARKER = "MEMCOURSE-ANSWERS "
MAX_EXPORT = 20_000_000  # characters of one export line; beyond it the values are lost

# The exporter, run in the student's kernel before each test cell. It is self-contained
# (the student may have replaced anything else) and prints one line.
EXPORTER = r'''
def __memcourse_plain__(v, depth=0):
    import types as _types
    try:
        import numpy as _np
    except Exception:
        _np = None
    _plain = __memcourse_plain__
    if depth > 30:
        return {"t": "opaque", "v": "too deep"}
    t = type(v)
    if v is None:
        return {"t": "none"}
    if t is bool:
        return {"t": "bool", "v": bool(v)}
    if t is int:
        return {"t": "int", "v": str(v)}
    if t is float:
        return {"t": "float", "v": repr(v)}
    if t is complex:
        return {"t": "complex", "v": [repr(v.real), repr(v.imag)]}
    if t is str:
        return {"t": "str", "v": v}
    if t in (list, tuple, set, frozenset):
        items = [_plain(x, depth + 1) for x in v]
        if t in (set, frozenset):
            items.sort(key=repr)
        return {"t": t.__name__, "v": items}
    if t is dict:
        return {"t": "dict", "v": [[_plain(k, depth + 1), _plain(x, depth + 1)] for k, x in v.items()]}
    if _np is not None and isinstance(v, _np.ndarray) and v.dtype.kind in "biufc":
        a = _np.array(v, copy=True)
        kind = a.dtype.kind
        flat = [repr(complex(x)) for x in a.ravel()] if kind == "c" else [repr(x) for x in a.ravel().tolist()]
        return {"t": "ndarray", "kind": kind, "shape": list(a.shape), "v": flat}
    if _np is not None and isinstance(v, _np.generic) and v.dtype.kind in "biufc":
        return {"t": "npscalar", "dtype": v.dtype.str, "v": repr(v.item())}
    if isinstance(v, str):
        return {"t": "strsub", "v": str.__str__(v)}
    if isinstance(v, bool):
        return {"t": "bool", "v": bool(v)}
    if isinstance(v, int):
        return {"t": "intsub", "v": str(int.__int__(v))}
    if isinstance(v, float):
        return {"t": "floatsub", "v": repr(float.__float__(v))}
    if isinstance(v, _types.ModuleType):
        return {"t": "module"}
    if callable(v):
        return {"t": "callable"}
    if _np is not None:
        try:
            a = _np.array(v, dtype=float)
            return {"t": "ndarray", "kind": "f", "shape": list(a.shape), "v": [repr(x) for x in a.ravel().tolist()]}
        except Exception:
            pass
    return {"t": "opaque", "v": type(v).__name__}


def __memcourse_export__(names, functions=()):
    import json as _json
    _ns = get_ipython().user_ns
    _out = {}
    for _n in names:
        if _n in _ns:
            try:
                _out[_n] = __memcourse_plain__(_ns[_n])
            except Exception as _e:
                _out[_n] = {"t": "opaque", "v": type(_e).__name__}
    print("MEMCOURSE-ANSWERS " + _json.dumps(_out))
    _log = {}
    _ns["__memcourse_calls__"] = _log
    for _n in functions:
        _f = _ns.get(_n)
        if not callable(_f):
            continue
        _calls = _log[_n] = []
        def _wrapper(*args, __f=_f, __calls=_calls, **kwargs):
            entry = {"args": [__memcourse_plain__(x) for x in args],
                     "kwargs": {str(k): __memcourse_plain__(x) for k, x in kwargs.items()}}
            __calls.append(entry)
            try:
                result = __f(*args, **kwargs)
            except BaseException as e:
                entry["raised"] = [type(e).__name__, str(e)[:300]]
                raise
            entry["result"] = __memcourse_plain__(result)
            return result
        _ns[_n] = _wrapper
        _ns.setdefault("__memcourse_saved__", {})[_n] = _f


def __memcourse_calls_export__():
    import json as _json
    _ns = get_ipython().user_ns
    print("MEMCOURSE-CALLS " + _json.dumps(_ns.pop("__memcourse_calls__", {})))
    for _n, _f in _ns.pop("__memcourse_saved__", {}).items():
        _ns[_n] = _f
'''.strip()


PREFIX = "memcourse-"  # the id of every cell the grader adds
CALLS_ID = "memcourse-calls"
CALLS_MARKER = "MEMCOURSE-CALLS "


def export_cell_source(names: list[str], functions: list[str] = ()) -> str:
    return f"__memcourse_export__({sorted(names)!r}, {sorted(functions)!r})"


CALLS_SOURCE = "__memcourse_calls_export__()"


def grader_cell(cell: dict) -> bool:
    return str(cell.get("id", "")).startswith(PREFIX)


def names_read(source: str) -> set[str]:
    """The names a cell may read: loaded names and identifiers in string constants.

    (Test cells look answers up as ``globals()[name]`` too.)
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.isidentifier() and not keyword.iskeyword(node.value):
                found.add(node.value)
    return {n for n in found if not hasattr(builtins, n) and not n.startswith("__")}


def names_bound(source: str) -> set[str]:
    """The names a cell binds in its namespace (assignments, loops, defs, imports at top
    level; not the variables local to a function, a lambda or a comprehension)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
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
    return found


def callable_names(source_nb: dict) -> set[str]:
    """Names the answer cells of the source define as functions or classes."""
    found = set()
    for cell in source_nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or not meta.get("solution"):
            continue
        try:
            tree = ast.parse(_text(cell))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(node.name)
    return found


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


# --------------------------------------------------------------------------- plain values


class Opaque:
    """A value that did not cross as data: every use of it fails."""

    def __init__(self, what: str = "?"):
        object.__setattr__(self, "_what", what)

    def _fail(self, *args, **kwargs):
        raise TypeError(f"this answer is not plain data ({self._what})")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _fail
    __float__ = __int__ = __index__ = __bool__ = __len__ = __iter__ = _fail
    __getitem__ = __getattr__ = __array__ = __add__ = __sub__ = __mul__ = _fail
    __hash__ = None


class StudentStr(str):
    """A str subclass handed in (its methods were not brought across)."""


class StudentInt(int):
    pass


class StudentFloat(float):
    pass


class Unplain(Exception):
    """The value is a function: the grader cannot re-run the test (kernel verdict)."""


_KINDS = {"b": "bool", "i": "int64", "u": "uint64", "f": "float64", "c": "complex128"}


def rebuild(data):
    """The grader's value from the exported JSON (only the known tags; else Opaque)."""
    import numpy as np

    if not isinstance(data, dict):
        return Opaque("malformed")
    t, v = data.get("t"), data.get("v")
    try:
        if t == "none":
            return None
        if t == "bool":
            return bool(v) if isinstance(v, bool) else Opaque("malformed")
        if t == "int":
            return int(str(v))
        if t == "float":
            return float(str(v))
        if t == "complex":
            return complex(float(str(v[0])), float(str(v[1])))
        if t == "str":
            return str(v) if isinstance(v, str) else Opaque("malformed")
        if t in ("list", "tuple", "set", "frozenset"):
            items = [rebuild(x) for x in v]
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[t](items)
        if t == "dict":
            return {rebuild(k): rebuild(x) for k, x in v}
        if t == "ndarray":
            kind = data.get("kind")
            shape = tuple(int(n) for n in data.get("shape", []))
            if kind not in _KINDS or math.prod(shape) != len(v):
                return Opaque("malformed")
            if kind == "c":
                flat = [complex(str(x).strip("()")) for x in v]
            elif kind == "b":
                flat = [str(x) == "True" for x in v]
            else:
                flat = [float(str(x)) if kind == "f" else int(str(x)) for x in v]
            return np.array(flat, dtype=_KINDS[kind]).reshape(shape)
        if t == "npscalar":
            dtype = np.dtype(str(data.get("dtype")))
            if dtype.kind not in _KINDS:
                return Opaque("malformed")
            text = str(v)
            value = complex(text.strip("()")) if dtype.kind == "c" else (
                text == "True" if dtype.kind == "b" else float(text) if dtype.kind == "f"
                else int(text)
            )
            return dtype.type(value)
        if t == "strsub":
            return StudentStr(str(v))
        if t == "intsub":
            return StudentInt(int(str(v)))
        if t == "floatsub":
            return StudentFloat(float(str(v)))
        if t == "callable":
            raise Unplain()
        return Opaque(str(v or t))
    except Unplain:
        raise
    except Exception:
        return Opaque("malformed")


def _printed(cell: dict, marker: str) -> dict:
    data: dict = {}
    for output in cell.get("outputs", []):
        if output.get("output_type") != "stream":
            continue
        for line in _text({"source": output.get("text", "")}).splitlines():
            if line.startswith(marker) and len(line) < MAX_EXPORT:
                try:
                    parsed = json.loads(line[len(marker) :])
                except ValueError:
                    continue
                if isinstance(parsed, dict):
                    data = parsed
    return data


def read_exports(autograded_nb: dict) -> tuple[dict[str, dict], dict[str, dict]]:
    """What the grader's cells printed in an executed notebook.

    ``({test grade id: {name: value JSON}}, {test grade id: {function: [calls]}})``.
    """
    values: dict[str, dict] = {}
    calls: dict[str, dict] = {}
    for cell in autograded_nb.get("cells", []):
        cid = str(cell.get("id", ""))
        if cid.startswith(EXPORT_ID + "-") and cid != EXPORT_ID + "-def":
            values[cid[len(EXPORT_ID) + 1 :]] = _printed(cell, MARKER)
        elif cid.startswith(CALLS_ID + "-"):
            calls[cid[len(CALLS_ID) + 1 :]] = _printed(cell, CALLS_MARKER)
    return values, calls


_GRADER_NS: dict = {}


def _plain(value):
    """The grader's own copy of the exporter's conversion (to compare call arguments)."""
    if not _GRADER_NS:
        exec(compile(EXPORTER, "<exporter>", "exec"), _GRADER_NS)  # noqa: S102 - our code
    return _GRADER_NS["__memcourse_plain__"](value)


def replay(name: str, calls: list):
    """A stand-in for the student's function ``name``: the calls the kernel recorded, in order.

    Each call must come with the arguments the student's function got in the kernel
    (compared as plain data); it returns what the function returned there (rebuilt as plain
    data), or raises what it raised. The test then judges those results here.
    """
    pending = list(calls) if isinstance(calls, list) else []

    def stand_in(*args, **kwargs):
        if not pending:
            raise AssertionError(f"{name}: not called like this in the student's kernel")
        entry = pending.pop(0)
        if not isinstance(entry, dict):
            raise AssertionError(f"{name}: no record of this call")
        got = json.dumps([[_plain(a) for a in args], {k: _plain(v) for k, v in kwargs.items()}])
        want = json.dumps([entry.get("args"), entry.get("kwargs")])
        if got != want:
            raise AssertionError(f"{name}: called with other arguments in the student's kernel")
        if "raised" in entry:
            ename, message = (list(entry["raised"]) + ["", ""])[:2]
            kind = getattr(builtins, str(ename), None)
            if not (isinstance(kind, type) and issubclass(kind, Exception)):
                kind = RuntimeError
            raise kind(str(message))
        try:
            return rebuild(entry.get("result"))
        except Unplain:
            return Opaque("a function")

    return stand_in


# --------------------------------------------------------------------------- the judgement


@dataclass
class Verdict:
    """The grader's judgement of one test cell."""

    grade_id: str
    passed: bool | None  # None: not judged here (a test of a function: the kernel's verdict)
    message: str = ""


@dataclass
class Judgement:
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    problem: str = ""  # why the notebook could not be judged at all


def judge(source_nb: dict, exports: dict[str, dict], calls: dict | None = None) -> Judgement:
    """Run the locked cells of ``source_nb`` here, each test with the student's values.

    ``exports`` and ``calls``: what ``read_exports`` found. A test of a function the student
    wrote gets a stand-in replaying the calls recorded in the kernel (``replay``).
    """
    calls = calls or {}
    result = Judgement()
    locked_names: set[str] = set()
    cells = []
    for cell in source_nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or meta.get("solution"):
            continue
        if not meta.get("locked") and not meta.get("grade"):
            continue
        cells.append((meta, _text(cell)))
        locked_names |= names_bound(_text(cell))
    functions = callable_names(source_nb)
    ns: dict = {"__name__": "__memcourse_judge__"}
    for meta, text in cells:
        gid = meta.get("grade_id")
        is_test = bool(meta.get("grade")) and not meta.get("solution")
        if not is_test:
            try:
                _run(text, ns)
            except Exception as exc:  # the set-up must run here, else nothing is judged
                result.problem = f"the locked cell {gid} does not run in the grader ({exc!r})"
                result.verdicts.clear()
                return result
            continue
        values = exports.get(gid) or {}  # nothing if the export cell did not run
        needed = names_read(text) - locked_names
        bound = dict(ns)
        recorded = calls.get(gid) or {}
        for name in needed:
            if name in functions:
                bound[name] = replay(name, recorded.get(name, []))
            elif name in values:
                try:
                    bound[name] = rebuild(values[name])
                except Unplain:  # a function where the test expects data
                    bound[name] = Opaque("a function")
        try:
            _run(text, bound)
            result.verdicts[gid] = Verdict(gid, True)
        except AssertionError as exc:
            result.verdicts[gid] = Verdict(gid, False, f"AssertionError: {exc}".rstrip(": "))
        except Exception as exc:
            result.verdicts[gid] = Verdict(gid, False, f"{type(exc).__name__}: {exc}")
        # what a test cell defines for later cells comes from the grader's run
        for name in names_bound(text):
            if name in bound:
                ns[name] = bound[name]
    return result


def _quiet(*args, **kwargs) -> None:
    """``print`` of the cells run here (sys.stdout is the grader's, shared by its threads)."""


def _run(text: str, ns: dict) -> None:
    code = compile(text, "<test>", "exec")
    ns.setdefault("print", _quiet)
    exec(code, ns)  # noqa: S102 - instructor code, on data the grader rebuilt


_WARM: set = set()
_MEMKIT_NAMES = (
    r"\bmemkit\.(\w+)",  # memkit.capacity..., from memkit.memory import ...
    r"\bfrom\s+memkit\s+import\s+\(?([\w\s,]+)",  # from memkit import memory, checks
)


def memkit_modules(source_nb: dict | None) -> set[str]:
    """The memkit modules the code cells of ``source_nb`` name (every one when None)."""
    import pkgutil
    import re

    import memkit

    every = {info.name for info in pkgutil.iter_modules(memkit.__path__)} - {"figures"}
    if source_nb is None:
        return every
    text = "\n".join(_text(c) for c in source_nb.get("cells", []) if c.get("cell_type") == "code")
    named = set(re.findall(_MEMKIT_NAMES[0], text))
    for group in re.findall(_MEMKIT_NAMES[1], text):
        named |= {part.strip() for part in group.replace("\n", ",").split(",")}
    return named & every


def _warm(source_nb: dict | None = None) -> None:
    """Import numpy and the memkit modules the notebook's tests use, once in the grader,
    so that no child imports them. (Not every module: ``memkit.derivations`` brings SymPy,
    1.5 s of CPU in each worker, and no test uses it; a child imports what it lacks.)"""
    import importlib

    import numpy  # noqa: F401

    for name in sorted(memkit_modules(source_nb) - _WARM):
        _WARM.add(name)
        try:
            importlib.import_module(f"memkit.{name}")
        except Exception:  # noqa: BLE001 - a module the tests do not need
            pass


def judge_apart(
    source_nb: dict,
    exports: dict,
    calls: dict | None = None,
    timeout: float = 60.0,
    memory_mb: int = 4096,
) -> Judgement:
    """``judge`` in a forked child of the grader, with a time and a memory limit.

    The tests are the instructor's, but they run on the student's values: a value chosen
    to make a test slow or huge must not stall or exhaust the grader. When the child
    does not answer in time (or dies), nothing is judged and the kernel's verdict stands
    (``Judgement.problem`` says why).
    """
    import os
    import pickle
    import select
    import signal

    _warm(source_nb)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: judge, send the result, leave at once
        try:
            os.close(read)
            signal.alarm(int(timeout) + 1)
            if memory_mb:
                import resource

                limit = memory_mb * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            try:
                result = judge(source_nb, exports, calls)
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                result = Judgement(problem=f"the check failed ({type(exc).__name__}: {exc})")
            data = pickle.dumps(result)
            with os.fdopen(write, "wb") as out:
                out.write(data)
        finally:
            os._exit(0)
    os.close(write)
    chunks = []
    deadline = time.monotonic() + timeout
    with os.fdopen(read, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                break
            chunk = os.read(pipe.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    os.waitpid(pid, 0)
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 - nothing (complete) came back
        return Judgement(problem=f"the check did not finish within {timeout:g} s or its memory")
