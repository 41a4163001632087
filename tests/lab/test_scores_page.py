"""A student's scores page: every session's score after its late penalty, the penalty and
the feedback links, read from the feedback pages nbgrader's listing points to; the graded
result beside a newer submission, the student's own submissions only, the course's total,
a plot of the sessions, the student's extensions and the way back to the lab.

The page on a real hub, after a real grading, is tested in tests/test_hub.py."""

import pathlib

from tools.lab import scores_page


def feedback(folder: pathlib.Path, name: str, score: str, top: str, penalty: str = "") -> str:
    folder.mkdir(parents=True, exist_ok=True)
    late = f'<li class="late-penalty">Late submission penalty (Score: -{penalty})</li>' if penalty else ""
    (folder / f"{name}.html").write_text(
        f"<html><body><h4>{name} (Score: {score} / {top})</h4><ol>{late}</ol></body></html>")
    return str(folder / f"{name}.html")


def listing(root, me="ann"):
    fb1 = root / "memcourse/exercises/session-1/feedback/2026-03-01 12:00:00.000000 UTC"
    fb2 = root / "memcourse/exercises/session-2/feedback/2026-03-09 10:00:00.000000 UTC"
    nbs1 = [{"notebook_id": "exit-test", "local_feedback_path": feedback(fb1, "exit-test", "7.0", "10.0", "3.0")},
            {"notebook_id": "exercises", "local_feedback_path": feedback(fb1, "exercises", "9.1", "13.0", "3.9")}]
    nbs2 = [{"notebook_id": "exit-test", "local_feedback_path": feedback(fb2, "exit-test", "10.0", "10.0")}]
    return [
        {"assignment_id": "session-2", "course_id": "memcourse", "submissions": [
            {"status": "submitted", "student_id": me, "timestamp": "2026-03-09 10:00:00.000000 UTC",
             "has_local_feedback": True, "notebooks": nbs2},
            # handed in again after the grading: the graded result stays in view beside it
            {"status": "submitted", "student_id": me, "timestamp": "2026-03-10 09:00:00.000000 UTC",
             "has_local_feedback": False, "notebooks": [{"notebook_id": "exit-test"}]}]},
        {"assignment_id": "session-1", "course_id": "memcourse", "submissions": [
            {"status": "submitted", "student_id": me, "timestamp": "2026-02-28",
             "has_local_feedback": False, "notebooks": []},
            {"status": "submitted", "student_id": me, "timestamp": "2026-03-01 12:00:00.000000 UTC",
             "has_local_feedback": True, "notebooks": nbs1}]},
        {"assignment_id": "session-3", "course_id": "memcourse", "submissions": [
            {"status": "submitted", "student_id": me, "timestamp": "2026-03-15 08:00:00.000000 UTC",
             "has_local_feedback": False, "notebooks": [{"notebook_id": "exit-test"}]}]},
        # handed in under a classmate's name (nbgrader submit --student): collect refuses it
        {"assignment_id": "session-4", "course_id": "memcourse", "submissions": [
            {"status": "submitted", "student_id": "bob", "timestamp": "2026-03-20 08:00:00.000000 UTC",
             "has_local_feedback": False, "notebooks": [{"notebook_id": "exit-test"}]}]},
    ]


def test_every_session_with_its_score_penalty_and_feedback(tmp_path):
    rows = scores_page.sessions(listing(tmp_path), tmp_path, "ann")
    assert [r.assignment for r in rows] == ["session-1", "session-2", "session-3"]  # not bob's
    one = rows[0]
    assert (one.score, one.max_score, one.penalty) == (16.1, 23.0, 6.9)
    assert one.notebooks[0].link.startswith("memcourse/exercises/session-1/feedback/")
    assert rows[2].waiting and not rows[2].notebooks
    assert rows[1].score == 10.0 and rows[1].newer.startswith("2026-03-10")  # graded, and newer
    assert not rows[0].newer  # the older ungraded one is not newer than the graded one
    text = scores_page.page(rows, "/user/ann/lab", extensions={"session-3": "Friday 20 March 2026, 23:59 (UTC)"})
    assert "<td>session-1</td><td class=\"score\">16.1 / 23</td><td>&minus;6.9</td>" in text
    assert 'href="/user/ann/lab/tree/memcourse/exercises/session-1/feedback/' in text
    assert "not graded yet" in text and "26.1 / 33" in text  # the total of the graded ones
    assert "<td class=\"score\">10 / 10</td>" in text and "handed in again 2026-03-10" in text
    assert "session-4" not in text and "2026-03-20" not in text
    assert '<a href="/user/ann/lab">' in text and "Back to the lab" in text
    assert "session-3: due Friday 20 March 2026, 23:59 (UTC)" in text
    assert text.count('class="bar"') == 2 and "70 %" in text and "100 %" in text  # 16.1/23, 10/10
    assert "<script" not in text


def test_what_the_page_shows_is_escaped(tmp_path):
    rows = [scores_page.Session("session-<b>1", "x", [scores_page.Notebook('<img src=x onerror=alert(1)>',
                                                                   1.0, 2.0, 0.0, '"><script>x</script>')],
                           newer="<i>soon")]
    text = scores_page.page(rows, "/user/ann/lab", problem="<script>alert(2)</script>",
                       extensions={"<b>s": "<img src=y>"})
    assert "<script" not in text and "<img" not in text and "<b>" not in text and "<i>" not in text


def test_the_student_is_the_hubs_user_where_students_share_a_unix_user(monkeypatch):
    """One-user mode and Kubernetes: every server runs as one Unix user, and the exchange
    files each submission under the hub's name, which the page then shows."""
    monkeypatch.setenv("JUPYTERHUB_USER", "ann")
    assert scores_page.student_id() == "ann"
    monkeypatch.delenv("JUPYTERHUB_USER")
    assert scores_page.student_id() == scores_page.get_username()
