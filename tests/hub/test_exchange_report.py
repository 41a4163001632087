"""The collect's report of refused inbound entries (``refused/<assignment>.csv``) and its
log lines: an entry's name is the student's choice, written as text."""

import csv
import logging

from nbgrader.coursedir import CourseDirectory

from tools.hub.exchange import CourseCollect


def test_a_refused_entry_is_listed_as_text_and_logged_without_its_escapes(tmp_path, caplog):
    collect = CourseCollect(coursedir=CourseDirectory(root=str(tmp_path), assignment_id="session-1"),
                            authenticator=None)
    collect.refused = []
    name = "=cmd|' /C calc'!A0+session-1+2026-01-01 00:00:00 UTC+\x1b[2Jx"
    with caplog.at_level(logging.WARNING):
        collect._refuse(name, "=cmd|' /C calc'!A0", "no Unix user '=cmd'")
        collect._report()
    with open(tmp_path / "refused" / "session-1.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["entry"].startswith("'=cmd") and "\\x1b[2J" in rows[0]["entry"]
    assert rows[0]["student"].startswith("'=cmd") and rows[0]["reason"] == "no Unix user '=cmd'"
    assert "\x1b" not in caplog.text and "\\x1b[2Jx" in caplog.text
