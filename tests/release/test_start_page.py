"""The students' start page: every session with its chapters, assignments and due
date, generated from _toc.yml, exercises/ and schedule.yml, its links live."""

import pathlib
import re
import shutil

from tools.release import layout, start_page

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_committed_start_page_is_up_to_date():
    assert start_page.differences(ROOT) == []


def test_it_lists_every_session_its_chapters_and_assignments_with_live_links():
    text = (ROOT / "start.md").read_text()
    sessions = re.findall(r"^## Session (\d+) · ", text, flags=re.M)
    assert [int(n) for n in sessions] == list(range(1, 10))
    for assignment in layout.assignments(ROOT, layout.RELEASE):
        for nb in layout.notebooks(ROOT, assignment, layout.RELEASE):
            assert f"(exercises/{assignment}/{nb.name})" in text
    links = re.findall(r"\]\(([^)]+)\)", text)
    local = [link for link in links if not link.startswith("/")]
    assert len(local) > 30
    for link in local:
        assert (ROOT / link).is_file(), link
    assert "](book/ch01-matrix-vector.md)" in text and "Chapter 1: " in text
    assert f"]({start_page.SCORES_PATH})" in text  # no hub named in _config.yml
    assert text.count("- **Due:** no due date") == 9  # the committed schedule has none


def test_the_due_dates_and_the_policy_come_from_the_schedule(tmp_path):
    for name in ("_toc.yml", "nbgrader_config.py", "_config.yml"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "book", tmp_path / "book")
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    (tmp_path / "schedule.yml").write_text(
        "timezone: Europe/Berlin\ndue:\n  session-2: 2026-10-19 09:30\n")
    text = start_page.render(tmp_path)
    session_2 = text.split("## Session 2 · ")[1].split("## Session 3")[0]
    assert "- **Due:** Monday 19 October 2026, 09:30 (Europe/Berlin)" in session_2
    assert "Due dates are in Europe/Berlin time; a late submission loses 10 %" in text
    assert text.count("- **Due:** no due date") == 8
