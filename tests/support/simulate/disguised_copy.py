"""A simulated class in which two students copied each other: the similarity report's test.

Every honest student writes each answer in a style of their own, as students do: the
solution rewritten by ``styled`` (``@`` or ``np.matmul``; nested calls
split into named steps or not; ``x += y`` or ``x = x + y``; a loop for a comprehension;
independent lines in another order;
checks of their own printed after an answer; scratch cells added where they worked), each
choice drawn per student and per answer. Some answer part of the questions only. The
copier takes a classmate's notebooks and disguises them: every name the copier is free
to choose renamed (the helpers, the steps, the functions' local names; not the answers'
names the tests read) and the added cells moved to other places. The answers stay
the solution's code, rewritten.

    made = simulate_copying(root, assignment, n_students=20, copier="student-13",
                            source="student-07")
"""

from __future__ import annotations

import ast
import builtins
import copy
import json
import random
from pathlib import Path

from tools.common import nbgrader_cells
from .answers import answer_text, questions
from tools.release import assignments as course

KEEP = set(dir(builtins)) | {"np", "math", "memkit", "self"}


class _Style(ast.NodeTransformer):
    """One student's way of writing an answer (the choices drawn once per answer)."""

    def __init__(self, rng: random.Random, fresh):
        self.rng, self.fresh = rng, fresh
        self.matmul = rng.choice(["@", "np.matmul"])
        self.split = rng.random() < 0.5
        self.augment = rng.random() < 0.5
        self.loops = rng.random() < 0.5

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult) and self.matmul != "@":
            func = ast.parse(self.matmul, mode="eval").body
            return ast.Call(func=func, args=[node.left, node.right], keywords=[])
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        target = node.targets[0] if len(node.targets) == 1 else None
        value = node.value
        if (self.augment and isinstance(target, ast.Name) and isinstance(value, ast.BinOp)
                and isinstance(value.left, ast.Name) and value.left.id == target.id):
            return ast.AugAssign(target=target, op=value.op, value=value.right)
        if self.split and isinstance(value, ast.Call):
            steps = []
            for i, arg in enumerate(value.args):
                if isinstance(arg, (ast.Call, ast.BinOp)) and not _uses_comprehension_name(arg):
                    name = self.fresh()
                    steps.append(ast.Assign(targets=[ast.Name(name, ast.Store())], value=arg))
                    value.args[i] = ast.Name(name, ast.Load())
            if steps:
                return steps + [node]
        if (self.loops and isinstance(target, ast.Name) and isinstance(value, ast.ListComp)
                and len(value.generators) == 1 and not value.generators[0].ifs):
            gen = value.generators[0]
            append = ast.Expr(ast.Call(ast.Attribute(ast.Name(target.id, ast.Load()), "append",
                                                     ast.Load()), [value.elt], []))
            return [ast.Assign(targets=[ast.Name(target.id, ast.Store())],
                               value=ast.List([], ast.Load())),
                    ast.For(target=gen.target, iter=gen.iter, body=[append], orelse=[])]
        return node


def _uses_comprehension_name(node) -> bool:
    return any(isinstance(n, (ast.ListComp, ast.GeneratorExp, ast.Lambda, ast.DictComp,
                              ast.SetComp)) for n in ast.walk(node))


def _swap_independent(body: list, rng: random.Random) -> list:
    """Adjacent statements that do not read what the other writes, in another order."""
    body = list(body)
    for i in range(len(body) - 1):
        a, b = body[i], body[i + 1]
        if not all(isinstance(s, (ast.Assign, ast.Expr)) for s in (a, b)) or rng.random() < 0.5:
            continue
        wrote = lambda s: {n.id for n in ast.walk(s) if isinstance(n, ast.Name)  # noqa: E731
                           and isinstance(n.ctx, ast.Store)}
        read = lambda s: {n.id for n in ast.walk(s) if isinstance(n, ast.Name)}  # noqa: E731
        if not (wrote(a) & read(b) or wrote(b) & read(a)):
            body[i], body[i + 1] = b, a
    return body


def _defined(tree) -> list[str]:
    return [t.id for node in tree.body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name)]


def styled(code: str, rng: random.Random, fresh) -> str:
    """The answer ``code`` as one honest student would write it (see the module)."""
    try:
        tree = ast.parse(code)
        tree = ast.fix_missing_locations(_Style(rng, fresh).visit(tree))
        tree.body = _swap_independent(tree.body, rng)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                node.body = _swap_independent(node.body, rng)
        text = ast.unparse(tree)
    except (SyntaxError, ValueError, TypeError, AttributeError, RecursionError):
        return code
    checks = []
    for name in _defined(tree):
        roll = rng.random()
        if roll < 0.15:
            checks.append(f"print({name!r}, {name})")
        elif roll < 0.25:
            checks.append(f"print(np.shape({name}), type({name}).__name__)")
    return text + ("\n" + "\n".join(checks) if checks else "")


SCRATCH = [
    "print(np.__version__)",
    "x_try = np.arange({a}) * {b}\nprint(x_try.sum(), x_try.mean())",
    "for k in range({a}):\n    print(k, k ** 2 - {b})",
    "tmp = np.linspace(0, {b}, {a})\nprint(np.round(tmp, 2))",
    "import math\nprint(math.sqrt({a}) + {b})",
    "M_try = np.eye({a})\nM_try[0, -1] = {b}\nprint(np.linalg.matrix_rank(M_try))",
]


def honest_notebook(source: dict, release: dict, answered: set[str], rng: random.Random,
                    student: str) -> dict:
    """The release with ``answered`` filled in, in this student's style, and scratch cells."""
    counter = iter(range(1, 10**6))
    prefix = rng.choice(["t", "step", "part", "h", "aux", "z"])
    fresh = lambda: f"{prefix}{next(counter)}"  # noqa: E731 - the student's step names
    by_id = {nbgrader_cells.grade_id(c): c for c in source["cells"] if nbgrader_cells.is_solution(c)}
    nb = copy.deepcopy(release)
    for cell in nb["cells"]:
        gid = nbgrader_cells.grade_id(cell)
        if nbgrader_cells.is_solution(cell) and gid in answered and gid in by_id:
            text = answer_text(by_id[gid])
            cell["source"] = styled(text, rng, fresh) if cell["cell_type"] == "code" else text
    answer_at = [i for i, c in enumerate(nb["cells"]) if nbgrader_cells.is_solution(c)]
    for _ in range(rng.randint(1, 3)):
        if not answer_at:
            break
        text = rng.choice(SCRATCH).format(a=rng.randint(2, 9), b=rng.randint(1, 50))
        at = rng.choice(answer_at) + 1
        nb["cells"].insert(at, {"cell_type": "code", "metadata": {}, "outputs": [],
                                "execution_count": None, "source": text,
                                "id": f"{student}-{at}-{rng.randint(0, 10**6)}"})
        answer_at = [i for i, c in enumerate(nb["cells"]) if nbgrader_cells.is_solution(c)]
    return nb


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node):
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        node.name = self.names.get(node.name, node.name)
        return node


def disguised(nb: dict, read_by_tests: set[str], rng: random.Random) -> dict:
    """A copy of a classmate's notebook: free names renamed, added cells moved."""
    nb = copy.deepcopy(nb)
    free: set[str] = set()
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or (nbgrader_cells.metadata(cell) and not nbgrader_cells.is_solution(cell)):
            continue
        try:
            tree = ast.parse("".join(cell["source"]))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                free.add(node.id)
            elif isinstance(node, ast.arg):
                free.add(node.arg)
    free -= read_by_tests | KEEP
    names = {n: f"my_{n.lower()}_{rng.randint(1, 9)}" for n in sorted(free)}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or (nbgrader_cells.metadata(cell) and not nbgrader_cells.is_solution(cell)):
            continue
        try:
            cell["source"] = ast.unparse(_Rename(names).visit(ast.parse("".join(cell["source"]))))
        except SyntaxError:
            continue
    added = [c for c in nb["cells"] if c["cell_type"] == "code" and not nbgrader_cells.metadata(c)]
    nb["cells"] = [c for c in nb["cells"] if not (c["cell_type"] == "code" and not nbgrader_cells.metadata(c))]
    answer_at = [i for i, c in enumerate(nb["cells"]) if nbgrader_cells.is_solution(c)]
    for cell in reversed(added):  # each to another place
        nb["cells"].insert(rng.choice(answer_at) + 1, cell)
        answer_at = [i for i, c in enumerate(nb["cells"]) if nbgrader_cells.is_solution(c)]
    return nb


def _read_by_tests(source: dict) -> set[str]:
    """Names the locked cells read or define (a copier keeps those: the tests need them)."""
    names = set()
    for cell in source["cells"]:
        if cell["cell_type"] != "code" or nbgrader_cells.is_solution(cell):
            continue
        try:
            tree = ast.parse("".join(cell["source"]))
        except SyntaxError:
            continue
        names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return names


def simulate_copying(root: Path, assignment: str, n_students: int = 20,
                     copier: str = "student-13", source: str = "student-07", seed: int = 0,
                     out: Path | None = None) -> dict[str, str]:
    """Write the class into ``out`` (default ``<root>/submitted``); return each student's
    kind: ``honest``, ``partial`` (some questions only), ``copied`` (the source: honest
    work another copied) or ``copier``."""
    root = Path(root)
    out = Path(out) if out else root / "submitted"
    rng = random.Random(seed)
    students = [f"student-{i:02d}" for i in range(1, n_students + 1)]
    sources = {p.name: json.loads(p.read_text()) for p in course.notebooks(root, assignment)}
    releases = {p.name: json.loads(p.read_text())
                for p in course.notebooks(root, assignment, course.RELEASE)}
    kinds, written = {}, {}
    for student in students:
        if student == copier:
            continue
        partial = student != source and rng.random() < 0.25
        kinds[student] = "copied" if student == source else "partial" if partial else "honest"
        written[student] = {}
        for name, src in sources.items():
            qs = [q.answer_id for q in questions(src)]
            answered = {q for q in qs if not partial or rng.random() < 0.6}
            written[student][name] = honest_notebook(src, releases[name], answered, rng, student)
    kinds[copier] = "copier"
    written[copier] = {name: disguised(nb, _read_by_tests(sources[name]), rng)
                       for name, nb in written[source].items()}
    for student, notebooks in written.items():
        folder = out / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        for name, nb in notebooks.items():
            (folder / name).write_text(json.dumps(nb, indent=1) + "\n")
    return kinds
