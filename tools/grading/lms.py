"""Grades to the LMS: Canvas's gradebook import CSV and Moodle's grade import CSV, as
nbgrader export plugins, from a roster the instructor exports from the LMS.

    nbgrader export --exporter=tools.grading.lms.CanvasExport --to=canvas-grades.csv \\
        --CanvasExport.roster=canvas-roster.csv
    nbgrader export --exporter=tools.grading.lms.MoodleExport --to=moodle-grades.csv \\
        --MoodleExport.roster=moodle-roster.csv
    python -m tools.grading.lms canvas canvas-roster.csv [--to FILE]   (make export LMS=canvas ROSTER=...)

**The roster** is the LMS's own export of the course's gradebook, which lists every
student with the LMS's ids: in Canvas *Grades > Export > Export Entire Gradebook*; in
Moodle *Grades > Export > Plain text file*. Each hub user (nbgrader's student id) is
matched to the roster row whose ``match_column`` holds that id, or an e-mail address whose
part before the ``@`` is that id (case does not matter): by default Canvas's
``SIS Login ID`` and Moodle's ``Email address``. A student of the gradebook with no row
is listed (a warning) and left out; a row with no hub user gets no grade (an empty cell,
which neither LMS counts as a zero).

**The grade** of a student in an assignment is nbgrader's final score: the points of the
submission less its late penalty (``grades.csv``'s ``score``); a student of the gradebook
who handed nothing in scores 0, as in ``nbgrader export``. One column per assignment of
the gradebook that has a submission (``--assignment`` to choose).

**Canvas** ("How do I import grades in the Gradebook?", Canvas Instructor Guide,
https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807;
the columns as listed by the Ohio State guide to the same import,
https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades):
the first columns are ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``
(copied from the roster), then one column per assignment. A column named as in Canvas's
export, ``<name> (<Canvas id>)``, updates that assignment; any other name creates a new
assignment when imported. The second row is Canvas's ``Points Possible`` row (the maximum
score of each assignment), as in its export.

**Moodle** ("Grade import", MoodleDocs, https://docs.moodle.org/311/en/Grade_import: the
import format is the export's; the user is identified by a column mapped to ``userid``,
``useridnumber``, ``useremail`` or ``username``, and each grade column is mapped to a grade
item or a new one; read by ``grade/import/csv/classes/load_data.php`` of Moodle, where an
empty grade or ``-`` is no grade and a line of one field is skipped): the roster's user
columns (``First name``, ``Last name``, ``ID number``, ``Institution``, ``Department``,
``Email address``, whichever it has) then one column per assignment, named as a roster
column that holds the assignment's name (an existing grade item, e.g.
``Manual item: session-3 (Real)``) or the assignment's name (map it to a new grade item).
Moodle's ``Last downloaded from this course`` column is left out (it is optional, and with
it Moodle refuses grades changed since that export).

**Every cell is text or a number**: a roster's cells are what the LMS's users typed (a
display name ``=HYPERLINK(...)``), so each goes through ``tools.common.text.csv_cell``
(no formula, no control character); the grades stay numbers.

Stage: after the export (``grades.csv``), beside it.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

from nbgrader.api import MissingEntry
from nbgrader.plugins import ExportPlugin
from traitlets import Unicode

from tools.common.text import csv_row
from tools.release import layout

MAX_ROSTER = 20 * 1024 * 1024  # bytes
CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_POINTS = "    Points Possible"  # Canvas's export writes it so; its import reads it
MOODLE_IDENTITY = ["First name", "Last name", "ID number", "Institution", "Department",
                   "Email address"]
MOODLE_TIME_EXPORTED = "Last downloaded from this course"


class RosterError(SystemExit):
    """A roster that cannot be used, with what to do about it."""


def read_roster(path: str | Path) -> tuple[list[str], list[dict[str, str]]]:
    """The roster's header and rows (a CSV as the LMS exports it: UTF-8, perhaps with a
    byte-order mark; comma, semicolon or tab separated)."""
    path = Path(path)
    if not path.is_file():
        raise RosterError(f"roster {path}: no such file (export it from the LMS first)")
    if path.stat().st_size > MAX_ROSTER:
        raise RosterError(f"roster {path}: larger than {MAX_ROSTER // 1024**2} MB")
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    try:
        dialect = csv.Sniffer().sniff(text.split("\n", 1)[0], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    header = [h.strip() for h in next(reader, [])]
    if not header:
        raise RosterError(f"roster {path}: empty")
    rows = [dict(zip(header, (v.strip() for v in row))) for row in reader if any(row)]
    return header, rows


def _matches(student_id: str, value: str) -> bool:
    value = value.strip().lower()
    return bool(value) and student_id.lower() in (value, value.split("@", 1)[0])


class LmsExport(ExportPlugin):
    """What Canvas's and Moodle's exports share: the roster, the match, the final scores."""

    roster = Unicode("", help="the CSV the LMS exported (its students and their ids)"
                     ).tag(config=True)
    match_column = Unicode("", help="the roster's column that holds each hub user's id "
                           "(or an e-mail address whose part before @ is it)").tag(config=True)
    identity: list[str] = []
    default_match = ""
    default_to = ""
    lms = ""

    # -- what both need ------------------------------------------------------------
    def _roster(self):
        if not self.roster:
            raise RosterError(f"{type(self).__name__}.roster is not set: give the CSV of "
                              f"students exported from {self.lms}")
        header, rows = read_roster(self.roster)
        column = self.match_column or self.default_match
        if column not in header:
            raise RosterError(
                f"roster {self.roster}: no column {column!r} to match the hub's users with "
                f"(its columns: {', '.join(header)}); set {type(self).__name__}.match_column")
        return header, rows, column

    def _assignments(self, gradebook) -> list:
        chosen = [str(a) for a in self.assignment]
        found = [a for a in gradebook.assignments
                 if (not chosen or a.name in chosen) and a.num_submissions > 0]
        return sorted(found, key=lambda a: _order(a.name))

    def _final_scores(self, gradebook, assignments, students) -> dict:
        """{(student id, assignment): points less the late penalty}."""
        scores = {}
        for assignment in assignments:
            for student in students:
                try:
                    sub = gradebook.find_submission(assignment.name, student)
                except MissingEntry:
                    scores[student, assignment.name] = 0.0
                    continue
                penalty = float(sub.late_submission_penalty or 0.0)
                scores[student, assignment.name] = max(0.0, float(sub.score) - penalty)
        return scores

    def _matched(self, gradebook, rows, column) -> tuple[dict[int, str], list[str]]:
        """{roster row index: student id}, and the gradebook's students with no row."""
        wanted = [str(s) for s in self.student] or [s.id for s in gradebook.students]
        by_row: dict[int, str] = {}
        unmatched = []
        for student in sorted(wanted):
            hits = [i for i, row in enumerate(rows) if _matches(student, row.get(column, ""))]
            if len(hits) == 1:
                by_row[hits[0]] = student
            elif not hits:
                unmatched.append(student)
            else:
                raise RosterError(f"roster {self.roster}: {len(hits)} rows match {student!r} "
                                  f"in {column!r}; give a column of unique ids (match_column)")
        return by_row, unmatched

    @staticmethod
    def _column_for(assignment: str, header: list[str]) -> str:
        """The roster's column of that assignment (the LMS's own name for it), else its name."""
        for name in header:
            base = name.split(":", 1)[-1].strip()
            if base == assignment or base.startswith(f"{assignment} ("):
                return name
        return assignment

    def export(self, gradebook) -> None:
        header, rows, column = self._roster()
        assignments = self._assignments(gradebook)
        by_row, unmatched = self._matched(gradebook, rows, column)
        scores = self._final_scores(gradebook, assignments, sorted(set(by_row.values())))
        for student in unmatched:
            self.log.warning("%s: no row of the roster matches it in %r: left out",
                             student, column)
        dest = self.to or self.default_to
        with open(dest, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            for line in self.lines(header, rows, by_row, assignments, scores):
                writer.writerow(csv_row(line))
        self.log.info("%s grades of %d student(s), %d assignment(s): %s", self.lms,
                      len(by_row), len(assignments), dest)

    def lines(self, header, rows, by_row, assignments, scores):
        raise NotImplementedError


class CanvasExport(LmsExport):
    """Canvas's gradebook import CSV (see the module's docstring for the layout)."""

    default_match = "SIS Login ID"
    default_to = "canvas-grades.csv"
    lms = "Canvas"

    def lines(self, header, rows, by_row, assignments, scores):
        missing = [c for c in CANVAS_IDENTITY[1:] if c not in header]
        student_col = "Student" if "Student" in header else "Student Name"
        if missing or student_col not in header:
            raise RosterError(f"roster {self.roster}: not Canvas's gradebook export (it lacks "
                              f"{', '.join(missing or [student_col])})")
        columns = [self._column_for(a.name, header) for a in assignments]
        yield CANVAS_IDENTITY + columns
        yield [CANVAS_POINTS] + [""] * (len(CANVAS_IDENTITY) - 1) + [
            _number(a.max_score) for a in assignments]
        for i, row in enumerate(rows):
            if _is_canvas_extra(row, student_col):
                continue
            student = by_row.get(i)
            yield [row.get(student_col, "")] + [row.get(c, "") for c in CANVAS_IDENTITY[1:]] + [
                _number(scores[student, a.name]) if student else "" for a in assignments]


class MoodleExport(LmsExport):
    """Moodle's grade import CSV (see the module's docstring for the layout)."""

    default_match = "Email address"
    default_to = "moodle-grades.csv"
    lms = "Moodle"

    def lines(self, header, rows, by_row, assignments, scores):
        identity = [c for c in MOODLE_IDENTITY if c in header]
        match = self.match_column or self.default_match
        if match not in identity:
            identity.append(match)
        columns = [self._column_for(a.name, header) for a in assignments]
        yield identity + columns
        for i, row in enumerate(rows):
            student = by_row.get(i)
            yield [row.get(c, "") for c in identity] + [
                _number(scores[student, a.name]) if student else "" for a in assignments]


def _is_canvas_extra(row: dict, student_col: str) -> bool:
    """Canvas's export rows that are no student: the points row, the test student."""
    name = row.get(student_col, "").strip()
    return name in ("Points Possible", "Student, Test", "Test Student") or not name


def _number(value: float) -> str:
    return f"{round(float(value), 2):g}"


def _order(name: str):
    m = layout.ASSIGNMENT.match(name)
    return (0, int(m.group(1))) if m else (1, name)


EXPORTERS = {"canvas": CanvasExport, "moodle": MoodleExport}


def export_lms(root: Path, lms: str, roster: Path, to: Path | None = None,
               match_column: str | None = None, db_url: str | None = None
               ) -> tuple[Path, list[str]]:
    """``nbgrader export`` with the LMS's plugin in the course folder ``root``: the file
    written and what nbgrader said the instructor should know (students left out)."""
    from tools.grading.settings import default_db_url
    from tools.release import assignments as course

    plugin = EXPORTERS[lms]
    to = Path(to or Path(root) / plugin.default_to).resolve()
    options = [f"--{plugin.__name__}.roster={Path(roster).resolve()}"]
    if match_column:
        options.append(f"--{plugin.__name__}.match_column={match_column}")
    result = course.run_nbgrader(
        ["export", f"--exporter=tools.grading.lms.{plugin.__name__}", f"--to={to}",
         f"--db={db_url or default_db_url(root)}", *options], cwd=Path(root))
    said = [line.split("]", 1)[-1].strip() for line in (result.stdout + result.stderr).splitlines()
            if "WARNING" in line or "roster" in line]
    if result.returncode != 0:
        raise SystemExit(f"the {plugin.lms} export failed:\n{result.stdout}{result.stderr}")
    return to, said


def main(argv: list[str] | None = None) -> int:
    """``make export``: the chosen LMS's import file, from the gradebook and the roster."""
    from tools import ROOT

    parser = argparse.ArgumentParser(prog="python -m tools.grading.lms", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lms", choices=sorted(EXPORTERS))
    parser.add_argument("roster", type=Path, help="the CSV of students exported from the LMS")
    parser.add_argument("--to", type=Path, help="default: <lms>-grades.csv in the course folder")
    parser.add_argument("--match-column", help="the roster's column of the hub users' ids")
    parser.add_argument("--course-dir", type=Path, default=ROOT)
    parser.add_argument("--db-url", help="the gradebook (default: as make grade)")
    args = parser.parse_args(argv)
    to, said = export_lms(args.course_dir.resolve(), args.lms, args.roster, args.to,
                          args.match_column, args.db_url)
    for line in said:
        print(line)
    print(f"{EXPORTERS[args.lms].lms} grades: {to}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
