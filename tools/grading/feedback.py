"""Stage 6, feedback: the HTML feedback of every graded submission (``nbgrader
generate_feedback``), without the hidden tests, a test cell showing its own message only,
every page cleaned (``tools.grading.sanitize``: nothing a student wrote runs in the
reader's browser, and the page reads the same without JavaScript). A late submission's
pages say when it was handed in and due, how late, and what that cost
(``tools.grading.lateness``); nbgrader's own page lists the penalty among the scores.

Depends on: ``tools.grading.outcome``, ``tools.grading.settings``,
``tools.grading.cells``, ``tools.grading.sanitize``, ``tools.grading.student_files``,
``tools.grading.lateness``, ``tools.release.assignments``.
"""

from __future__ import annotations

import concurrent.futures
import html
import json
import re
import shutil
from pathlib import Path

from nbgrader.utils import parse_utc

from tools.release import assignments as course
from tools.grading import lateness
from tools.grading.cells import cell_meta, read_nb
from tools.grading.outcome import Outcome
from tools.grading.sanitize import clean_html, clean_notebook
from tools.grading.settings import Settings, grader_env
from tools.grading.student_files import read_bounded

# nbgrader's feedback preprocessors (nbgrader_config.py), its ClearHiddenTests on the test
# cells only (tools.grading.sandbox.VisibleTests): a student's cell that holds the marker
# text must not stop the feedback
PREPROCESSORS = json.dumps([
    "nbgrader.preprocessors.GetGrades",
    "tools.grading.sandbox.VisibleTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
])

def _is_time(text: str) -> bool:
    try:
        parse_utc(text)
    except (ValueError, OverflowError, TypeError):
        return False
    return True


# the files of a submission that nbgrader's release_feedback reads beside the feedback
# pages: the submission's time and the secret its feedback is filed under (hex, as
# nbgrader's submit writes it)
EXCHANGE_FILES = {
    "timestamp.txt": _is_time,
    "submission_secret.txt": lambda text: re.fullmatch(r"[0-9a-f]{16,256}", text) is not None,
}


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
    late = {(o.student, o.assignment): o for o in outcomes}
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
                f"--GenerateFeedback.preprocessors={PREPROCESSORS}",
            ],
            cwd=settings.root,
            env=grader_env(settings),
        )
        if result.returncode != 0:
            return False
        for who, assignment in pairs:
            if who in group:
                clean_pages(settings.root / "feedback" / who / assignment)
                mark_lateness(settings.root / "feedback" / who / assignment,
                              late.get((who, assignment)))
        return True

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
    """The notebooks of an autograded folder for the feedback, cleaned; a test cell shows
    its own message only.

    A test cell keeps its error's name and message ("AssertionError: q5: not the right
    choice"): not its traceback, whose lines could show the test, and not what the
    student's code printed or displayed while it ran. The other files of the submission
    are left out (the feedback is about the notebooks), but for the two that nbgrader's
    ``release_feedback`` reads beside the pages (``EXCHANGE_FILES``), each carried only
    when it is a small regular file of the form nbgrader writes.
    """
    into.mkdir(parents=True, exist_ok=True)
    for name, valid in EXCHANGE_FILES.items():
        try:
            text = read_bounded(autograded / name, 512).decode("ascii").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if valid(text):
            (into / name).write_text(text)
    for item in sorted(autograded.glob("*.ipynb")):
        if item.is_symlink() or not item.is_file():
            continue
        nb = clean_notebook(read_nb(item))
        for cell in nb.get("cells", []):
            meta = cell_meta(cell)
            if not (meta.get("grade") and not meta.get("solution")):
                continue
            kept = []
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    message = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
                    kept.append({**output, "traceback": [message.rstrip(": ")]})
            cell["outputs"] = kept
        (into / item.name).write_text(json.dumps(nb, indent=1))


def clean_pages(folder: Path) -> None:
    """Every feedback page of ``folder`` through the sanitizer (``clean_html``)."""
    for page in sorted(folder.glob("*.html")):
        if page.is_symlink() or not page.is_file():
            continue
        page.write_text(clean_html(page.read_text(errors="replace")))


def lateness_note(outcome: Outcome | None) -> str:
    """The paragraph a late submission's pages get ('' when it was on time): when it was
    handed in and due (UTC), how late, and the points it lost."""
    late = getattr(outcome, "late", None)
    if late is None or late.seconds_late <= 0:
        return ""
    text = (f"Handed in {lateness.utc_text(late.submitted)}, due {lateness.utc_text(late.due)} "
            f"(UTC): {lateness.late_text(late)}. The whole submission lost "
            f"{outcome.penalty:g} of its {outcome.score:g} points: "
            f"{outcome.final_score:g} / {outcome.max_score:g}.")
    return f'<p class="memcourse-late"><strong>Late.</strong> {html.escape(text)}</p>'


def mark_lateness(folder: Path, outcome: Outcome | None) -> None:
    """Put ``lateness_note`` under the title of every (cleaned) feedback page of ``folder``."""
    note = lateness_note(outcome)
    if not note:
        return
    for page in sorted(folder.glob("*.html")):
        if page.is_symlink() or not page.is_file():
            continue
        text = page.read_text(errors="replace")
        at = text.find("</h4>")
        at = at + len("</h4>") if at >= 0 else text.find("<body>") + len("<body>")
        page.write_text(text[:at] + note + text[at:])
