"""The term's schedule (``schedule.yml``): each session's due date, set in one place.

    from tools.release import schedule
    term = schedule.load(root)        # Schedule; a clear SystemExit on a bad file
    term.due["session-3"]             # an aware datetime in the schedule's time zone, or None
    term.due_utc("session-3")         # the same as naive UTC (nbgrader's gradebook keeps those)
    schedule.when(term.due["session-3"])   # "Monday 12 October 2026, 23:59 (Europe/Berlin)"
    schedule.due_line(term, "session-3", policy_text)   # the released header's "**Due:** ..." line

Why a file of the course and not nbgrader's own ``duedate`` alone: the gradebook is the
grader's working database (git-ignored, one per machine, remade by ``make grade``), while
the release (the notebooks' headers) and the hub's start page are built from the course's
files. The file is the source; ``make grade`` writes each date into nbgrader's gradebook
through its API (``tools.grading.lateness``), so that nbgrader's own lateness
(``total_seconds_late``) and its late-submission plugin work as nbgrader documents.

Depends on: ``tools.release.layout``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tools.release.layout import ASSIGNMENT, ROOT

FILE = "schedule.yml"
END_OF_DAY = dt.time(23, 59)


@dataclass
class Schedule:
    """The due date of each session (aware datetimes; None: no due date)."""

    timezone: str = "UTC"
    due: dict[str, dt.datetime | None] = field(default_factory=dict)

    def due_utc(self, assignment: str) -> dt.datetime | None:
        """The due date as naive UTC, as nbgrader's gradebook stores it (None: none)."""
        when = self.due.get(assignment)
        if when is None:
            return None
        return when.astimezone(dt.timezone.utc).replace(tzinfo=None)


def _bad(message: str) -> SystemExit:
    return SystemExit(f"{FILE}: {message}")


def _parse(value, zone: ZoneInfo, where: str) -> dt.datetime | None:
    """One due date of the file: None, "YYYY-MM-DD HH:MM", a date alone (end of day)."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):  # YAML read "2026-10-12 23:59:00" as a datetime
        when = value
    elif isinstance(value, dt.date):  # a date alone: the end of that day
        when = dt.datetime.combine(value, END_OF_DAY)
    elif isinstance(value, str):
        text = value.strip()
        try:
            if len(text) == 10:
                when = dt.datetime.combine(dt.date.fromisoformat(text), END_OF_DAY)
            else:
                when = dt.datetime.fromisoformat(text)
        except ValueError:
            raise _bad(f"{where}: {value!r} is not a date (write YYYY-MM-DD HH:MM)") from None
    else:
        raise _bad(f"{where}: {value!r} is not a date (write YYYY-MM-DD HH:MM)")
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone)
    return when.astimezone(zone)


def parse(data, known: list[str] | None = None) -> Schedule:
    """A schedule from the file's data; ``known``: the course's assignments, if checked."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise _bad("must hold `timezone:` and `due:` (a mapping)")
    extra = sorted(set(data) - {"timezone", "due"})
    if extra:
        raise _bad(f"unknown key(s) {', '.join(map(str, extra))} (only timezone and due)")
    name = data.get("timezone") or "UTC"
    try:
        zone = ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise _bad(f"timezone {name!r} is not a time zone name (e.g. Europe/Berlin)") from None
    due = data.get("due") or {}
    if not isinstance(due, dict):
        raise _bad("`due:` must map each session to its date (session-3: 2026-10-12 23:59)")
    term = Schedule(str(name), {})
    for session, value in due.items():
        session = str(session)
        if not ASSIGNMENT.match(session):
            raise _bad(f"{session!r} is not a session (session-1, session-2, ...)")
        if known is not None and session not in known:
            raise _bad(f"{session} is not an assignment of the course ({', '.join(known)})")
        term.due[session] = _parse(value, zone, session)
    return term


def load(root: Path = ROOT, known: list[str] | None = None) -> Schedule:
    """The course's schedule (an empty one when the file is missing)."""
    import yaml

    path = Path(root) / FILE
    if not path.is_file():
        return Schedule()
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise _bad(f"not YAML ({exc})") from None
    return parse(data, known)


def when(moment: dt.datetime | None) -> str:
    """A due date as a person reads it: "Monday 12 October 2026, 23:59 (Europe/Berlin)"."""
    if moment is None:
        return "no due date"
    zone = getattr(moment.tzinfo, "key", None) or moment.strftime("%Z") or "UTC"
    return f"{moment.strftime('%A')} {moment.day} {moment.strftime('%B %Y, %H:%M')} ({zone})"


# -- the released notebooks' header line (tools.release.due_header writes it) --------
MARK = "**Due:**"


def due_line(term: Schedule, assignment: str, policy_text: str = "") -> str:
    """The header's line for ``assignment`` ('' when it has no due date)."""
    moment = term.due.get(assignment)
    if moment is None:
        return ""
    line = f"{MARK} {when(moment)}"
    if policy_text:
        line += f"; {policy_text}"
    return line + "."


def with_due_line(text: str, line: str) -> str:
    """A header's markdown with the due line after its title (replacing an older one)."""
    lines, kept = text.split("\n"), []
    for i, ln in enumerate(lines):
        if ln.startswith(MARK) or (ln == "" and i and lines[i - 1].startswith(MARK)):
            continue  # an older due line and the blank line after it
        kept.append(ln)
    if not line:
        return "\n".join(kept)
    if kept and kept[0].startswith("#"):
        return "\n".join([kept[0], "", line] + kept[1:])
    return "\n".join([line, ""] + kept)
