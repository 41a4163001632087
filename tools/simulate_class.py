"""Simulated students: a class of submissions to try the grading loop on.

    python -m tools.simulate_class --students 20 [--assignments session-1 session-3]
                                   [--zoo] [--seed 0] [--course-dir .] [--zip class.zip]

writes ``submitted/<student>/<assignment>/*.ipynb`` (nbgrader's layout) from the
released notebooks of ``exercises/`` and the answers of ``solutions/``. Student 1
answers everything, student 2 nothing (the blank release), the others a random part
of the questions. With ``--zoo`` the first assignment also gets one submission of
each kind of trouble (see ``ZOO``). ``--zip`` packs the class as ``nbgrader
zip_collect`` expects (one folder per student) instead of filling ``submitted/``.

Each simulated student comes with the score it should get, so that a test can
compare the grader's result with it (``expected`` in the manifest).
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import random
import sys
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tools import assignments as course

# The kinds of trouble a submission can bring, and the notebook they hit.
ZOO = {
    "invalid-json": "the notebook file is cut in the middle: not valid JSON",
    "loop-ignoring-sigint": "an answer loops forever and ignores the interrupt (SIGINT)",
    "kernel-exit": "an answer kills its kernel with os._exit",
    "endless-print": "an answer prints without end",
    "deleted-test": "the first test cell was deleted",
    "deleted-setup": "the set-up cell was deleted",
    "duplicated-test": "the first test cell was copied (a duplicated grade id)",
    "retyped-test": "the first test cell was turned into a markdown cell",
    "edited-test": "the first test cell was replaced by `pass`, its question left blank",
}

# What a hostile student tries (issue 16). Each is a submission of the troubled notebook;
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

_MARKER_LINES = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN MARK SCHEME", "END MARK SCHEME")


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def answer_text(source_cell: dict) -> str:
    """What a student who knows the answer writes: the source cell without nbgrader's markers."""
    lines = _text(source_cell).splitlines()
    return "\n".join(line for line in lines if not any(m in line for m in _MARKER_LINES)).strip(
        "\n"
    )


@dataclass
class Question:
    """One answer cell of a notebook and the points of the test cell(s) that grade it."""

    answer_id: str
    code: bool
    points: float  # autograded points that depend on this answer
    test_ids: list[str] = field(default_factory=list)


def questions(source: dict) -> list[Question]:
    """The questions of a source notebook: each answer cell with the test cells after it."""
    found: list[Question] = []
    for cell in source["cells"]:
        meta = _nbgrader(cell)
        if meta.get("solution") and not meta.get("grade"):
            found.append(Question(meta["grade_id"], cell["cell_type"] == "code", 0.0))
        elif meta.get("grade") and not meta.get("solution") and found:
            found[-1].points += float(meta.get("points", 0))
            found[-1].test_ids.append(meta["grade_id"])
        elif meta.get("grade") and meta.get("solution"):
            # a written answer: graded by hand, no autograded points
            found.append(Question(meta["grade_id"], False, 0.0))
    return found


def _names(text: str) -> tuple[set[str], set[str], set[str]]:
    """(names a cell defines, of those the functions and classes, names it reads)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set(), set(), set()
    defined, functions, read = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (defined if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
            functions.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return defined, functions, read


def dependencies(source: dict, release: dict | None = None) -> dict[str, set[str]]:
    """For each answer cell, the earlier answer cells whose answers it needs to pass.

    A question depends on an earlier one when its answer or test cells read a name that
    only the earlier answer provides: a name its solution defines that the released cell
    does not, or a function the released cell defines only as a stub (exit test 7, q4
    calls the ``write`` of q3). A blank or broken earlier answer then costs the later
    question its points too.
    """
    released = {}
    for cell in (release or {"cells": []})["cells"]:
        if _nbgrader(cell).get("solution"):
            released[_nbgrader(cell)["grade_id"]] = _text(cell)
    texts = {_nbgrader(c).get("grade_id"): _text(c) for c in source["cells"]}
    provides: dict[str, set[str]] = {}
    needs: dict[str, set[str]] = {}
    for q in questions(source):
        if not q.code:
            continue
        defined, _, read = _names(answer_text(next(
            c for c in source["cells"] if _nbgrader(c).get("grade_id") == q.answer_id)))
        stub_defined, stub_functions, _ = _names(released.get(q.answer_id, ""))
        provides[q.answer_id] = (defined - stub_defined) | (defined & stub_functions)
        for test_id in q.test_ids:
            test_defined, _, test_read = _names(texts.get(test_id, ""))
            read |= test_read - test_defined
        needs[q.answer_id] = read - defined
    found: dict[str, set[str]] = {}
    earlier: list[str] = []
    for answer_id, wanted in needs.items():
        direct = {e for e in earlier if provides[e] & wanted}
        found[answer_id] = direct | {x for e in direct for x in found[e]}
        earlier.append(answer_id)
    return found


def earned_points(source: dict, answered: set[str], release: dict | None = None) -> float:
    """Autograded points of the questions answered whose needed earlier answers are too."""
    needs = dependencies(source, release)
    return sum(
        q.points
        for q in questions(source)
        if q.answer_id in answered and needs.get(q.answer_id, set()) <= answered
    )


def autograded_points(source: dict) -> float:
    """All the points the autograder can give on a notebook (written answers excluded)."""
    return sum(q.points for q in questions(source))


def student_notebook(source: dict, release: dict, answered: set[str]) -> dict:
    """The release with the answers of ``answered`` (grade ids of answer cells) filled in."""
    by_id = {
        _nbgrader(c).get("grade_id"): c for c in source["cells"] if _nbgrader(c).get("solution")
    }
    nb = copy.deepcopy(release)
    for cell in nb["cells"]:
        grade_id = _nbgrader(cell).get("grade_id")
        if _nbgrader(cell).get("solution") and grade_id in answered and grade_id in by_id:
            cell["source"] = answer_text(by_id[grade_id])
    return nb


def _index(nb: dict, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb["cells"]) if _nbgrader(c).get("grade_id") == grade_id)


def _code_questions(source: dict) -> list[Question]:
    return [q for q in questions(source) if q.code and q.test_ids]


def troubled(kind: str, source: dict, release: dict) -> tuple[str, float]:
    """A full submission with one trouble of ``kind``: (file text, expected autograded score)."""
    every = {q.answer_id for q in questions(source)}
    full = student_notebook(source, release, every)
    total = autograded_points(source)
    first, second = (_code_questions(source) + _code_questions(source))[:2]
    nb = copy.deepcopy(full)
    expected = total
    if kind == "invalid-json":
        text = json.dumps(full, indent=1)
        return text[: len(text) // 2] + "\n<<< the file ends here", 0.0
    if kind == "loop-ignoring-sigint":
        nb["cells"][_index(nb, first.answer_id)]["source"] = (
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
        )
        expected = earned_points(source, every - {first.answer_id}, release)
    elif kind == "kernel-exit":
        nb["cells"][_index(nb, second.answer_id)]["source"] = "import os\nos._exit(1)"
        expected = earned_points(source, every - {second.answer_id}, release)
    elif kind == "endless-print":
        nb["cells"][_index(nb, first.answer_id)]["source"] = (
            "while True:\n    print('all work and no play ' * 4)"
        )
        expected = earned_points(source, every - {first.answer_id}, release)
    elif kind == "deleted-test":
        del nb["cells"][_index(nb, first.test_ids[0])]
    elif kind == "deleted-setup":
        del nb["cells"][_index(nb, "setup")]
    elif kind == "duplicated-test":
        i = _index(nb, first.test_ids[0])
        nb["cells"].insert(i + 1, copy.deepcopy(nb["cells"][i]))
        nb["cells"][i + 1]["id"] = nb["cells"][i]["id"] + "-copy"
    elif kind == "retyped-test":
        cell = nb["cells"][_index(nb, first.test_ids[0])]
        cell["cell_type"] = "markdown"
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    elif kind == "edited-test":
        release_answer = release["cells"][_index(release, first.answer_id)]
        nb["cells"][_index(nb, first.answer_id)]["source"] = _text(release_answer)
        nb["cells"][_index(nb, first.test_ids[0])]["source"] = "pass"
        expected = earned_points(source, every - {first.answer_id}, release)
    else:
        raise ValueError(f"unknown kind {kind!r}; one of {sorted(ZOO)}")
    return json.dumps(nb, indent=1) + "\n", expected


def _assigned(text: str) -> list[str]:
    import ast

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
    first = _index(nb, code_qs[0].answer_id)
    expected: float | None = total
    if kind in ("wrong", "patched-numpy", "input-transformer", "swallowed-errors"):
        expected = None
        for q in code_qs:
            cell = nb["cells"][_index(nb, q.answer_id)]
            names = _assigned(_text(cell))
            cell["source"] = _text(cell) + "\n" + _PERTURB.replace("NAMES", repr(names))
        if kind != "wrong":
            cell = nb["cells"][first]
            cell["source"] = _ATTACK_CODE[kind] + "\n" + _text(cell)
    elif kind in ("daemon", "tamper", "spy"):
        code = _ATTACK_CODE[kind]
        if kind == "daemon":
            code = code.replace("{touch!r}", repr(_TOUCH))
        code = code.replace("{port}", str(port))
        cell = nb["cells"][first]
        cell["source"] = _text(cell) + "\ntry:\n" + "\n".join(
            "    " + line for line in code.splitlines()
        ) + "\nexcept Exception as __e:\n    print('attack failed', __e)\n"
    elif kind == "lying-eq":
        import ast

        for q in code_qs:
            cell = nb["cells"][_index(nb, q.answer_id)]
            tree = ast.parse(_text(cell))
            strings = [
                n.targets[0].id
                for n in tree.body
                if isinstance(n, ast.Assign)
                and isinstance(n.targets[0], ast.Name)
                and isinstance(n.value, ast.Constant)
                and isinstance(n.value.value, str)
            ]
            if strings:
                cell["source"] = _text(cell) + (
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


@dataclass
class Submission:
    """One simulated submission and the autograded score it should receive."""

    student: str
    assignment: str
    kind: str  # full, blank, partial or a ZOO kind
    expected: float
    max_score: float
    notebooks: dict[str, float]  # expected score per notebook


def _read(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def release_dir(root: Path) -> Path:
    """The released notebooks of the course: exercises/ (generated if it is missing)."""
    return Path(root) / course.RELEASE


def simulate(
    root: Path,
    n_students: int = 20,
    which: list[str] | None = None,
    zoo: bool = False,
    seed: int = 0,
    out: Path | None = None,
    kinds: dict[str, str] | None = None,
) -> list[Submission]:
    """Write a simulated class into ``out`` (default ``<root>/submitted``).

    Returns what each submission should get.

    ``kinds`` may fix the kind of chosen students (student id -> kind); the others follow
    the default mix described in the module docstring.
    """
    root = Path(root)
    out = Path(out) if out else root / "submitted"
    names = which or course.assignments(root)
    rng = random.Random(seed)
    students = [f"student-{i:02d}" for i in range(1, n_students + 1)]
    plan = dict(kinds or {})
    if zoo:
        free = [s for s in students[2:] if s not in plan]
        if len(free) < len(ZOO):
            raise ValueError(f"--zoo needs at least {len(ZOO) + 2} students")
        plan.update(zip(free, ZOO))
    made = []
    for a_index, assignment in enumerate(names):
        sources = {p.name: _read(p) for p in course.notebooks(root, assignment)}
        releases = {p.name: _read(p) for p in course.notebooks(root, assignment, course.RELEASE)}
        if sorted(sources) != sorted(releases):
            raise SystemExit(
                f"exercises/{assignment} is not generated from solutions/: make assignments"
            )
        troubled_name = "exit-test.ipynb" if "exit-test.ipynb" in sources else sorted(sources)[0]
        for s_index, student in enumerate(students):
            kind = plan.get(student) or (
                "full" if s_index == 0 else "blank" if s_index == 1 else "partial"
            )
            if kind in ZOO and a_index != 0:
                kind = "full"
            folder = out / student / assignment
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "timestamp.txt").write_text(
                f"2026-03-0{1 + a_index % 9} 12:{s_index % 60:02d}:00.000000 UTC"
            )
            expected = {}
            for name, source in sources.items():
                qs = questions(source)
                if kind in ZOO and name == troubled_name:
                    text, expected[name] = troubled(kind, source, releases[name])
                    (folder / name).write_text(text)
                    continue
                if kind == "blank":
                    answered = set()
                elif kind == "partial":
                    answered = {q.answer_id for q in qs if rng.random() < 0.5}
                else:
                    answered = {q.answer_id for q in qs}
                nb = student_notebook(source, releases[name], answered)
                (folder / name).write_text(json.dumps(nb, indent=1) + "\n")
                expected[name] = earned_points(source, answered, releases[name])
            made.append(
                Submission(
                    student,
                    assignment,
                    kind,
                    sum(expected.values()),
                    sum(autograded_points(s) for s in sources.values()),
                    expected,
                )
            )
    return made


def zip_class(folder: Path, archive: Path) -> Path:
    """Pack ``folder`` (student/assignment/notebook) as one archive, a folder per student."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(folder).as_posix())
    return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.simulate_class",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--assignments", nargs="*", help="default: every assignment")
    parser.add_argument("--zoo", action="store_true", help="add one submission of each trouble")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--course-dir", type=Path, default=course.ROOT)
    parser.add_argument(
        "--zip", type=Path, help="write the class as this zip instead of submitted/"
    )
    parser.add_argument("--manifest", type=Path, help="write the expected scores (JSON) here")
    args = parser.parse_args(argv)
    root = args.course_dir.resolve()
    if args.zip:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            made = simulate(root, args.students, args.assignments, args.zoo, args.seed, Path(tmp))
            zip_class(Path(tmp), args.zip)
        where = args.zip
    else:
        made = simulate(root, args.students, args.assignments, args.zoo, args.seed)
        where = root / "submitted"
    if args.manifest:
        args.manifest.write_text(json.dumps([asdict(m) for m in made], indent=1))
    kinds = {}
    for m in made:
        kinds[m.kind] = kinds.get(m.kind, 0) + 1
    print(
        f"{len({m.student for m in made})} students, {len(made)} submissions in {where}: "
        + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
