"""Feedback: the HTML feedback of every graded submission (``nbgrader
generate_feedback``), without the hidden tests, a test cell showing its own message only,
every page cleaned (``tools.common.sanitize``: nothing a student wrote runs in the
reader's browser, and the page reads the same without JavaScript). A late submission's
pages say when it was handed in and due, how late, and what that cost
(``tools.grading.lateness``); nbgrader's own page lists the penalty among the scores.

Each submission's feedback runs apart, with a time and a memory limit (``feedback``): one
submission that makes nbconvert slow or hungry loses its own feedback, and only that.
"""

from __future__ import annotations

import concurrent.futures
import html
import json
import re
import shutil
from pathlib import Path

from nbgrader.utils import parse_utc

from tools.grading import lateness
from tools.grading.autograde import last_error
from tools.common import nbgrader_cells
from tools.grading.cells import read_nb
from tools.grading.outcome import Outcome
from tools.common.sanitize import clean_html, clean_notebook
from tools.grading.settings import Settings, grader_env
from tools.common.safe_files import read_bounded
from tools.grading.warm import Warm

# nbgrader's feedback preprocessors (nbgrader_config.py), its ClearHiddenTests on the test
# cells only (tools.grading.preprocessors.VisibleTests): a student's cell that holds the marker
# text must not stop the feedback
PREPROCESSORS = json.dumps([
    "nbgrader.preprocessors.GetGrades",
    "tools.grading.preprocessors.VisibleTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
])

FEEDBACK_SECONDS = 120  # wall-clock seconds of one submission's feedback (an honest one: 1-3)


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


def feedback(settings: Settings, outcomes: list[Outcome], jobs: int = 2,
             seconds: float = FEEDBACK_SECONDS) -> list[str]:
    """Generate the feedback (HTML) of every graded submission, ``jobs`` at a time; what
    went wrong, one line per submission.

    Each submission's feedback is one run of ``nbgrader generate_feedback`` of its own,
    forked from a warm nbgrader (``tools.grading.warm``: one per job, so nbgrader is
    imported once per job, not once per submission) with the limits grading has: at most
    ``seconds`` of wall-clock time and the address space of ``--memory-limit``; a run
    that reaches either is killed, with every process it started, and that submission
    has no feedback (said in the summary); the others go on.
    """
    pairs = sorted(
        {
            (o.student, o.assignment)
            for o in outcomes
            if (settings.root / "autograded" / o.student / o.assignment).is_dir()
        }
    )
    if not pairs:
        return []
    late = {(o.student, o.assignment): o for o in outcomes}
    parts = max(1, min(jobs, len(pairs)))
    env = grader_env(settings)

    def run(part: int) -> list[str]:
        warm = Warm(settings.root, env)
        try:
            return [p for who, assignment in pairs[part::parts]
                    if (p := one(warm, f"part-{part}", who, assignment))]
        finally:
            warm.close()

    def one(warm: Warm, name: str, who: str, assignment: str) -> str:
        share = settings.work / "feedback" / name
        shutil.rmtree(share, ignore_errors=True)
        feedback_copy(settings.root / "autograded" / who / assignment, share / who / assignment)
        log = share / "generate_feedback.log"
        pages = settings.root / "feedback" / who / assignment
        done = warm.start(
            [
                "generate_feedback",
                assignment,
                "--force",
                f"--student={who}",
                f"--CourseDirectory.autograded_directory={share}",
                f"--CourseDirectory.db_url={settings.db_url}",
                f"--GenerateFeedback.preprocessors={PREPROCESSORS}",
            ],
            settings.root, log, settings.memory_mb,
        )
        if done.wait(timeout=seconds) is None:
            done.kill()
            shutil.rmtree(pages, ignore_errors=True)
            return (f"{who} {assignment}: no feedback: its feedback ran longer than "
                    f"{seconds:g} s (the limit of one submission's feedback)")
        if done.returncode != 0:
            shutil.rmtree(pages, ignore_errors=True)
            return (f"{who} {assignment}: no feedback: nbgrader could not generate it "
                    f"({last_error(log)}; memory limit {settings.memory_mb} MB)")
        clean_pages(pages)
        mark_lateness(pages, late.get((who, assignment)))
        return ""

    with concurrent.futures.ThreadPoolExecutor(max_workers=parts) as pool:
        return [p for found in pool.map(run, range(parts)) for p in found]


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
            if not (nbgrader_cells.is_grade(cell) and not nbgrader_cells.is_solution(cell)):
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
