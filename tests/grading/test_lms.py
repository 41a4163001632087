"""Grades to the LMS: Canvas's and Moodle's import CSVs, as nbgrader export plugins,
checked against the column layouts each LMS documents, with the right numbers.

The gradebook is made with nbgrader's API (the scores and a late penalty are known), the
rosters are laid out as Canvas's gradebook export and Moodle's plain-text grade export are.
"""

import csv
import io
import pathlib
import shutil
import subprocess
import sys

import pytest

from tools.grading import lms

ROOT = pathlib.Path(__file__).resolve().parents[2]

# (student, assignment): (auto score of its one test cell, late penalty); max 10 and 20
SCORES = {("ada", "session-1"): (8.0, 0.0), ("ada", "session-2"): (20.0, 4.0),
          ("bo", "session-1"): (10.0, 1.5),  # bo handed nothing in for session-2: 0
          ("cy", "session-1"): (3.25, 0.0), ("cy", "session-2"): (7.0, 0.0)}
MAX = {"session-1": 10.0, "session-2": 20.0}
FINAL = {"ada": {"session-1": 8.0, "session-2": 16.0}, "bo": {"session-1": 8.5, "session-2": 0.0},
         "cy": {"session-1": 3.25, "session-2": 7.0}}


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    from tools.grading.gradebook import opened

    folder = tmp_path_factory.mktemp("lms")
    url = f"sqlite:///{folder / 'gradebook.db'}"
    with opened(url) as gb:  # a new gradebook, stamped as nbgrader does
        for assignment, points in MAX.items():
            gb.add_assignment(assignment)
            gb.add_notebook("exit-test", assignment)
            gb.add_grade_cell("q1", "exit-test", assignment, max_score=points, cell_type="code")
        for student in ("ada", "bo", "cy", "dee"):  # dee: no roster row
            gb.add_student(student)
        for (student, assignment), (score, penalty) in SCORES.items():
            gb.add_submission(assignment, student)
            grade = gb.find_grade("q1", "exit-test", assignment, student)
            grade.auto_score = score
            gb.find_submission_notebook("exit-test", assignment, student) \
                .late_submission_penalty = penalty or None
        gb.add_submission("session-1", "dee")
        gb.add_assignment("session-9", duedate="2099-01-01 12:00:00")  # dated, not handed in
        gb.db.commit()
    return folder, url


def test_grades_csv_has_the_assignments_handed_in_only(gradebook, tmp_path):
    """A session the schedule dated (``make publish``) and nobody handed in has no row of
    zeros in grades.csv: an LMS import of it would mark every student 0."""
    from tools.grading.report import export_csv
    from tools.grading.settings import Settings

    folder, url = gradebook
    export_csv(Settings(root=folder, submitted=folder / "submitted", db_url=url),
               tmp_path / "grades.csv")
    with (tmp_path / "grades.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {r["assignment"] for r in rows} == {"session-1", "session-2"}
    assert {(r["student_id"], r["assignment"]) for r in rows} >= set(SCORES)


CANVAS_ROSTER = """\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,session-2 (4242),Quiz 1 (17),Current Score
    Points Possible,,,,,20,5,(read only)
"Lovelace, Ada",101,S-101,ada,Section A,,5,100
"Bo, Bo",102,S-102,BO@uni.example,Section A,,4,80
"Young, Cy",103,S-103,cy,Section B,,3,60
"Nobody, Ed",104,S-104,ed,Section B,,,0
"Student, Test",999,,,,,,
"""

MOODLE_ROSTER = """First name,Last name,ID number,Institution,Department,Email address,\
Manual item: session-1 (Real),Last downloaded from this course
Ada,Lovelace,11,Uni,Maths,ada@uni.example,-,1760000000
Bo,Bo,12,Uni,Maths,bo@uni.example,-,1760000000
Cy,Young,13,Uni,CS,cy@uni.example,-,1760000000
Ed,Nobody,14,Uni,CS,ed@uni.example,-,1760000000
"""


def export(gradebook, tmp_path, plugin, roster_text, **options):
    from tools.grading.gradebook import opened

    roster = tmp_path / f"{plugin.__name__}-roster.csv"
    roster.write_text(roster_text, encoding="utf-8")
    out = tmp_path / f"{plugin.__name__}.csv"
    exporter = plugin(roster=str(roster), to=str(out), **options)
    with opened(gradebook[1]) as gb:
        exporter.export(gb)
    return list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))


def test_canvas_import_has_the_documented_columns_and_the_right_numbers(gradebook, tmp_path):
    rows = export(gradebook, tmp_path, lms.CanvasExport, CANVAS_ROSTER)
    header = rows[0]
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    # session-1 is new to Canvas (a new assignment); session-2 keeps Canvas's own column name
    assert header[5:] == ["session-1", "session-2 (4242)"]
    assert rows[1][0].strip() == "Points Possible" and rows[1][5:] == ["10", "20"]
    by_login = {r[3]: r for r in rows[2:]}
    assert set(by_login) == {"ada", "BO@uni.example", "cy", "ed"}  # the test student left out
    for login, student in (("ada", "ada"), ("BO@uni.example", "bo"), ("cy", "cy")):
        row = by_login[login]
        assert [float(v) for v in row[5:]] == [FINAL[student]["session-1"],
                                               FINAL[student]["session-2"]]
    assert by_login["ada"][:5] == ["Lovelace, Ada", "101", "S-101", "ada", "Section A"]
    assert by_login["ed"][5:] == ["", ""]  # no hub user: no grade, not a zero
    assert all(len(r) == len(header) for r in rows)


def test_moodle_import_has_a_user_column_and_numeric_grades(gradebook, tmp_path):
    rows = export(gradebook, tmp_path, lms.MoodleExport, MOODLE_ROSTER)
    header = rows[0]
    assert header[:6] == lms.MOODLE_IDENTITY  # Moodle's export's user fields, in its order
    assert header[6:] == ["Manual item: session-1 (Real)", "session-2"]
    assert lms.MOODLE_TIME_EXPORTED not in header
    # Moodle's load_data.php: each line is one user, found by the mapped column (useremail);
    # a grade is a number, or empty / '-' for none; a line of one field is skipped
    for row in rows[1:]:
        assert len(row) == len(header) > 1 and "@" in row[5]
        assert all(v == "" or float(v) >= 0 for v in row[6:])
    by_mail = {r[5]: r for r in rows[1:]}
    for student in ("ada", "bo", "cy"):
        assert [float(v) for v in by_mail[f"{student}@uni.example"][6:]] == [
            FINAL[student]["session-1"], FINAL[student]["session-2"]]
    assert by_mail["ed@uni.example"][6:] == ["", ""]


def test_what_the_lms_users_typed_is_written_as_text_and_the_grades_as_numbers(
        gradebook, tmp_path):
    """A display name or section typed in the LMS (=HYPERLINK(...), @SUM, -2+3, an escape)
    is copied as text a spreadsheet does not run (a quote in front, controls escaped)."""
    hostile = CANVAS_ROSTER.replace('"Lovelace, Ada"', '"=HYPERLINK(A1;B1)"') \
        .replace("Section A,,5,100", "@SUM(2+2),,5,100", 1) \
        .replace('"Young, Cy"', '"-2+3\x1b[2J"')
    rows = export(gradebook, tmp_path, lms.CanvasExport, hostile)
    by_login = {r[3]: r for r in rows[2:]}
    assert by_login["ada"][0] == "'=HYPERLINK(A1;B1)" and by_login["ada"][4] == "'@SUM(2+2)"
    assert by_login["cy"][0] == "'-2+3\\x1b[2J"
    assert [float(v) for v in by_login["ada"][5:]] == [8.0, 16.0]  # numbers, not text
    assert not [c for r in rows for c in r if c.startswith(("=", "+", "-", "@", "\t", "\r"))]


def test_a_roster_that_cannot_be_used_gets_a_clear_error(gradebook, tmp_path):
    with pytest.raises(SystemExit, match="no column 'SIS Login ID'"):
        export(gradebook, tmp_path, lms.CanvasExport, "Name,Score\nAda,1\n")
    with pytest.raises(SystemExit, match="2 rows match 'ada'"):
        export(gradebook, tmp_path, lms.MoodleExport,
               "First name,Email address\nAda,ada@a.example\nAda,ada@b.example\n")
    with pytest.raises(SystemExit, match="roster is not set"):
        lms.CanvasExport().export(None)
    with pytest.raises(SystemExit, match="ID number"):  # another match column, named
        export(gradebook, tmp_path, lms.MoodleExport, MOODLE_ROSTER, match_column="Username")


def test_the_exporters_run_as_nbgrader_export_plugins(gradebook, tmp_path):
    """``nbgrader export --exporter=...`` (what ``make export`` runs), in a course folder."""
    folder, url = gradebook
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course / "nbgrader_config.py")
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_ROSTER)
    result = subprocess.run(
        [sys.executable, "-m", "tools.grading.lms", "canvas", str(roster), "--course-dir",
         str(course), "--db-url", url], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "dee: no row of the roster matches it" in result.stdout  # the instructor is told
    rows = list(csv.reader(open(course / "canvas-grades.csv", encoding="utf-8")))
    assert rows[0][:5] == lms.CANVAS_IDENTITY and len(rows) == 2 + 4
