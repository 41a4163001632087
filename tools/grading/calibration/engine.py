"""One notebook calibrated: its solutions run for many ids, each graded answer judged whole.

For one student id (``solve``) the cells of a source notebook run in this process in
order, as a fresh kernel runs them: the set-up (that id's numbers, ``memkit.variants``),
the options, each answer cell's solution (its markers dropped, ``hidden.solution_text``)
and each test cell. The namespace before each test cell is kept (the answers it reads, and
what their cell left). An answer is then judged as the grader's own check judges it
(``tools.grading.recheck.judge``): the answer names the test reads (``hidden.exported_names``)
taken through the plain data a kernel exports (``plain.to_plain``, ``plain.rebuild_within``),
and the whole test cell, hidden part included (``hidden.test_code``), run on them.

The answers judged (``Question``):

- **honest**: the reference method, and for a Monte Carlo answer (a solution with a seed:
  ``seed=...`` or ``default_rng(...)``, ``SEEDED``) the same method with other seeds, the
  student's free choice (``reseeded``, ``seed_offset``), and the other order of an answer
  whose order is free (``reordered``);
- **slips** (``catalog``): plausible wrong answers, each a change of some answer names;
- **the band** of a measured number (``band``): the factors of the reference answer the
  test accepts, found by bisection, the other answers kept honest.

Nothing here runs a kernel: an answer costs one run of its cell and one of its test.

Stage: none (the calibration).
"""

from __future__ import annotations

import ast
import contextlib
import copy
import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from memkit.variants import uniform
from tools.grading import hidden
from tools.common import nbgrader_cells
from tools.grading.cells import cell_text
from tools.grading.plain import Budget, Unplain, canonical, rebuild_within, to_plain

# a seed the student chooses freely in a solution: seed=<expression>, default_rng(<expression>),
# or a line that sets the seed a question asks for (seed_q1 = <expression>)
SEEDED = re.compile(r"(\bseed\s*=\s*|default_rng\()([^,()]+(?:\([^()]*\))?)(?=[,)])"
                    r"|^(\s*seed_q\d+\s*=\s*)([^#\n]*[^#\s])", re.M)
SEED_RANGE = 2**40  # another seed is the solution's own plus up to this
BAND_STEPS = 14  # bisection steps of a band's edge (a factor to about 1e-4)
BAND_REACH = 1.0  # a band is searched within factors 1 - REACH/2 .. 1 + REACH


def _quiet(*args, **kwargs) -> None:
    """``print`` of the cells run here."""


@dataclass
class Question:
    """One graded question: an answer cell and its test cell."""

    notebook: str  # "session-3/exercises"
    name: str  # "q1"
    answer: str  # the answer cell's source (solution markers in)
    test: str  # the test cell's source, hidden part in
    names: list[str]  # the answer names the test reads
    functions: list[str]  # the student's functions it calls

    @property
    def label(self) -> str:
        return f"{self.notebook} {self.name}"

    @property
    def seeded(self) -> bool:
        """A Monte Carlo answer: its solution draws with a seed of the student's choice."""
        return bool(SEEDED.search(_solution_part(self.answer)))

    def reseeded(self, offset: int) -> str:
        """What the answer cell runs again with other seeds: its solution's statements that
        draw with a seed, each seed moved by ``offset``, and those that read what they bind,
        in order. The others give what they gave (the reference run's namespace,
        ``honest``), and the cell's given lines are not run again."""
        out, inside = [], False
        for line in self.answer.splitlines():
            if "BEGIN SOLUTION" in line:
                inside = True
                continue
            if "END SOLUTION" in line:
                inside = False
                continue
            if inside:
                out.append(SEEDED.sub(lambda m: f"{m.group(1) or m.group(3)}({m.group(2) or m.group(4)}) + {offset}", line))
        text = "\n".join(out)
        moved, kept = f"+ {offset}", []
        changed: set[str] = set()
        for statement in ast.parse(text).body:
            source = ast.get_source_segment(text, statement) or ""
            read = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
            if moved in source or read & changed:
                kept.append(source)
                changed |= hidden.names_bound(source) | _written(statement)
        return "\n".join(kept)


def _written(statement: ast.stmt) -> set[str]:
    """The names whose value a statement changes in place (``x[i] = ...``, ``x.a = ...``)."""
    found = set()
    for node in ast.walk(statement):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            while isinstance(target, (ast.Subscript, ast.Attribute)):
                target = target.value
            if isinstance(target, ast.Name):
                found.add(target.id)
    return found


def _solution_part(text: str) -> str:
    parts = re.findall(r"BEGIN SOLUTION(.*?)END SOLUTION", text, flags=re.S)
    return "\n".join(parts)


@dataclass
class Notebook:
    """A source notebook's cells and graded questions."""

    path: Path
    name: str  # "session-3/exercises"
    cells: list[tuple[str, str, str]]  # (kind: setup | answer | test | locked | written, grade id, source)
    questions: dict[str, Question] = field(default_factory=dict)  # by answer grade id

    @classmethod
    def read(cls, path: Path) -> "Notebook":
        path = Path(path)
        source = json.loads(path.read_text(encoding="utf-8"))
        found = cls(path, f"{path.parent.name}/{path.stem}", [])
        answers: dict[str, str] = {}
        for cell in source.get("cells", []):
            gid, text = str(nbgrader_cells.grade_id(cell) or ""), cell_text(cell)
            if cell.get("cell_type") != "code":
                continue
            kind = ("test" if nbgrader_cells.is_test(cell)
                    else "answer" if nbgrader_cells.is_solution(cell)
                    else "locked" if nbgrader_cells.is_locked(cell) else "")
            if kind:
                found.cells.append((kind, gid, text))
            if kind == "answer":
                answers[gid] = text
        # the names a test reads that an answer cell binds (not its helpers' own variables)
        given = set().union(*(hidden.names_bound(hidden.solution_text({"source": t}))
                              for t in answers.values()))
        for kind, gid, text in found.cells:
            qid = gid.removesuffix("-tests")
            if kind == "test" and qid in answers:
                names, functions = hidden.exported_names(source, text)
                own = _bound_anywhere(text)
                found.questions[qid] = Question(found.name, qid, answers[qid], text,
                                                [n for n in names if n in given and n not in own],
                                                functions)
        return found


def _bound_anywhere(text: str) -> set[str]:
    """Every name a cell binds, in its functions too (their arguments and variables)."""
    tree = ast.parse(text)
    return ({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            | {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)})


def _exec(text: str, name: str, ns: dict) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(text, name, "exec"), ns)  # noqa: S102 - the instructor's own cells


@dataclass
class Solved:
    """One id's run of a notebook: the namespace each test starts from."""

    student: str
    before_test: dict[str, dict]  # by answer grade id (its test's)
    answers: dict[str, dict]  # the reference answer of each question: {name: value}
    problem: str = ""  # why the set-up did not run


def solve(nb: Notebook, student: str, questions: set[str] | None = None) -> Solved:
    """The set-up, the reference answers and the tests of ``nb`` run for ``student`` (inside
    ``tools.common.student_run.as_student``); with ``questions``, the answer and test cells of
    those questions only (every locked cell runs)."""
    ns: dict = {"__name__": "__main__", "print": _quiet, "__memcourse_lambda__": hidden.tag_lambda}
    found = Solved(student, {}, {})
    for kind, gid, text in nb.cells:
        if questions is not None and kind in ("answer", "test") and gid.removesuffix("-tests") not in questions:
            continue
        if kind == "answer":
            try:  # nbgrader runs on past an answer that raises: its test fails
                _exec(hidden.solution_text({"source": text}), gid, ns)
            except Exception:  # noqa: BLE001
                pass
        elif kind == "test":
            qid = gid.removesuffix("-tests")
            found.before_test[qid] = dict(ns)
            question = nb.questions.get(qid)
            if question is not None:
                found.answers[qid] = {n: ns[n] for n in question.names + question.functions if n in ns}
            try:
                exec(hidden.test_code(text, gid), ns)  # noqa: S102
            except Exception:  # noqa: BLE001 - judged again, answer by answer
                pass
        else:
            try:
                _exec(text, gid, ns)
            except Exception as exc:  # noqa: BLE001 - nothing can be judged without it
                found.problem = f"the locked cell {gid} does not run: {exc!r}"[:300]
                return found
    return found


def exported(value):
    """``value`` as the grader's check sees it: through the plain data a kernel exports."""
    if callable(value) and not isinstance(value, type):
        return value
    if type(value) is np.ndarray and value.dtype.kind == "f":  # what the round trip gives, fast
        return np.array(value, dtype=np.float64)
    try:
        return rebuild_within(to_plain(value), Budget())
    except Unplain:
        return value


def judge(question: Question, solved: Solved, values: dict) -> str:
    """'' if the whole test cell passes on ``values`` (the answer names it reads, by name;
    names missing are left unbound), else the assertion's message (or the error)."""
    bound = dict(solved.before_test[question.name])
    for name in question.names + question.functions:
        bound.pop(name, None)
    bound.update({name: exported(value) for name, value in values.items()})
    bound["print"], bound["__memcourse_lambda__"] = _quiet, hidden.tag_lambda
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(hidden.test_code(question.test, f"{question.name}-tests"), bound)  # noqa: S102
    except AssertionError as exc:
        return f"AssertionError: {exc}"[:300] if str(exc) else "AssertionError"
    except Exception as exc:  # noqa: BLE001 - any failure loses the points
        return f"{type(exc).__name__}: {exc}"[:300]
    return ""


def seed_offset(student: str, k: int) -> int:
    """How far the ``k``-th other seed of ``student`` is from the solution's (each student
    chooses seeds of their own)."""
    return 1 + int(uniform("calibration", student, k) * SEED_RANGE)


def honest(question: Question, solved: Solved, k: int) -> dict | None:
    """The answers of the reference method with the student's ``k``-th seed (0: the
    solution's own); None when the cell raised."""
    if k == 0:
        return solved.answers.get(question.name)
    # copies of what the statements read before they bind it, and so may change in place (the
    # reference run's values stay); a name they bind first or never mention is left as it is
    text = question.reseeded(seed_offset(solved.student, k))
    read = read_before_bound(text)
    ns = {name: copy.copy(value) if name in read and isinstance(value, (np.ndarray, list, dict, set)) else value
          for name, value in solved.before_test[question.name].items()}
    try:
        _exec(text, question.name, ns)
    except Exception:  # noqa: BLE001
        return None
    return {n: ns[n] for n in question.names + question.functions if n in ns}


def read_before_bound(text: str) -> set[str]:
    """The names the statements of ``text`` may read or change in place (``x[i] = ...``,
    ``x += ...``, ``x.append(...)``) before they bind them whole, in the order they run.

    Only a plain assignment or a loop's target binds a name (its value, or the loop's
    iterable, read first); a header (``if``, ``while``, ``with``) is read before its bodies;
    every name anywhere else counts as read, in a function's or a class's body and a
    comprehension too: an over-count only copies more."""
    read: set[str] = set()
    bound: set[str] = set()

    def names(node) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node else set()

    def visit(statements) -> None:
        for statement in statements:
            if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.For)):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                simple = [t for t in targets if isinstance(t, ast.Name)
                          or isinstance(t, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in t.elts)]
                read.update((names(getattr(statement, "value", None) or getattr(statement, "iter", None))
                             | {n for t in targets if t not in simple for n in names(t)}) - bound)
                bound.update(n for t in simple for n in names(t))
                visit(getattr(statement, "body", []))
                visit(getattr(statement, "orelse", []))
            elif isinstance(statement, (ast.If, ast.While, ast.With)):
                header = [statement.test] if hasattr(statement, "test") else statement.items
                read.update(set().union(*(names(h) for h in header)) - bound)
                visit(statement.body)
                visit(getattr(statement, "orelse", []))
            else:
                read.update(names(statement) - bound)

    visit(ast.parse(text).body)
    return read


def reordered(values: dict) -> dict | None:
    """The answers with every dict's and list's entries in the reverse order, where a test
    may not mind their order (a dict's items, a list of names); None when none has two."""
    def flip(value):
        if isinstance(value, dict) and len(value) > 1:
            return dict(reversed(list(value.items())))
        if isinstance(value, (list, tuple)) and len(value) > 1 and all(isinstance(v, str) for v in value):
            return type(value)(reversed(value))
        return None

    flipped = {name: flip(value) for name, value in values.items()}
    if all(v is None for v in flipped.values()):
        return None
    return {name: values[name] if flipped[name] is None else flipped[name] for name in values}


def key_of(values: dict) -> str:
    """A question's answers as one short string, a digest (the same answers, the same
    string): an array of floats by its shape and bytes (a sample of 1e5 draws is hashed,
    not printed), anything else by its plain form."""
    digest = hashlib.sha256()
    for name, value in sorted(values.items()):
        if callable(value):
            continue
        digest.update(name.encode() + b"\0")
        if type(value) is np.ndarray and value.dtype.kind == "f":
            digest.update(f"ndarray f {value.shape}".encode())
            digest.update(np.ascontiguousarray(value, dtype=np.float64).tobytes())
        else:
            try:
                digest.update(canonical(value).encode())
            except (TypeError, ValueError):
                digest.update(repr(value).encode())
        digest.update(b"\0")
    return digest.hexdigest()


def numbers_in(value) -> list[float]:
    """Every number an answer holds (arrays, lists, dicts' values), bools left out."""
    if isinstance(value, (bool, np.bool_, str)) or callable(value):
        return []
    if isinstance(value, dict):
        return [x for v in value.values() for x in numbers_in(v)]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [x for v in value for x in numbers_in(v)]
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return []
    return array[np.isfinite(array)].tolist()


def band(question: Question, solved: Solved, names: list[str]) -> tuple[float, float] | None:
    """The factors ``(low, high)`` of the reference values of ``names`` (numbers or arrays of
    numbers, scaled together: a mean and the draws it is the mean of) that the test accepts,
    the other answers kept: bisection from 1, within ``1 - BAND_REACH / 2`` and
    ``1 + BAND_REACH``; None when the reference fails."""
    values = dict(solved.answers.get(question.name, {}))
    if any(n not in values for n in names) or judge(question, solved, values):
        return None
    base = {n: np.asarray(values[n], dtype=float) for n in names}

    def passes(factor: float) -> bool:
        return not judge(question, solved, {**values, **{n: b * factor for n, b in base.items()}})

    edges = []
    for far in (1 - BAND_REACH / 2, 1 + BAND_REACH):
        if passes(far):
            edges.append(far)
            continue
        inside, outside = 1.0, far
        for _ in range(BAND_STEPS):
            middle = (inside + outside) / 2
            inside, outside = (middle, outside) if passes(middle) else (inside, middle)
        edges.append(inside)
    return edges[0], edges[1]


def assertions_on(question: Question, name: str) -> list[str]:
    """The hidden test's assertions that read ``name`` (or a name made from it): where the
    accepted band of a measured answer comes from, as the test states it."""
    try:
        whole = ast.parse(hidden.solution_text({"source": question.test.replace("HIDDEN TESTS", "SOLUTION")}))
        tree = ast.parse(question.test.split("BEGIN HIDDEN TESTS", 1)[-1].split("### END HIDDEN TESTS")[0])
    except SyntaxError:
        return []
    derived = {name}  # the names made from it, in the visible part too (``_m = np.array(measured)``)
    for node in ast.walk(whole):
        if isinstance(node, ast.Assign):
            read = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            if read & derived:
                derived |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            read = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
            if read & derived:
                found.append(ast.unparse(node.test))
    return found
