"""Due dates and lateness: the schedule, the release's header, the penalty policy,
and a class graded with one late submission (grades.csv, the report, the feedback)."""

import csv
import datetime as dt
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from tools.grading import lateness
from support.simulate import classroom
from tools.release import assignments as course
from tools.release import due_header, schedule

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIRST = course.assignments(ROOT)[0]
UTC = dt.timezone.utc


# --------------------------------------------------------------------------- the schedule


def test_the_schedule_reads_dates_in_its_time_zone():
    term = schedule.parse({"timezone": "Europe/Berlin",
                           "due": {"session-1": "2026-10-12 23:59", "session-2": "2026-10-19",
                                   "session-3": None}})
    assert term.due["session-1"].utcoffset() == dt.timedelta(hours=2)  # summer time
    assert term.due_utc("session-1") == dt.datetime(2026, 10, 12, 21, 59)
    assert term.due["session-2"].hour == 23 and term.due["session-2"].minute == 59
    assert term.due["session-3"] is None and term.due_utc("session-3") is None
    assert term.due_utc("session-9") is None  # not listed: no due date
    assert schedule.when(term.due["session-1"]) == "Monday 12 October 2026, 23:59 (Europe/Berlin)"


def test_the_course_schedule_is_valid_and_empty():
    """The committed schedule has no dates (an open course); a term's instructor sets them."""
    term = schedule.load(ROOT, course.assignments(ROOT))
    assert set(term.due) == set(course.assignments(ROOT))
    assert all(v is None for v in term.due.values())


@pytest.mark.parametrize("data, message", [
    ({"timezone": "Mars/Olympus"}, "not a time zone"),
    ({"due": {"session-1": "next monday"}}, "is not a date"),
    ({"due": {"week-1": "2026-10-12"}}, "is not a session"),
    ({"due": {"session-99": "2026-10-12"}}, "not an assignment of the course"),
    ({"due": ["session-1"]}, "must map each session"),
    ({"dates": {}}, "unknown key"),
    (["session-1"], "must hold"),
])
def test_a_bad_schedule_gets_a_clear_error(data, message):
    with pytest.raises(SystemExit, match=message):
        schedule.parse(data, known=course.assignments(ROOT))


def test_extensions_give_a_student_a_date_or_days_more(tmp_path):
    term = schedule.parse({"timezone": "Europe/Berlin",
                           "due": {"session-1": "2026-10-12 23:59", "session-2": "2026-10-19"}})
    schedule.parse_extensions({"session-1": {"ann": "2026-10-14 12:00", "bob": 3},
                               "session-2": {"ann": 1.5}}, term, {"ann", "bob", "cy"})
    assert term.due_for("session-1", "ann") == dt.datetime(2026, 10, 14, 12, 0, tzinfo=term.due["session-1"].tzinfo)
    assert term.extension("session-1", "bob") == dt.timedelta(days=3)
    assert term.extension("session-2", "ann") == dt.timedelta(days=1.5)
    assert term.due_for("session-1", "cy") == term.due["session-1"]  # the class's
    assert term.extension("session-1", "cy") is None
    assert list(term.extensions_of("ann")) == ["session-1", "session-2"]
    # the file beside schedule.yml, its students checked against the class list
    (tmp_path / "schedule.yml").write_text("due:\n  session-3: 2026-10-12 18:00\n")
    (tmp_path / "extensions.yml").write_text("session-3:\n  ann: 2026-10-13\n")
    (tmp_path / "class-list.csv").write_text("seat,student\n1,ann\n")
    assert schedule.load(tmp_path).extension("session-3", "ann") == dt.timedelta(days=1, hours=5, minutes=59)
    (tmp_path / "extensions.yml").write_text("session-3:\n  zed: 2\n")
    with pytest.raises(SystemExit, match="extensions.yml: session-3: 'zed' is not on the class list"):
        schedule.load(tmp_path)


@pytest.mark.parametrize("data, message", [
    ({"session-9": {"ann": 2}}, "'session-9' is not a session of schedule.yml"),
    ({"session-2": {"ann": 2}}, "session-2 has no due date in schedule.yml"),
    ({"session-1": ["ann"]}, "map each student to a date or a number of days"),
    ({"session-1": {"ann": "next week"}}, "session-1, ann: 'next week' is not a date"),
    ({"session-1": {"ann": "2026-10-01"}}, "is not after the class's due date"),
    ({"session-1": {"ann": 0}}, "more than 0, at most 366"),
    ({"session-1": {"ann": None}}, "neither a date nor a number of days"),
    ({"session-1": {"a/b": 2}}, "is not one the grader can use"),
    ({"session-1": {"zed": 2}}, "'zed' is not on the class list"),
    (["ann"], "must map each session to its students"),
])
def test_a_bad_extension_gets_a_clear_error(data, message):
    term = schedule.parse({"due": {"session-1": "2026-10-12", "session-2": None}})
    with pytest.raises(SystemExit, match=f"^extensions.yml: .*{re.escape(message)}"):
        schedule.parse_extensions(data, term, {"ann"})


# --------------------------------------------------------------------------- the policy


def policy(per_day=0.10, cap=0.50):
    return lateness.FractionPerDay(per_day=per_day, cap=cap)


@pytest.mark.parametrize("seconds, fraction", [
    (0, 0.0), (1, 0.1), (86400, 0.1), (86401, 0.2), (2.5 * 86400, 0.3), (30 * 86400, 0.5),
])
def test_a_fraction_per_day_or_part_of_a_day_capped(seconds, fraction):
    assert policy().late_submission_penalty("s", 20.0, seconds) == pytest.approx(20.0 * fraction)


def test_the_policy_is_nbgraders_plugin_configured_by_the_course():
    from nbgrader.plugins import BasePlugin

    plugin = lateness.policy(ROOT)
    assert isinstance(plugin, lateness.FractionPerDay) and isinstance(plugin, BasePlugin)
    assert (plugin.per_day, plugin.cap) == (0.10, 0.50)  # nbgrader_config.py's
    assert plugin.describe() == ("a late submission loses 10 % of its score for each day or "
                                 "part of a day late, at most 50 %")
    with pytest.raises(Exception, match="between 0 and 1"):
        policy(per_day=1.5)


def test_the_policy_changed_in_nbgrader_config_is_the_one_used(tmp_path):
    text = (ROOT / "nbgrader_config.py").read_text().replace(
        "c.FractionPerDay.per_day = 0.10", "c.FractionPerDay.per_day = 0.25")
    (tmp_path / "nbgrader_config.py").write_text(text)
    assert lateness.policy(tmp_path).late_submission_penalty("s", 8.0, 3600) == 2.0
    (tmp_path / "nbgrader_config.py").write_text(text.replace("0.50", "7"))
    lateness.policy.cache_clear()
    with pytest.raises(SystemExit, match="nbgrader_config.py: FractionPerDay.cap must be"):
        lateness.policy(tmp_path)


# --------------------------------------------------------------------------- a submission's time


@pytest.mark.parametrize("seconds, days, extended, text", [
    (360, 1, False, "6 min late (1 day begun)"),
    (2 * 86400 + 3600, 3, False, "2 d 1 h late (3 days begun)"),
    (3600 + 300, 1, True, "1 h 5 min late (1 day begun, extended due date)"),
    (0, 0, True, "on time (extended due date)"),
    (0, 0, False, "on time"),
])
def test_how_late_reads(seconds, days, extended, text):
    when = dt.datetime(2026, 3, 1)
    late = lateness.Lateness(when, when, seconds, days, 0.0, extended)
    assert lateness.late_text(late) == text
    assert lateness.from_message(lateness.as_message(late)) == late


def test_a_timestamp_is_read_as_a_students_file(tmp_path):
    good = tmp_path / "good"
    good.mkdir()
    (good / "timestamp.txt").write_text("2026-03-01 13:30:00.000000 Europe/Berlin\n")
    assert lateness.read_timestamp(good) == (dt.datetime(2026, 3, 1, 12, 30), None)
    assert lateness.read_timestamp(tmp_path) == (None, None)  # none: not late
    for name, content in [("words", "handed in on time, promise"), ("far", "2999-01-01 00:00:00"),
                          ("huge", "2026-03-01 " + "9" * 5000)]:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "timestamp.txt").write_text(content)
        when, why = lateness.read_timestamp(folder)
        assert when is None and why.startswith("timestamp.txt:") and "not late" in why
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "timestamp.txt").symlink_to(good / "timestamp.txt")
    when, why = lateness.read_timestamp(linked)
    assert when is None and "link" in why


# --------------------------------------------------------------------------- the release


def test_the_header_says_when_it_is_due_and_what_lateness_costs(tmp_path):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    shutil.copytree(ROOT / "solutions" / FIRST, tmp_path / "solutions" / FIRST)
    (tmp_path / "schedule.yml").write_text(
        f"timezone: America/Chicago\ndue:\n  {FIRST}: 2026-09-14 17:00\n")
    course.generate(tmp_path, which=[FIRST])
    for path in sorted((tmp_path / "exercises" / FIRST).glob("*.ipynb")):
        header = "".join(json.loads(path.read_text())["cells"][0]["source"])
        released = "".join(json.loads((ROOT / "exercises" / FIRST / path.name).read_text())
                           ["cells"][0]["source"])
        line = ("**Due:** Monday 14 September 2026, 17:00 (America/Chicago); a late submission "
                "loses 10 % of its score for each day or part of a day late, at most 50 %.")
        assert header.split("\n")[2] == line
        assert header.replace(line + "\n\n", "") == released  # nothing else changed
    assert due_header.with_due_line(header, "") == released  # a date taken back out


# --------------------------------------------------------------------------- a class, graded


@pytest.fixture(scope="module")
def late_class(tmp_path_factory):
    """The first session graded for four students who answered everything: one on time,
    one two days and an hour late, one whose timestamp.txt is not a time, one as late as
    the second but with an extension of three days (extensions.yml). They fetched the
    release before the term's dates were set (their headers have no due line): that is not
    an edit of the header."""
    root = tmp_path_factory.mktemp("late")
    shutil.copy(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder, root / folder)
    (root / "schedule.yml").write_text(f"timezone: Europe/Berlin\ndue:\n  {FIRST}: 2026-03-02 18:00\n")
    (root / "extensions.yml").write_text(f"{FIRST}:\n  student-04: 3\n")
    made = classroom.simulate(root, 4, [FIRST], kinds={f"student-0{i}": "full" for i in (1, 2, 3, 4)})
    times = {"student-01": "2026-03-02 16:59:00 UTC",  # 17:59 in Berlin: on time
             "student-02": "2026-03-04 18:00:00 UTC",  # 2 d 1 h late: 3 days counted
             "student-03": "sometime on tuesday",
             "student-04": "2026-03-04 18:00:00 UTC"}  # as late, within the extension
    for student, text in times.items():
        (root / "submitted" / student / FIRST / "timestamp.txt").write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "tools.grading", FIRST, "--course-dir", str(root), "--jobs", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
        env={**os.environ, "MEMCOURSE_DB_URL": ""})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    with open(root / "grades.csv") as fh:
        grades = {row["student_id"]: row for row in csv.DictReader(fh)}
    with open(root / "autograded" / "grading-report.csv") as fh:
        report = {row["student"]: row for row in csv.DictReader(fh)}
    return {"root": root, "grades": grades, "report": report, "stdout": result.stdout,
            "full": made[0].max_score}


def test_the_due_date_is_nbgraders_and_the_late_one_is_penalised(late_class):
    grades, full = late_class["grades"], late_class["full"]
    for row in grades.values():
        assert row["duedate"] == "2026-03-02 17:00:00"  # 18:00 Berlin, as UTC (the class's)
        assert float(row["raw_score"]) == full
    assert float(grades["student-01"]["late_submission_penalty"]) == 0
    assert float(grades["student-01"]["score"]) == full
    late = grades["student-02"]
    assert late["timestamp"] == "2026-03-04 18:00:00"
    assert float(late["late_submission_penalty"]) == pytest.approx(0.3 * full)
    assert float(late["score"]) == pytest.approx(0.7 * full)
    assert float(grades["student-03"]["late_submission_penalty"]) == 0  # no time: not late
    assert float(grades["student-04"]["late_submission_penalty"]) == 0  # the extension's date
    assert float(grades["student-04"]["score"]) == full


def test_the_report_and_the_summary_say_how_late(late_class):
    report = late_class["report"]
    assert report["student-01"]["late"] == "on time"
    row = report["student-02"]
    assert row["submitted"] == "2026-03-04T18:00:00Z" and row["due"] == "2026-03-02T17:00:00Z"
    assert row["late"] == "2 d 1 h late (3 days begun)"
    assert float(row["late_penalty"]) == pytest.approx(0.3 * late_class["full"])
    assert float(row["final_score"]) == pytest.approx(0.7 * late_class["full"])
    assert row["status"] == "ok"
    odd = report["student-03"]
    assert odd["submitted"] == "" and "'sometime on tuesday' is not a time" in odd["reasons"]
    assert float(odd["score"]) == late_class["full"]  # graded all the same
    assert "Late submissions" in late_class["stdout"]
    assert f"{FIRST} student-02: 2 d 1 h late (3 days begun), -" in late_class["stdout"]
    extended = report["student-04"]
    assert extended["due"] == "2026-03-05T17:00:00Z" and float(extended["late_penalty"]) == 0
    assert extended["late"] == "on time (extended due date)"
    assert f"{FIRST} student-04: due 2026-03-05T17:00:00Z" in late_class["stdout"]


def test_the_students_feedback_shows_the_penalty(late_class):
    folder = late_class["root"] / "feedback" / "student-02" / FIRST
    pages = sorted(folder.glob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text()
        assert "Late submission penalty" in text  # nbgrader's own line among the scores
        assert "Handed in 2026-03-04T18:00:00Z, due 2026-03-02T17:00:00Z (UTC): 2 d 1 h late (3 days begun)" in text
    on_time = late_class["root"] / "feedback" / "student-01" / FIRST
    assert not any("memcourse-late" in p.read_text() for p in on_time.glob("*.html"))


def test_make_grade_lists_the_similarity_page(late_class):
    """The three answered with the same code (the solutions'): in a class this small the
    share alone flags them, and the summary names the instructor's page."""
    page = late_class["root"] / "autograded" / "_similarity" / f"{FIRST}.html"
    assert page.is_file() and "student-01 and student-02" in page.read_text()
    out = late_class["stdout"]
    assert "Similar answers (for the instructor only, never released):" in out
    assert f"  {FIRST}: student-01 and student-02 (100%)" in out and str(page) in out


def test_the_lms_export_grades_the_extension_on_its_own_date(late_class, tmp_path):
    """Canvas's import file: the late student's grade is after the penalty, the student with
    an extension who handed in as late keeps every point."""
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\n"
                      '"Two, S",2,S2,student-02,A\n"Four, S",4,S4,student-04,A\n')
    out = tmp_path / "canvas.csv"
    done = subprocess.run([sys.executable, "-m", "tools.grading.lms", "canvas", str(roster),
                           "--to", str(out), "--course-dir", str(late_class["root"])],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "MEMCOURSE_DB_URL": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    rows = list(csv.reader(out.open()))
    grade = {r[3]: float(r[5]) for r in rows[2:]}
    assert grade["student-04"] == pytest.approx(late_class["full"])
    assert grade["student-02"] == pytest.approx(0.7 * late_class["full"])
