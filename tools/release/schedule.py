"""The term's schedule (``schedule.yml``): each session's due date, set in one place.

    from tools.release import schedule
    term = schedule.load(root)        # Schedule; a clear SystemExit on a bad file
    term.due["session-3"]             # an aware datetime in the schedule's time zone, or None
    term.due_utc("session-3")         # the same as naive UTC (nbgrader's gradebook keeps those)
    schedule.when(term.due["session-3"])   # "Monday 12 October 2026, 23:59 (Europe/Berlin)"
    schedule.due_line(term, "session-3", policy_text)   # the released header's "**Due:** ..." line
    term.due_for("session-3", "alice")  # alice's own due date: her extension's, else the class's
    term.extension("session-3", "alice")  # how much later (a timedelta), or None

Extensions (``extensions.yml``, beside ``schedule.yml``; never published to the students):
for a session, a student's own due date, or a number of days after the class's::

    session-3:
      alice: 2026-10-19 23:59   # a date (in the schedule's time zone; a date alone: 23:59)
      bob: 3                    # days after the class's due date

A student must be on the class list (``class-list.csv``, ``memkit.class_list``) when there is
one; the session must have a due date, and the extension must fall after it.

Why a file of the course and not nbgrader's own ``duedate`` alone: the gradebook is the
grader's working database (git-ignored, one per machine, remade by ``make grade``), while
the release (the notebooks' headers) and the hub's start page are built from the course's
files. The file is the source; ``make grade`` writes each date into nbgrader's gradebook
through its API (``tools.grading.lateness``), so that nbgrader's own lateness
(``total_seconds_late``) and its late-submission plugin work as nbgrader documents.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tools.release.layout import ASSIGNMENT, ROOT

FILE = "schedule.yml"
EXTENSIONS = "extensions.yml"
END_OF_DAY = dt.time(23, 59)


@dataclass
class Schedule:
    """The due date of each session (aware datetimes; None: no due date)."""

    timezone: str = "UTC"
    due: dict[str, dt.datetime | None] = field(default_factory=dict)
    extended: dict[tuple[str, str], dt.datetime] = field(default_factory=dict)  # (session, student)

    def due_utc(self, assignment: str) -> dt.datetime | None:
        """The due date as naive UTC, as nbgrader's gradebook stores it (None: none)."""
        when = self.due.get(assignment)
        if when is None:
            return None
        return when.astimezone(dt.timezone.utc).replace(tzinfo=None)

    def due_for(self, assignment: str, student: str) -> dt.datetime | None:
        """The student's due date: their extension's, else the class's."""
        return self.extended.get((assignment, student), self.due.get(assignment))

    def extension(self, assignment: str, student: str) -> dt.timedelta | None:
        """How much later than the class the student's work is due (None: no extension)."""
        moment = self.extended.get((assignment, student))
        return None if moment is None else moment - self.due[assignment]

    def extensions_of(self, student: str) -> dict[str, dt.datetime]:
        """{session: the student's own due date} of each session they have an extension for."""
        return {a: moment for (a, s), moment in sorted(self.extended.items()) if s == student}


def _bad(message: str, name: str = FILE) -> SystemExit:
    return SystemExit(f"{name}: {message}")


def _parse(value, zone: ZoneInfo, where: str, name: str = FILE) -> dt.datetime | None:
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
            raise _bad(f"{where}: {value!r} is not a date (write YYYY-MM-DD HH:MM)", name) from None
    else:
        raise _bad(f"{where}: {value!r} is not a date (write YYYY-MM-DD HH:MM)", name)
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


def parse_extensions(data, term: Schedule, students: set[str] | None = None) -> Schedule:
    """``term`` with the extensions of ``extensions.yml``'s data; ``students``: the class
    list's students, if checked (else any id nbgrader can take)."""
    from memkit.variants import checked_id

    bad = lambda message: _bad(message, EXTENSIONS)  # noqa: E731
    if data is None:
        return term
    if not isinstance(data, dict):
        raise bad("must map each session to its students (session-3: {alice: 2026-10-19})")
    zone = ZoneInfo(term.timezone)
    for session, granted in data.items():
        session = str(session)
        if session not in term.due:
            raise bad(f"{session!r} is not a session of {FILE} ({', '.join(term.due) or 'none'})")
        if not isinstance(granted, dict):
            raise bad(f"{session}: map each student to a date or a number of days (alice: 3)")
        if term.due[session] is None:
            raise bad(f"{session} has no due date in {FILE}: nothing to extend")
        for student, value in granted.items():
            try:
                student = checked_id(str(student), f"{EXTENSIONS}, {session}")
            except ValueError as exc:
                raise bad(str(exc)) from None
            if students is not None and student not in students:
                raise bad(f"{session}: {student!r} is not on the class list (class-list.csv)")
            where = f"{session}, {student}"
            if isinstance(value, bool) or value is None:
                raise bad(f"{where}: {value!r} is neither a date nor a number of days")
            if isinstance(value, (int, float)):
                if not 0 < value <= 366:
                    raise bad(f"{where}: {value!r} days: more than 0, at most 366")
                moment = term.due[session] + dt.timedelta(days=value)
            else:
                moment = _parse(value, zone, where, EXTENSIONS)
            if moment <= term.due[session]:
                raise bad(f"{where}: {when(moment)} is not after the class's due date, "
                          f"{when(term.due[session])}")
            term.extended[(session, student)] = moment
    return term


def _read(path: Path, name: str):
    """A course file's YAML, read as a regular file only (None: no file)."""
    import yaml
    from memkit import class_list

    try:
        raw = class_list._read_regular(path)
    except class_list.ClassListError as exc:
        raise _bad(str(exc).split(": ", 1)[-1], name) from None
    if raw is None:
        return None
    try:
        return yaml.safe_load(raw.decode("utf-8", errors="replace"))
    except yaml.YAMLError as exc:
        raise _bad(f"not YAML ({exc})", name) from None


def load(root: Path = ROOT, known: list[str] | None = None) -> Schedule:
    """The course's schedule with its extensions (an empty one when the file is missing)."""
    from memkit import class_list

    root = Path(root)
    term = parse(_read(root / FILE, FILE), known)
    granted = _read(root / EXTENSIONS, EXTENSIONS)
    if granted is None:
        return term
    try:
        listed = set(class_list.read(root / class_list.NAME)) or None
    except class_list.ClassListError as exc:
        raise _bad(f"the class list cannot be read: {exc}", EXTENSIONS) from None
    return parse_extensions(granted, term, listed)


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
