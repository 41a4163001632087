"""Scores and reasons: what a submission scored once nbgrader is done with it.

Scores come from the gradebook (``scores``; ``record_zero`` for a submission nothing could
run); reasons from the autograded notebooks (cells that overran or printed without end,
``scan_autograded``); each test cell's points from the grader's own check of it alone
(``apply_judgement``, ``tools.grading.recheck``), never from what the kernel attached to it.
``finish`` puts it together as an ``Outcome`` with its status, and the late penalty of the
score that is left (``tools.grading.lateness.settle``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tools.common.text import counted
from tools.grading import gradebook, hidden, item_analysis, lateness, recheck
from tools.release import layout
from tools.common import nbgrader_cells
from tools.grading.cells import TRUNCATED, cell_text, read_nb
from tools.grading.outcome import Outcome, status_of
from tools.common.sanitize import clean_notebook
from tools.grading.settings import Settings
from tools.grading.staging import Staged

def scores(settings: Settings, assignment: str, student: str):
    from nbgrader.api import MissingEntry

    with gradebook.opened(settings.db_url) as gb:
        try:
            sub = gb.find_submission(assignment, student)
        except MissingEntry:
            return None
        return float(sub.score), float(sub.max_score), bool(sub.needs_manual_grade)


def record_zero(settings: Settings, assignment: str, student: str) -> None:
    """A submission with nothing nbgrader can run: every grade 0, in the gradebook."""
    with gradebook.opened(settings.db_url) as gb:
        gb.update_or_create_student(student)
        sub = gb.update_or_create_submission(assignment, student)
        for notebook in sub.notebooks:
            for grade in notebook.grades:
                grade.auto_score = 0
                grade.needs_manual_grade = False
        gb.db.commit()


def scan_autograded(folder: Path, cell_timeout: int) -> list[str]:
    """Reasons read from the autograded notebooks: cells that overran or printed without end."""
    reasons = []
    for path in sorted(folder.glob("*.ipynb")):
        nb = read_nb(path)
        slow, endless = [], []
        for index, cell in enumerate(nb.get("cells", [])):
            where = nbgrader_cells.grade_id(cell) or f"cell {index + 1}"
            outputs = cell.get("outputs", [])
            names = {o.get("ename") for o in outputs if o.get("output_type") == "error"}
            if "CellTimeoutError" in names:
                slow.append(f"{path.name}: {where} ran longer than {cell_timeout} s: interrupted")
            if any(
                TRUNCATED in cell_text({"source": o.get("text", "")})
                for o in outputs
                if o.get("output_type") == "stream"
            ):
                endless.append(f"{path.name}: {where} printed without end: output cut")
        reasons += counted(slow, f"cells of {path.name} interrupted")
        reasons += counted(endless, f"cells of {path.name} whose output was cut")
    return reasons


def finish(
    settings: Settings, staged: Staged, graded: bool, extra: list[str], seconds: float
) -> Outcome:
    """The outcome of a submission once nbgrader is done with it (or gave up)."""
    outcome = Outcome(staged.student, staged.assignment, reasons=staged.reasons + extra)
    autograded = settings.root / "autograded" / staged.student / staged.assignment
    overruled: list[str] = []
    if graded:
        try:
            outcome.reasons += scan_autograded(autograded, settings.cell_timeout)
            overruled = apply_judgement(settings, staged, autograded)
            outcome.reasons += overruled
        except Exception as exc:  # noqa: BLE001 - this submission's, never the batch's
            outcome.reasons.append(
                f"the grader could not check it ({type(exc).__name__}: {str(exc)[:200]}): scored 0")
            graded = False
    if not graded:
        shutil.rmtree(autograded, ignore_errors=True)
        record_zero(settings, staged.assignment, staged.student)
    with gradebook.opened(settings.db_url) as gb:
        outcome.late = lateness.settle(gb, staged.assignment, staged.student,
                                       lateness.policy(settings.root),
                                       lateness.extension(settings.root, staged.assignment,
                                                          staged.student))
    if outcome.late.submitted is None:
        outcome.late.submitted = staged.timestamp
    found = scores(settings, staged.assignment, staged.student)
    if found:
        outcome.score, outcome.max_score, outcome.needs_manual = found
    outcome.numbers = " | ".join(f"{name}: {line}" for name, line in sorted(staged.numbers.items()))
    outcome.choices = dict(staged.choices)
    outcome.status = status_of(graded, staged.handed_in, outcome.reasons, bool(overruled))
    outcome.seconds = seconds + staged.screen_seconds
    return outcome


def _rewrite(path: Path, nb: dict) -> None:
    """Replace a notebook nbgrader left read-only (444) by its owner, keeping its mode.

    A new file renamed over the old one needs only the folder to be writable, so an
    instructor who grades as themselves (on a hub, not as root) can do it too.
    """
    mode = path.stat().st_mode & 0o777
    fresh = path.with_name(path.name + ".grader")
    fresh.write_text(json.dumps(nb, indent=1))
    os.chmod(fresh, mode)
    os.replace(fresh, path)


def show_numbers(nb: dict, verdicts: recheck.Judgement) -> None:
    """The set-up cell shows the student's numbers as the grader drew them for the id it
    knows (``memkit.variants``), in place of what the kernel printed: the feedback shows
    the numbers the answers were checked against."""
    if not verdicts.numbers:
        return
    for cell in nb.get("cells", []):
        if nbgrader_cells.grade_id(cell) == "setup" and cell.get("cell_type") == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout",
                                "text": verdicts.numbers}]


def apply_judgement(settings: Settings, staged: Staged, autograded: Path) -> list[str]:
    """Score every test cell by the grader's own check (``tools.grading.recheck``) alone.

    A test cell the whole check passes (visible and hidden parts, in the grader's process)
    scores its points; one that fails, raises, or whose notebook's check did not finish in
    its limit scores 0, whatever the kernel attached to it: nbgrader reads a test cell's
    outputs (an ``execute_result`` as partial credit, an error as none), and a kernel can
    publish either on its own, so those outputs are dropped from the test cells and never
    set a score. A failed cell gets the grader's error, so the feedback says why. The
    export cells are removed from the autograded notebooks, which are cleaned
    (``tools.common.sanitize``: Formgrader shows them). Returns the reasons: a test that
    passed in the kernel (no error there) and not in the grader's check is overruled.
    """
    from nbgrader.api import MissingEntry

    reasons: list[str] = []
    settled: list[tuple[str, str, float]] = []
    for name in sorted(staged.screened):
        path = autograded / name
        if not path.exists():
            continue
        nb = read_nb(path)
        source = staged.sources.get(name)
        if source:
            exports = recheck.read_exports(nb)
            staged.choices[name] = item_analysis.chosen(source, exports)
            verdicts = recheck.judge_apart(
                source, exports, staged.splits.get(name) or hidden.Split(),
                memory_mb=settings.memory_mb, student=staged.student, seat=staged.seat,
                folder=settings.root / layout.SOURCE / staged.assignment)
        else:
            verdicts = recheck.Judgement(problem="the grader has no source of it")
        show_numbers(nb, verdicts)
        if verdicts.numbers_line:
            staged.numbers[name] = verdicts.numbers_line
        for cell in nb.get("cells", []):
            if not nbgrader_cells.is_test(cell):
                continue
            gid = nbgrader_cells.grade_id(cell)
            points = nbgrader_cells.points(cell)
            verdict = verdicts.verdicts.get(gid)
            kernel = cell.get("outputs") or []
            failed_in_kernel = any(o.get("output_type") == "error" for o in kernel)
            cell["outputs"] = outputs = [
                o for o in kernel if o.get("output_type") not in ("error", "execute_result")]
            if verdict is not None and verdict.passed:
                settled.append((name, gid, points))
                continue
            settled.append((name, gid, 0.0))
            if verdict is not None:
                message = verdict.message
                if not failed_in_kernel:
                    reasons.append(
                        f"{name}: {gid} passed in the student's kernel but not when the grader "
                        "checked the answers: its points were withdrawn")
            else:
                problem = verdicts.problem or "no verdict"
                message = f"RuntimeError: not checked by the grader ({problem})"
                if not failed_in_kernel:
                    reasons.append(f"{name}: {gid} was not checked by the grader "
                                   f"({problem}): its points were withdrawn")
            ename, _, evalue = message.partition(": ")
            outputs.append(
                {
                    "output_type": "error",
                    "ename": ename,
                    "evalue": evalue,
                    "traceback": [f"{message} (checked by the grader)"],
                }
            )
        nb["cells"] = [c for c in nb.get("cells", []) if not recheck.grader_cell(c)]
        _rewrite(path, clean_notebook(nb))  # Formgrader shows it to the instructor
    if settled:
        with gradebook.opened(settings.db_url) as gb:
            for name, gid, points in settled:
                try:
                    grade = gb.find_grade(
                        gid, name[: -len(".ipynb")], staged.assignment, staged.student
                    )
                except MissingEntry:
                    continue
                grade.auto_score = points
            gb.db.commit()
    return reasons
