"""Stage 6, feedback: the HTML feedback of every graded submission (``nbgrader
generate_feedback``), without the hidden tests, a failing test showing its message only.

Depends on: ``tools.grading.outcome``, ``tools.grading.settings``,
``tools.grading.cells``, ``tools.release.assignments``.
"""

from __future__ import annotations

import concurrent.futures
import json
import shutil
from pathlib import Path

from tools.release import assignments as course
from tools.grading.cells import cell_meta, read_nb
from tools.grading.outcome import Outcome
from tools.grading.settings import Settings

def feedback(settings: Settings, outcomes: list[Outcome], jobs: int = 2) -> list[str]:
    """Generate the feedback (HTML) of every graded submission, in ``jobs`` nbgrader processes.

    Each process sees a share of the students (a folder of links to their autograded
    folders); if one fails, its students are done one at a time so that the failure is
    named.
    """
    pairs = sorted(
        {
            (o.student, o.assignment)
            for o in outcomes
            if (settings.root / "autograded" / o.student / o.assignment).is_dir()
        }
    )
    graded = sorted({student for student, _ in pairs})
    if not graded:
        return []
    parts = max(1, min(jobs, len(graded)))
    groups = [graded[i::parts] for i in range(parts)]

    def run(group: list[str], name: str, student: str = "*") -> bool:
        share = settings.work / "feedback" / name
        shutil.rmtree(share, ignore_errors=True)
        for who, assignment in pairs:
            if who in group:
                feedback_copy(
                    settings.root / "autograded" / who / assignment, share / who / assignment
                )
        result = course.run_nbgrader(
            [
                "generate_feedback",
                "*",
                "--force",
                f"--student={student}",
                f"--CourseDirectory.autograded_directory={share}",
                f"--CourseDirectory.db_url={settings.db_url}",
            ],
            cwd=settings.root,
        )
        return result.returncode == 0

    problems = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=parts) as pool:
        done = list(pool.map(lambda ig: run(ig[1], f"part-{ig[0]}"), enumerate(groups)))
    for ok, group in zip(done, groups):
        if ok:
            continue
        for student in group:
            if not run([student], f"one-{student}", student):
                problems.append(f"{student}: feedback could not be generated")
    return problems


def feedback_copy(autograded: Path, into: Path) -> None:
    """A copy of an autograded folder for the feedback: a failing test shows its message only.

    The error of a test cell keeps its name and message ("AssertionError: q5: not the
    right choice"), not its traceback, whose lines would show the hidden test that failed
    (its expected value included).
    """
    into.mkdir(parents=True, exist_ok=True)
    for item in autograded.iterdir():
        if not item.is_file():
            continue
        if item.suffix != ".ipynb":
            shutil.copy(item, into / item.name)
            continue
        nb = read_nb(item)
        for cell in nb.get("cells", []):
            meta = cell_meta(cell)
            if not (meta.get("grade") and not meta.get("solution")):
                continue
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    message = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
                    output["traceback"] = [message.rstrip(": ")]
        (into / item.name).write_text(json.dumps(nb, indent=1))
