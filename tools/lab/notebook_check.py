"""Check your answers: run the visible tests of your notebooks, question by question.

    python -m tools.lab.notebook_check [NOTEBOOK ...]        (make check NB=exercises/session-3/exit-test.ipynb)

runs each notebook top to bottom in a fresh kernel (its own folder as working
directory) and prints, per question, *format ok* with what the visible test checked (the
line it printed), *failed* with the test's message, or *not attempted* (the answer cell
still raises NotImplementedError). The visible tests check the form of an answer (type,
shape, range) and catch a few common slips; they never say that a value is right: the
hidden tests, run when the notebook is graded, check the values. Without a notebook it
checks the notebooks under exercises/ that you changed (according to git), or all of them.
Where the course's solutions/ folder is present (a clone, not the course on a hub),
``make check GRADE=1 NB=...`` grades a notebook with the course's own grader instead:
right or wrong per question (``tools.lab.self_grade``, which reads notebooks with the
helpers here); the lab's Validate button says what this module says (``tools.lab.validate``).

    python -m tools.lab.notebook_check --id alice           (make check ID=alice)

sets your student id once: the exit tests draw your own numbers from it
(``memkit.variants``). Set the id your instructor files your work under (the folder name
of ``submitted/<your id>/``): the grader checks your answers against that id's numbers.
Without it you get the default id's; on the course's JupyterHub your hub user is your id.

What a notebook holds (a grade id, a title, a test's message, a printed line) is printed
with its control characters escaped (``tools.common.text.shown``): a notebook handed
around cannot move the cursor or clear the terminal of whoever checks it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from tools import ROOT
from tools.common import nbgrader_cells
from tools.common.text import shown



def _title(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()
    return ""


NOT_ATTEMPTED = "not attempted"  # the answer cell as released, or it still raises NotImplementedError


@dataclass
class Question:
    answer_id: str
    title: str = ""
    points: float = 0.0
    written: bool = False
    answer_index: int | None = None
    test_indices: list[int] = field(default_factory=list)
    status: str = NOT_ATTEMPTED
    message: str = ""


def questions(nb) -> list[Question]:
    """The questions of a released notebook: answer cell, its test cells and its title."""
    found: list[Question] = []
    title = ""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and nbgrader_cells.is_locked(cell):
            title = _title(cell.source)
        if nbgrader_cells.is_solution(cell):
            q = Question(nbgrader_cells.grade_id(cell) or f"cell {index + 1}", title, answer_index=index)
            if nbgrader_cells.is_grade(cell):
                q.written = True
                q.points = nbgrader_cells.points(cell)
            found.append(q)
        elif nbgrader_cells.is_grade(cell) and found:
            found[-1].test_indices.append(index)
            found[-1].points += nbgrader_cells.points(cell)
    return found


def unchanged(cell) -> bool:
    """True if an answer cell is still as released (nbgrader's checksum says so)."""
    from nbgrader.utils import compute_checksum

    checksum = nbgrader_cells.metadata(cell).get("checksum")
    return bool(checksum) and checksum == compute_checksum(cell)


def cell_error(cell) -> tuple[str, str] | None:
    """A run cell's error (its name and message), else its last line on stderr, or None."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output.get("ename", ""), output.get("evalue", "")
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            return "stderr", output.get("text", "").strip().splitlines()[-1] if output.get(
                "text"
            ) else ""
    return None


FORMAT_OK = "format ok"  # the visible tests passed: the answer has the form asked for
LATER = "its values are graded when the notebook is graded"


def _checked(cells) -> str:
    """What the visible tests said they checked: the last line they printed, without its
    leading "q3: format ok" (the report says that), or the general rule if they said nothing."""
    lines = []
    for cell in cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                lines += [line.strip() for line in output.get("text", "").splitlines() if line.strip()]
    said = lines[-1] if lines else ""
    head, found, rest = said.partition(FORMAT_OK)
    if found and ":" in head:
        said = rest.strip()
    return said[:200] if said else f"(the visible test passed); {LATER}"


def _changed_locked(nb) -> list[str]:
    from nbgrader.utils import compute_checksum

    changed = []
    for cell in nb.cells:
        checksum = nbgrader_cells.metadata(cell).get("checksum")
        if nbgrader_cells.is_locked(cell) and checksum and checksum != compute_checksum(cell):
            changed.append(nbgrader_cells.grade_id(cell) or "?")
    return changed


def check(path: Path, timeout: int = 120) -> tuple[list[Question], list[str]]:
    """Run one notebook and grade its visible tests; return the questions and warnings."""
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError
    from traitlets.config import Config

    nb = nbformat.read(path, as_version=4)
    warnings = [
        f"locked cell {gid} was changed: it will be put back as released when graded"
        for gid in _changed_locked(nb)
    ]
    qs = questions(nb)
    if not qs:
        return [], ["no graded question found: is this a course notebook?"]
    client = NotebookClient(
        nb,
        # encrypted kernel channels (CurveZMQ keys from the manager), so that the kernel
        # does not print its warning about plain-text TCP before the results
        config=Config({"KernelManager": {"transport_encryption": "auto"}}),
        timeout=timeout,
        interrupt_on_timeout=True,
        allow_errors=True,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    try:
        client.execute()
    except DeadKernelError:
        warnings.append(
            "the Python kernel stopped while running the notebook: later cells did not run"
        )
    for q in qs:
        answer = nb.cells[q.answer_index]
        if q.written:
            q.status = "not answered yet" if unchanged(answer) else "answered"
            q.message = "graded by hand"
            continue
        answer_error = cell_error(answer)
        test_errors = [cell_error(nb.cells[i]) for i in q.test_indices]
        ran = all(
            nb.cells[i].get("execution_count") or nb.cells[i].get("outputs") for i in q.test_indices
        )
        if (
            unchanged(answer)
            or (answer_error and answer_error[0] == "NotImplementedError")
            or any(e and e[0] == "NotImplementedError" for e in test_errors)
        ):
            q.status = NOT_ATTEMPTED
        elif not ran:
            q.status, q.message = "failed", "its test did not run (the kernel stopped before)"
        elif answer_error:
            q.status, q.message = (
                "failed",
                f"your answer cell raised {answer_error[0]}: {answer_error[1]}",
            )
        elif any(test_errors):
            ename, evalue = next(e for e in test_errors if e)
            q.status, q.message = "failed", f"{ename}: {evalue}" if evalue else ename
        else:
            q.status, q.message = FORMAT_OK, _checked([nb.cells[i] for i in q.test_indices])
    return qs, warnings


def changed_notebooks(root: Path = ROOT) -> list[Path]:
    """Notebooks under exercises/ that git sees as changed; all of them if none or no git."""
    every = sorted((root / "exercises").rglob("*.ipynb"))
    every = [p for p in every if ".ipynb_checkpoints" not in p.parts]
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--", "exercises"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return every
    if out.returncode != 0:
        return every
    changed = []
    for line in out.stdout.splitlines():
        name = line[3:].strip().strip('"')
        if " -> " in name:
            name = name.split(" -> ", 1)[1]
        path = root / name
        if path.suffix == ".ipynb" and path.exists():
            changed.append(path)
        elif path.is_dir():
            changed += sorted(
                p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts
            )
    return sorted(set(changed)) or every


def report(path: Path, qs: list[Question], warnings: list[str], root: Path = ROOT) -> str:
    try:
        name = path.resolve().relative_to(root)
    except ValueError:
        name = path
    lines = [str(name)]
    width = max((len(q.answer_id) for q in qs), default=2)
    for q in qs:
        pts = f"{q.points:g} pt{'s' if q.points != 1 else ''}"
        line = f"  {q.answer_id:<{width}}  {pts:>6}  {q.status}"
        if q.message:
            line += f" {q.message}" if q.status == FORMAT_OK else f": {q.message}"
        if q.title:
            line += f"   [{q.title}]"
        lines.append(line)
    auto = [q for q in qs if not q.written]
    counts = {s: sum(q.status == s for q in auto) for s in (FORMAT_OK, "failed", NOT_ATTEMPTED)}
    lines.append(
        "  "
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + " (the visible tests check the form of each answer and a few common slips, never"
        " that a value is right: the values are graded when the notebook is graded)"
    )
    lines += [f"  warning: {w}" for w in warnings]
    return "\n".join(shown(line) for line in lines)


def whose_numbers() -> str:
    """Which student's numbers the notebooks draw here, and how to change it."""
    from memkit import variants

    try:
        student, source = variants.student()
    except ValueError as exc:
        return f"student id: {exc}"
    line = f"student id {student!r} ({variants.SOURCES.get(source, source)})"
    if source == "file":
        line += f", kept in {variants.id_file()}"
    return line + ": the assignments draw this student's numbers"


def set_id(value: str | None, forget: bool) -> str:
    """Set (or forget) this user's student id; what to tell them."""
    from memkit import variants

    if forget:
        variants.forget_student()
        return f"student id forgotten: {whose_numbers()}"
    path = variants.set_student(value)
    return (f"student id set to {value.strip()!r} (kept in {path}). Run the set-up cell of an "
            "open notebook again (or restart its kernel) to draw this id's numbers; hand in "
            "under the same id, since the grader checks your answers against its numbers.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.lab.notebook_check",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--timeout", type=int, default=120, help="seconds per cell (default 120)")
    parser.add_argument("--id", help="set your student id once (make check ID=alice), then stop")
    parser.add_argument("--forget-id", action="store_true",
                        help="go back to the default student id, then stop")
    args = parser.parse_args(argv)
    if args.id is not None or args.forget_id:
        try:
            print(set_id(args.id, args.forget_id))
        except ValueError as exc:
            print(f"not set: {exc}")
            return 2
        return 0
    print(whose_numbers())
    print()
    paths = args.notebooks or changed_notebooks()
    if not paths:
        print("no notebook to check (exercises/ is empty)")
        return 1
    status = 0
    for path in paths:
        if not path.exists():
            print(f"{path}: no such notebook")
            status = 2
            continue
        try:
            qs, warnings = check(path, args.timeout)
        except Exception as exc:  # a notebook that cannot be read or run
            print(shown(f"{path}: could not be checked ({type(exc).__name__}: {exc})"))
            status = 2
            continue
        print(report(path, qs, warnings))
        print()
    return status


if __name__ == "__main__":
    sys.exit(main())
