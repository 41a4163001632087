"""Lateness: when a submission was handed in, when it was due, and what lateness costs.

* **When it was handed in** is the ``timestamp.txt`` of its folder in the submitted tree,
  which nbgrader reads. On the course hub the collect step writes it from the server's
  clock (the file system's time of the student's own entry, ``tools.hub``), never from
  what the student's files say; a folder put there by hand has the time the instructor
  gives it, or none (then it is on time). ``read_timestamp`` reads it as a student's file
  (bounded, no link followed) and staging hands nbgrader a clean one, or none, with the
  reason (a malformed one would stop nbgrader's batch).
* **When it was due** comes from the course's schedule (``schedule.yml``,
  ``tools.release.schedule``); ``record_due_dates`` writes it into nbgrader's gradebook
  through nbgrader's API (``Assignment.duedate``), so that nbgrader computes each
  submission's ``total_seconds_late`` itself and ``nbgrader export`` writes the due date.
  A student's extension (``extensions.yml``) is nbgrader's own ``SubmittedAssignment.extension``,
  granted by ``settle`` through ``Gradebook.grant_extension`` (and removed once the file no
  longer grants it): nbgrader's ``duedate`` of that submission is then the student's.
* **What it costs** is the policy the instructor configures in ``nbgrader_config.py``
  through nbgrader's ``LateSubmissionPlugin`` interface (``AssignLatePenalties.plugin_class``):
  by default ``FractionPerDay``, a fraction of each notebook's score per day or part of a
  day late, capped. nbgrader applies it during autograding; ``settle`` applies it again
  after the grader's own check (which may withdraw points, and the penalty is a fraction
  of what is left) and returns what the report, the summary and the feedback show.

Stage: beside staging (a submission's time) and judgement (its penalty).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from dataclasses import dataclass
from pathlib import Path

from nbgrader.plugins import BasePlugin
from traitlets import Float, TraitError, validate

from tools.common import safe_files as files
from tools.release import schedule

TIMESTAMP = "timestamp.txt"
MAX_TIMESTAMP = 200  # bytes: "2026-03-01 12:00:00.000000 America/Argentina/Buenos_Aires"
EARLIEST, LATEST = dt.datetime(2000, 1, 1), dt.datetime(2100, 1, 1)
DAY = 86400.0


class FractionPerDay(BasePlugin):
    """A late notebook loses ``per_day`` of its score for each day (or part of one) late,
    at most ``cap`` of it: penalty = score * min(cap, per_day * ceil(seconds late / 86400)).

    Configured in ``nbgrader_config.py``::

        c.AssignLatePenalties.plugin_class = "tools.grading.lateness.FractionPerDay"
        c.FractionPerDay.per_day = 0.10   # 10 % of the score per day late
        c.FractionPerDay.cap = 0.50       # never more than half of it
    """

    per_day = Float(0.10, help="fraction of the score lost per day (or part of a day) late"
                    ).tag(config=True)
    cap = Float(0.50, help="the largest fraction of the score a late submission loses"
                ).tag(config=True)

    @validate("per_day", "cap")
    def _fraction(self, proposal):
        value = proposal["value"]
        if not 0.0 <= value <= 1.0:
            raise TraitError(f"FractionPerDay.{proposal['trait'].name} must be a fraction "
                             f"between 0 and 1, not {value!r}")
        return value

    def days_late(self, total_seconds_late: float) -> int:
        return math.ceil(total_seconds_late / DAY) if total_seconds_late > 0 else 0

    def fraction(self, total_seconds_late: float) -> float:
        return min(self.cap, self.per_day * self.days_late(total_seconds_late))

    def late_submission_penalty(self, student_id: str, score: float,
                                total_seconds_late: float) -> float:
        """nbgrader's interface: the points a notebook of ``score`` points loses."""
        return round(float(score or 0.0) * self.fraction(total_seconds_late), 6)

    def describe(self) -> str:
        """The policy in a sentence (the released notebooks' headers, the README)."""
        per_day, cap = round(100 * self.per_day), round(100 * self.cap)
        if per_day == 0 or cap == 0:
            return "a late submission loses nothing"
        return (f"a late submission loses {per_day} % of its score for each day or part of a day "
                f"late, at most {cap} %")


@functools.lru_cache(maxsize=4)
def policy(root: Path) -> BasePlugin:
    """The late-submission plugin ``nbgrader_config.py`` of the course configures (an
    instance, configured as nbgrader would configure it)."""
    from nbgrader.preprocessors import AssignLatePenalties
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    try:
        return AssignLatePenalties(config=config).plugin_class(config=config)
    except TraitError as exc:
        raise SystemExit(f"nbgrader_config.py: {exc}") from None


def record_due_dates(db_url: str, term: schedule.Schedule, which: list[str]) -> None:
    """Each assignment's due date (from the schedule) into nbgrader's gradebook, and each
    extension into the submission it extends, where there is one already."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gb:  # a new one is stamped by nbgrader's `alembic` (on PATH)
        for assignment in which:
            gb.update_or_create_assignment(assignment, duedate=term.due_utc(assignment))
            for sub in gb.find_assignment(assignment).submissions:
                extension = term.extension(assignment, sub.student_id)
                try:
                    gb.grant_extension(assignment, sub.student_id,
                                       minutes=extension.total_seconds() / 60 if extension else 0)
                except MissingEntry:
                    continue


def extension(root: Path, assignment: str, student: str) -> dt.timedelta | None:
    """The student's extension for ``assignment`` (``extensions.yml``), or None."""
    return schedule.load(Path(root)).extension(assignment, student)


def read_timestamp(folder: Path) -> tuple[dt.datetime | None, str | None]:
    """A submission's ``timestamp.txt``: (its time as naive UTC, or None; why it was not
    used, or None). Read as a student's file: at most ``MAX_TIMESTAMP`` bytes, no link."""
    from nbgrader.utils import parse_utc

    path = Path(folder) / TIMESTAMP
    if files.kind(path) == "missing":
        return None, None
    try:
        raw = files.read_bounded(path, MAX_TIMESTAMP)
    except files.Refused as exc:
        return None, f"{TIMESTAMP}: not read ({exc}): no time of submission, so not late"
    except OSError as exc:
        return None, f"{TIMESTAMP}: not read ({exc.strerror}): no time of submission, so not late"
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        when = parse_utc(text) if text else None
    except (ValueError, OverflowError, TypeError, AttributeError):
        when = None
    if when is None or not EARLIEST <= when < LATEST:
        return None, (f"{TIMESTAMP}: {text[:60]!r} is not a time of submission: "
                      "no time, so not late")
    return when, None


def write_timestamp(folder: Path, when: dt.datetime) -> None:
    """The clean ``timestamp.txt`` nbgrader reads (UTC, nbgrader's own format)."""
    (Path(folder) / TIMESTAMP).write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC\n")


@dataclass
class Lateness:
    """When one submission was handed in and due, and what lateness cost it."""

    submitted: dt.datetime | None = None  # naive UTC
    due: dt.datetime | None = None  # naive UTC
    seconds_late: float = 0.0
    days_late: int = 0
    penalty: float = 0.0  # points, every notebook together
    extended: bool = False  # ``due`` is the student's extension's


def as_message(late: Lateness | None) -> dict | None:
    """A ``Lateness`` as plain data (a Dask worker's event: times as ISO strings)."""
    if late is None:
        return None
    return {"submitted": late.submitted.isoformat() if late.submitted else None,
            "due": late.due.isoformat() if late.due else None,
            "seconds_late": float(late.seconds_late), "days_late": int(late.days_late),
            "penalty": float(late.penalty), "extended": bool(late.extended)}


def from_message(data) -> Lateness | None:
    """The ``Lateness`` a worker sent (``as_message``)."""
    if not isinstance(data, dict):
        return None
    parse = lambda v: dt.datetime.fromisoformat(v) if isinstance(v, str) else None  # noqa: E731
    return Lateness(parse(data.get("submitted")), parse(data.get("due")),
                    float(data.get("seconds_late") or 0.0), int(data.get("days_late") or 0),
                    float(data.get("penalty") or 0.0), bool(data.get("extended")))


def settle(gb, assignment: str, student: str, plugin: BasePlugin,
           extension: dt.timedelta | None = None) -> Lateness:
    """The penalty of each notebook of a graded submission, from its score now (after the
    grader's check), written to the gradebook as nbgrader's ``AssignLatePenalties`` does:
    the plugin's value, kept between 0 and the notebook's score; ``extension``: the
    student's (``schedule.Schedule.extension``), granted first (None: an older one removed)."""
    from nbgrader.api import MissingEntry

    try:
        submission = gb.find_submission(assignment, student)
    except MissingEntry:
        return Lateness()
    gb.grant_extension(assignment, student, minutes=extension.total_seconds() / 60 if extension else 0)
    seconds = float(submission.total_seconds_late or 0.0)
    total = 0.0
    for notebook in submission.notebooks:
        penalty = None
        if seconds > 0:
            penalty = plugin.late_submission_penalty(student, float(notebook.score), seconds)
            if penalty is not None:
                penalty = min(max(0.0, float(penalty)), float(notebook.score))
                total += penalty
        notebook.late_submission_penalty = penalty
    gb.db.commit()
    days = plugin.days_late(seconds) if hasattr(plugin, "days_late") else math.ceil(seconds / DAY)
    return Lateness(submission.timestamp, submission.duedate, seconds, days, round(total, 6),
                    bool(extension))


def late_text(late: Lateness) -> str:
    """How late, as the report and the feedback say it: "1 d 3 h 5 min late (2 days begun)",
    "on time (extended due date)"."""
    extended = ["extended due date"] if late.extended else []
    if late.seconds_late <= 0:
        if not (late.submitted and late.due):
            return ""
        return "on time" + (f" ({extended[0]})" if extended else "")
    minutes = int(late.seconds_late // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    exact = " ".join(p for p in (f"{days} d" if days else "", f"{hours} h" if hours else "",
                                  f"{minutes} min" if minutes or not (days or hours) else "") if p)
    counted = f"{late.days_late} day{'s' if late.days_late != 1 else ''} begun"
    return f"{exact} late ({', '.join([counted] + extended)})"


def utc_text(moment: dt.datetime | None) -> str:
    """A naive UTC time as the report writes it (ISO 8601 with Z)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else ""


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.grading.lateness [--course-dir DIR]`` (``make publish`` runs it):
    the schedule's due dates and the extensions into nbgrader's gradebook, so that
    Formgrader shows them before anything is graded."""
    import argparse

    from tools.grading.settings import default_db_url
    from tools.release import layout

    parser = argparse.ArgumentParser(prog="python -m tools.grading.lateness",
                                     description=main.__doc__)
    parser.add_argument("--course-dir", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    root = args.course_dir.resolve()
    every = layout.assignments(root, layout.SOURCE)
    term = schedule.load(root, every)
    record_due_dates(default_db_url(root), term, every)
    for assignment in every:
        print(f"{assignment}: due {schedule.when(term.due.get(assignment))}")
    for (assignment, student), moment in sorted(term.extended.items()):
        print(f"{assignment}, {student}: due {schedule.when(moment)} (extensions.yml)")
    print(f"the due dates are in the gradebook ({default_db_url(root).split('?')[0]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
