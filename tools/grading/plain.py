"""Plain data: what crosses between a student's kernel and the grader, both ways.

The kernel prints values as tagged JSON (``{"t": "ndarray", "kind": "f", "shape": [2],
"v": ["1.0", "2.0"]}``; the converter is ``PLAIN_SOURCE``, run on both sides); the grader
parses such a line (``parse``) and rebuilds the values in its own process (``rebuild``).
What the student's kernel prints is hostile, so both are bounded:

* ``parse`` takes a line of at most ``MAX_LINE`` characters, nested at most ``MAX_DEPTH``
  deep (looked at before ``json`` sees it, so no recursion can overflow), and returns
  None for anything else;
* ``rebuild`` builds at most ``MAX_NODES`` values and ``MAX_ELEMENTS`` array entries per
  line; an ``int`` of more digits than Python converts is refused; a value it cannot
  build is an ``Opaque``, which fails every use;
* no set is filled and no dict keyed with values made to collide: the keys' hashes are
  computed and compared (sorted, no table) first, and a set or dict whose keys share a
  hash more than ``MAX_SAME_HASH`` times is an ``Opaque`` (an honest set holds distinct
  values; integers chosen as multiples of 2**61 - 1 all hash alike, and would make every
  insertion compare with every key before it).

A ``str``/``int``/``float`` subclass crosses as a bare subclass of the grader's
(``StudentStr`` ...): ``type(x) is str`` still fails, and its methods stay behind.

Stage: none (the data of the re-check, ``tools.grading.hidden`` and
``tools.grading.recheck``).
"""

from __future__ import annotations

import json
import math

MAX_LINE = 5_000_000  # characters of one exported line
MAX_DEPTH = 40  # nesting of one exported line (containers in containers)
MAX_NODES = 200_000  # values rebuilt from one line
MAX_ELEMENTS = 5_000_000  # array entries rebuilt from one line
MAX_SAME_HASH = 8  # keys of one set or dict that may share a hash value

# The conversion to plain data, run in the student's kernel (self-contained: the student
# may have replaced anything else) and in the grader (the calls a test makes).
PLAIN_SOURCE = r'''
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
        src = getattr(v, "__memcourse_source__", None) if t is _types.FunctionType else None
        return {"t": "lambda", "v": src} if type(src) is str else {"t": "callable"}
    if _np is not None:
        try:
            a = _np.array(v, dtype=float)
            return {"t": "ndarray", "kind": "f", "shape": list(a.shape), "v": [repr(x) for x in a.ravel().tolist()]}
        except Exception:
            pass
    return {"t": "opaque", "v": type(v).__name__}
'''.strip()

_NS: dict = {}


def to_plain(value):
    """The tagged plain form of ``value`` (the grader's own copy of the kernel's converter)."""
    if not _NS:
        exec(compile(PLAIN_SOURCE, "<plain>", "exec"), _NS)  # noqa: S102 - our code
    return _NS["__memcourse_plain__"](value)


def canonical(value) -> str:
    """The plain form of ``value`` as one JSON string (to compare two calls' arguments)."""
    return json.dumps(to_plain(value), sort_keys=True)


def _depth(text: str) -> int:
    """How deep the brackets of a JSON text nest (strings skipped), without recursion."""
    deepest = depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse(text: str):
    """The JSON object of one exported line, or None (too long, too deep, not JSON)."""
    if not isinstance(text, str) or len(text) > MAX_LINE:
        return None
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(text) > MAX_DEPTH:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError, MemoryError):
        return None
    return data if isinstance(data, dict) else None


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
    """The value is a function where data was exported."""


_KINDS = {"b": "bool", "i": "int64", "u": "uint64", "f": "float64", "c": "complex128"}


class Budget:
    def __init__(self) -> None:
        self.nodes = MAX_NODES
        self.elements = MAX_ELEMENTS

    def take(self, nodes: int = 1, elements: int = 0) -> None:
        self.nodes -= nodes
        self.elements -= elements
        if self.nodes < 0 or self.elements < 0:
            raise OverflowError("more data than one answer may hold")


def _hashable_apart(keys: list) -> bool:
    """True when no more than ``MAX_SAME_HASH`` of ``keys`` share a hash (no table built)."""
    try:
        hashes = sorted(hash(k) for k in keys)
    except TypeError:
        return False
    run = 1
    for a, b in zip(hashes, hashes[1:]):
        run = run + 1 if a == b else 1
        if run > MAX_SAME_HASH:
            return False
    return True


def rebuild(data, budget: Budget | None = None, depth: int = 0):
    """The grader's value from exported plain data (only the known tags; else Opaque).

    Raises ``Unplain`` for a function (the caller decides what that means).
    """
    import numpy as np

    budget = budget or Budget()
    if not isinstance(data, dict) or depth > MAX_DEPTH:
        return Opaque("malformed")
    t, v = data.get("t"), data.get("v")
    try:
        budget.take()
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
            if not isinstance(v, list):
                return Opaque("malformed")
            items = [rebuild(x, budget, depth + 1) for x in v]
            if t in ("set", "frozenset"):
                if not _hashable_apart(items):
                    return Opaque("a set whose elements were made to collide")
                return (set if t == "set" else frozenset)(items)
            return items if t == "list" else tuple(items)
        if t == "dict":
            if not isinstance(v, list) or not all(isinstance(p, list) and len(p) == 2 for p in v):
                return Opaque("malformed")
            pairs = [(rebuild(k, budget, depth + 1), rebuild(x, budget, depth + 1)) for k, x in v]
            if not _hashable_apart([k for k, _ in pairs]):
                return Opaque("a dict whose keys were made to collide")
            return dict(pairs)
        if t == "ndarray":
            kind = data.get("kind")
            shape = data.get("shape")
            if (kind not in _KINDS or not isinstance(shape, list) or not isinstance(v, list)
                    or len(shape) > 32 or not all(type(n) is int and n >= 0 for n in shape)
                    or math.prod(shape) != len(v)):
                return Opaque("malformed")
            budget.take(elements=len(v))
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
        return Opaque(str(v or t)[:100])
    except Unplain:
        raise
    except OverflowError:
        raise
    except Exception:  # noqa: BLE001 - whatever the line held, the value is not data
        return Opaque("malformed")


def rebuild_within(data, budget: Budget):
    """``rebuild`` drawing on ``budget`` (one per notebook judged); Opaque past it."""
    try:
        return rebuild(data, budget)
    except OverflowError:
        return Opaque("more data than the answers of a notebook may hold")
