"""Export and report: grades.csv (``nbgrader export``), the report CSV (one line
per submission: score, status, seconds, reasons, when it was handed in and due, its late
penalty) and the summary printed at the end.

Everything in them a student controls (a folder or file name, a reason, a message) is
written as text: each CSV cell through ``tools.common.text.csv_cell`` (no formula), each
printed line through ``tools.common.text.shown`` (no control character).
"""

from __future__ import annotations

import collections
import csv
import statistics
from pathlib import Path

from tools.common.text import csv_row, shown
from tools.release import assignments as course
from tools.release import layout
from tools.grading import gradebook, lateness
from tools.grading.outcome import STATUSES, Outcome
from tools.grading.settings import Settings

def export_csv(settings: Settings, path: Path) -> None:
    """grades.csv: nbgrader's export of the assignments handed in (a session the schedule
    only dated has no row of zeros)."""
    handed = gradebook.submitted_assignments(settings.db_url)
    result = course.run_nbgrader(
        ["export", f"--to={path}", f"--db={settings.db_url}",
         *(f"--assignment={name}" for name in handed)], cwd=settings.root
    )
    if result.returncode != 0:
        raise SystemExit(f"nbgrader export failed:\n{result.stdout}{result.stderr}")


def write_report(outcomes: list[Outcome], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            [
                "assignment",
                "student",
                "score",
                "max_score",
                "status",
                "needs_manual_grading",
                "seconds",
                "reasons",
                "grader_note",
                "numbers",
                "submitted",
                "due",
                "late",
                "late_penalty",
                "final_score",
            ]
        )
        for o in sorted(outcomes, key=lambda o: (o.assignment, o.student)):
            writer.writerow(csv_row(
                [
                    o.assignment,
                    o.student,
                    "" if o.status == "skipped" else f"{o.score:g}",
                    "" if o.status == "skipped" else f"{o.max_score:g}",
                    o.status,
                    "yes" if o.needs_manual else "no",
                    f"{o.seconds:.1f}",
                    " | ".join(o.reasons),
                    o.note,
                    o.numbers,
                    *_late_columns(o),
                ]
            ))


def _late_columns(o: Outcome) -> list[str]:
    """submitted, due (ISO 8601 UTC), late (how late), late_penalty, final_score."""
    late = o.late or lateness.Lateness()
    if o.status == "skipped":
        return ["", "", "", "", ""]
    return [lateness.utc_text(late.submitted), lateness.utc_text(late.due),
            lateness.late_text(late), f"{o.penalty:g}", f"{o.final_score:g}"]


SUMMARY_STATUSES = ["repaired", "overruled", "incomplete", "missing", "rejected", "failed"]


def summary(outcomes: list[Outcome], which: list[str], problems: list[str] = ()) -> str:
    """The table printed at the end: per assignment, and the submissions with a problem.

    ``graded`` counts the submissions graded (the mean, min and max are theirs);
    ``skipped`` those that could not be (listed below with the reason).
    """
    lines = [
        f"{'assignment':<12} {'graded':>6} {'mean':>7} {'min':>6} {'max':>6} {'of':>5} "
        + " ".join(f"{s:>{max(6, len(s))}}" for s in SUMMARY_STATUSES + ["skipped", "manual"])
    ]
    for assignment in sorted({o.assignment for o in outcomes} | set(which), key=_session_key):
        mine = [o for o in outcomes if o.assignment == assignment and o.status != "skipped"]
        count = collections.Counter(o.status for o in outcomes if o.assignment == assignment)
        tail = " ".join(
            f"{count[s]:>{max(6, len(s))}}" for s in SUMMARY_STATUSES + ["skipped"]
        )
        if not mine:
            lines.append(
                f"{assignment:<12} {0:>6} {'-':>7} {'-':>6} {'-':>6} {'-':>5} {tail} {0:>6}"
            )
            continue
        scores = [o.score for o in mine]
        lines.append(
            f"{assignment:<12} {len(mine):>6} {statistics.mean(scores):>7.2f} {min(scores):>6g} "
            f"{max(scores):>6g} {max(o.max_score for o in mine):>5g} {tail} "
            f"{sum(o.needs_manual for o in mine):>6}"
        )
    lines.append("")
    lines.append(
        "status: "
        + "; ".join(f"{s}: {STATUSES[s]}" for s in ["ok"] + SUMMARY_STATUSES + ["skipped"])
    )
    trouble = [o for o in outcomes if o.status != "ok"]
    if trouble:
        lines.append("")
        lines.append("Submissions with a problem (status: reasons):")
        for o in sorted(trouble, key=lambda o: (o.assignment, o.student)):
            score = "-" if o.status == "skipped" else f"{o.score:g}/{o.max_score:g}"
            lines.append(f"  {o.assignment} {o.student} {score} {o.status}:")
            lines += [f"      {r}" for r in o.reasons]
    late = [o for o in outcomes if o.late is not None and o.late.seconds_late > 0]
    if late:
        lines.append("")
        lines.append("Late submissions (handed in after the due date of schedule.yml, or of the "
                     "student's extension; penalty as configured in nbgrader_config.py):")
        for o in sorted(late, key=lambda o: (o.assignment, o.student)):
            lines.append(f"  {o.assignment} {o.student}: {lateness.late_text(o.late)}, "
                         f"-{o.penalty:g} points: {o.final_score:g}/{o.max_score:g}")
    extended = [o for o in outcomes if o.late is not None and o.late.extended]
    if extended:
        lines.append("")
        lines.append("Extensions (extensions.yml: the student's own due date, UTC):")
        for o in sorted(extended, key=lambda o: (o.assignment, o.student)):
            lines.append(f"  {o.assignment} {o.student}: due {lateness.utc_text(o.late.due)}, "
                         f"{lateness.late_text(o.late)}")
    noted = [o for o in outcomes if o.note]
    if noted:
        lines.append("")
        lines.append("Grader notes (not the submission's fault; graded as normal):")
        for o in sorted(noted, key=lambda o: (o.assignment, o.student)):
            lines.append(f"  {o.assignment} {o.student}: {o.note}")
    if problems:
        lines.append("")
        lines.append("The gradebook was changed by something other than the grader during the run")
        lines.append("(the changes were undone before the export):")
        lines += [f"  {p}" for p in problems]
    return "\n".join(shown(line) for line in lines)


def _session_key(name: str):
    m = layout.ASSIGNMENT.match(name)
    return (0, int(m.group(1)), name) if m else (1, 0, name)
