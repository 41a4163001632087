"""A student's scores page on the course hub: every session's score, late penalty and feedback.

A server extension of the student's lab (``<server>/memcourse/scores``; the start page links
it through JupyterHub's ``/hub/user-redirect/memcourse/scores``). It asks nbgrader's own
assignment list (the ``assignment_list`` server extension's manager: the student's
submissions in the exchange, and whether feedback was released for them), fetches the
feedback released since the last visit (nbgrader's ``fetch_feedback``, as the
*Assignments* tab's *Fetch Feedback* does), and shows one table: for each session handed
in, the score of the newest graded submission after its late penalty, out of how many
points, the penalty, and a link to each notebook's feedback page (opened in the lab).

The numbers are read from the feedback pages the grader wrote (nbgrader's
``(Score: x / y)`` heading of each notebook and its *Late submission penalty* line); the
page is built from escaped text only and runs no script.

Depends on nothing of the course (nbgrader's assignment-list server extension, Jupyter
Server).
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web

ROUTE = "memcourse/scores"
MAX_PAGE = 5 * 1024 * 1024  # bytes of one feedback page read
HEADING = re.compile(r"<h4>\s*([^<]*?)\s*\(Score:\s*([0-9.]+)\s*/\s*([0-9.]+)\)\s*</h4>")
PENALTY = re.compile(r"Late submission penalty \(Score:\s*-([0-9.]+)\)")
SESSION = re.compile(r"^session-(\d+)$")


@dataclass
class Notebook:
    name: str
    score: float | None  # after its late penalty (nbgrader's feedback heading)
    max_score: float | None
    penalty: float
    link: str  # the feedback page, relative to the server's root


@dataclass
class Session:
    assignment: str
    timestamp: str  # of the submission graded
    notebooks: list[Notebook] = field(default_factory=list)
    waiting: bool = False  # handed in, no feedback released yet

    @property
    def score(self) -> float:
        return sum(n.score or 0.0 for n in self.notebooks)

    @property
    def max_score(self) -> float:
        return sum(n.max_score or 0.0 for n in self.notebooks)

    @property
    def penalty(self) -> float:
        return sum(n.penalty for n in self.notebooks)


def read_page(path: Path) -> tuple[float | None, float | None, float]:
    """(score after the penalty, max score, penalty) of one feedback page."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(MAX_PAGE).decode("utf-8", errors="replace")
    except OSError:
        return None, None, 0.0
    heading = HEADING.search(text)
    penalty = PENALTY.search(text)
    if heading is None:
        return None, None, 0.0
    return float(heading.group(2)), float(heading.group(3)), float(penalty.group(1)) if penalty else 0.0


def sessions(submitted: list[dict], root: Path) -> list[Session]:
    """The student's sessions from nbgrader's list of their submissions (newest graded one
    of each assignment; one handed in and not graded yet says so)."""
    found = []
    for assignment in submitted:
        subs = [s for s in assignment.get("submissions", []) if s.get("status") == "submitted"]
        if not subs:
            continue
        graded = [s for s in subs if s.get("has_local_feedback")]
        newest = (graded or subs)[-1]
        session = Session(assignment.get("assignment_id", "?"), str(newest.get("timestamp", "")))
        if not graded:
            session.waiting = True
        for nb in newest.get("notebooks", []) if graded else []:
            rel = nb.get("local_feedback_path") or ""
            path = Path(rel) if os.path.isabs(rel) else Path(root) / rel
            score, top, penalty = read_page(path) if rel else (None, None, 0.0)
            link = os.path.relpath(path, root) if rel else ""
            session.notebooks.append(Notebook(nb.get("notebook_id", "?"), score, top, penalty, link))
        found.append(session)
    return sorted(found, key=lambda s: (int(SESSION.match(s.assignment).group(1))
                                        if SESSION.match(s.assignment) else 10**6, s.assignment))


def _number(x: float | None) -> str:
    return "?" if x is None else f"{x:g}"


def page(rows: list[Session], lab_url: str, problem: str = "") -> str:
    """The scores page (escaped text only, no script)."""
    body = []
    for s in rows:
        if s.waiting:
            body.append(f"<tr><td>{html.escape(s.assignment)}</td><td colspan=\"3\">handed in "
                        f"{html.escape(s.timestamp)}; not graded yet</td></tr>")
            continue
        links = ", ".join(
            f"<a href=\"{html.escape(url_path_join(lab_url, 'tree', n.link))}\" target=\"_blank\">"
            f"{html.escape(n.name)}</a> ({_number(n.score)} / {_number(n.max_score)})"
            for n in s.notebooks)
        late = f"&minus;{s.penalty:g}" if s.penalty else "none"
        body.append(f"<tr><td>{html.escape(s.assignment)}</td>"
                    f"<td class=\"score\">{s.score:g} / {s.max_score:g}</td>"
                    f"<td>{late}</td><td>{links}</td></tr>")
    graded = [s for s in rows if not s.waiting]
    lost = sum(s.penalty for s in graded)
    total = (f"<tr class=\"total\"><td>all sessions</td><td class=\"score\">"
             f"{sum(s.score for s in graded):g} / {sum(s.max_score for s in graded):g}</td>"
             f"<td>{f'&minus;{lost:g}' if lost else 'none'}</td><td></td></tr>" if graded else "")
    empty = "" if rows else "<p>Nothing handed in yet: your sessions appear here once you submit.</p>"
    note = f"<p class=\"problem\">{html.escape(problem)}</p>" if problem else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Your scores</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:60em}}td,th{{padding:0.3em 0.9em;
text-align:left;border-bottom:1px solid #ddd}}.score{{font-weight:bold}}.total td{{border-top:2px solid #555}}
.problem{{color:#a00}}</style></head><body>
<h1>Your scores</h1>
<p>Each session you handed in: its score after any late penalty, the penalty, and the
feedback on each notebook (it opens in your lab). New feedback is fetched each time you open
this page.</p>{note}{empty}
<table><tr><th>session</th><th>score</th><th>late penalty</th><th>feedback</th></tr>
{''.join(body)}{total}</table>
</body></html>"""


class ScoresHandler(JupyterHandler):
    """GET: the student's scores (new feedback fetched first)."""

    @web.authenticated
    def get(self):
        manager = self.settings.get("assignment_list_manager")
        root = Path(self.settings.get("server_root_dir", os.getcwd())).expanduser()
        lab_url = url_path_join(self.base_url, "lab")
        if manager is None:
            self.finish(page([], lab_url, "No nbgrader exchange here: scores live on the course hub."))
            return
        listed = manager.list_submitted_assignments()
        problem = ""
        if not listed.get("success"):
            self.finish(page([], lab_url, "The assignment list could not be read."))
            return
        fetched = False
        for assignment in listed["value"]:
            subs = [s for s in assignment.get("submissions", []) if s.get("status") == "submitted"]
            if subs and subs[-1].get("has_exchange_feedback") and (
                    not subs[-1].get("has_local_feedback") or subs[-1].get("feedback_updated")):
                result = manager.fetch_feedback(assignment["course_id"], assignment["assignment_id"])
                fetched = True
                if not result.get("success"):
                    problem = f"The feedback of {assignment['assignment_id']} could not be fetched."
        if fetched:
            listed = manager.list_submitted_assignments()
        self.set_header("Cache-Control", "no-store")
        self.finish(page(sessions(listed.get("value", []), root), lab_url, problem))


def _jupyter_server_extension_points():
    return [{"module": "tools.lab.scores"}]


def _load_jupyter_server_extension(serverapp) -> None:
    base = serverapp.web_app.settings["base_url"]
    serverapp.web_app.add_handlers(".*$", [(url_path_join(base, ROUTE), ScoresHandler)])
