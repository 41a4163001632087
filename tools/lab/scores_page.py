"""A student's scores page on the course hub: every session's score, late penalty and feedback.

A server extension of the student's lab (``<server>/memcourse/scores``; the start page links
it through JupyterHub's ``/hub/user-redirect/memcourse/scores``). It asks nbgrader's own
assignment list (the ``assignment_list`` server extension's manager: the student's
submissions, and whether feedback was released for them), fetches the feedback released
since the last visit (nbgrader's ``fetch_feedback``, as the *Assignments* tab's *Fetch
Feedback* does, for any submission with feedback waiting, not only the newest), and shows
one table: for each session handed in, the score of the newest graded submission after its
late penalty, out of how many points, the penalty, a link to each notebook's feedback page
(opened in the lab), and beside it any newer submission not graded yet; then the course's
total and a bar of each session's share of its points (an inline SVG). Only the student's
own submissions count (nbgrader's list also holds one handed in under another's name,
which the instructor's collect refuses). A student's extensions (their own due dates, which
the hub gives their server at spawn, ``MEMCOURSE_EXTENSIONS``) are said above the table.

The numbers are read from the feedback pages the grader wrote (nbgrader's
``(Score: x / y)`` heading of each notebook and its *Late submission penalty* line); the
page is built from escaped text only and runs no script.
"""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from nbgrader.utils import get_username
from tornado import web

ROUTE = "memcourse/scores"
MAX_PAGE = 5 * 1024 * 1024  # bytes of one feedback page read
HEADING = re.compile(r"<h4>\s*([^<]*?)\s*\(Score:\s*([0-9.]+)\s*/\s*([0-9.]+)\)\s*</h4>")
PENALTY = re.compile(r"Late submission penalty \(Score:\s*-([0-9.]+)\)")
SESSION = re.compile(r"^session-(\d+)$")
EXTENSIONS_ENV = "MEMCOURSE_EXTENSIONS"  # set by the hub at spawn: {session: due date text}


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
    timestamp: str  # of the submission graded ('' when none is)
    notebooks: list[Notebook] = field(default_factory=list)
    newer: str = ""  # a submission handed in after the graded one (or the only one), not graded yet

    @property
    def waiting(self) -> bool:
        """Handed in, nothing graded yet."""
        return not self.notebooks

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


def student_id() -> str:
    """This server's student: the hub's name for its user (``JUPYTERHUB_USER``), which the
    exchange service files submissions under where every student runs as one Unix user;
    without a hub, nbgrader's own id (the Unix user's name)."""
    return os.environ.get("JUPYTERHUB_USER") or get_username()


def own(assignment: dict, student: str) -> list[dict]:
    """The student's own submissions of one assignment of nbgrader's list, oldest first."""
    return [s for s in assignment.get("submissions", [])
            if s.get("status") == "submitted" and s.get("student_id") == student]


def sessions(submitted: list[dict], root: Path, student: str) -> list[Session]:
    """The student's sessions from nbgrader's list of their submissions: the newest graded
    one of each assignment, and the newest handed in after it (not graded yet)."""
    found = []
    for assignment in submitted:
        subs = own(assignment, student)
        if not subs:
            continue
        graded = [s for s in subs if s.get("has_local_feedback")]
        session = Session(str(assignment.get("assignment_id", "?")),
                          str(graded[-1].get("timestamp", "")) if graded else "")
        if subs[-1] is not (graded[-1] if graded else None):
            session.newer = str(subs[-1].get("timestamp", ""))
        for nb in graded[-1].get("notebooks", []) if graded else []:
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


def plot(rows: list[Session]) -> str:
    """A bar per graded session: its share of the session's points (an inline SVG, no script)."""
    graded = [s for s in rows if not s.waiting and s.max_score]
    if not graded:
        return ""
    bar, gap, width, label = 18, 6, 240, 90
    height = len(graded) * (bar + gap)
    bars = []
    for i, s in enumerate(graded):
        y, share = i * (bar + gap), max(0.0, min(1.0, s.score / s.max_score))
        bars.append(f'<text x="{label - 8}" y="{y + 13}" text-anchor="end">{html.escape(s.assignment)}</text>'
                    f'<rect x="{label}" y="{y}" width="{width}" height="{bar}" class="track"/>'
                    f'<rect x="{label}" y="{y}" width="{width * share:.1f}" height="{bar}" class="bar"/>'
                    f'<text x="{label + width + 8}" y="{y + 13}">{100 * share:.0f} %</text>')
    return (f'<svg class="plot" role="img" aria-label="your score in each session, as a share of '
            f'its points" width="{label + width + 60}" height="{height}" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(bars)}</svg>')


STYLE = """body{margin:0;font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;
font-size:13px;color:rgba(0,0,0,.87);background:#fff}header{display:flex;align-items:center;gap:1em;
padding:6px 12px;border-bottom:1px solid #e0e0e0;background:#fff}header a{color:#1976d2;
text-decoration:none;font-weight:600}main{padding:1em 2em;max-width:60em}h1{font-size:18px;
font-weight:600}table{border-collapse:collapse;margin:1em 0}td,th{padding:4px 12px;text-align:left;
border-bottom:1px solid #e0e0e0}th{font-weight:600;background:#f5f5f5}.score{font-weight:600}
.total td{border-top:2px solid #757575}.problem{color:#d32f2f}.newer{color:#616161}
.plot text{font-size:12px;fill:rgba(0,0,0,.87)}.plot .track{fill:#eeeeee}.plot .bar{fill:#1976d2}
a{color:#1976d2}"""


def page(rows: list[Session], lab_url: str, problem: str = "",
         extensions: dict[str, str] | None = None) -> str:
    """The scores page (escaped text only, no script); ``extensions``: {session: the
    student's own due date, as the hub says it}."""
    body = []
    for s in rows:
        newer = (f'<div class="newer">handed in again {html.escape(s.newer)}: not graded yet</div>'
                 if s.newer else "")
        if s.waiting:
            body.append(f"<tr><td>{html.escape(s.assignment)}</td><td colspan=\"3\">handed in "
                        f"{html.escape(s.newer)}; not graded yet</td></tr>")
            continue
        links = ", ".join(
            f"<a href=\"{html.escape(url_path_join(lab_url, 'tree', n.link))}\" target=\"_blank\">"
            f"{html.escape(n.name)}</a> ({_number(n.score)} / {_number(n.max_score)})"
            for n in s.notebooks)
        late = f"&minus;{s.penalty:g}" if s.penalty else "none"
        body.append(f"<tr><td>{html.escape(s.assignment)}</td>"
                    f"<td class=\"score\">{s.score:g} / {s.max_score:g}</td>"
                    f"<td>{late}</td><td>{links}{newer}</td></tr>")
    graded = [s for s in rows if not s.waiting]
    lost = sum(s.penalty for s in graded)
    total = (f"<tr class=\"total\"><td>the course</td><td class=\"score\">"
             f"{sum(s.score for s in graded):g} / {sum(s.max_score for s in graded):g}</td>"
             f"<td>{f'&minus;{lost:g}' if lost else 'none'}</td><td></td></tr>" if graded else "")
    empty = "" if rows else "<p>Nothing handed in yet: your sessions appear here once you submit.</p>"
    note = f"<p class=\"problem\">{html.escape(problem)}</p>" if problem else ""
    granted = "".join(f"<li>{html.escape(a)}: due {html.escape(when)}</li>"
                      for a, when in sorted((extensions or {}).items()))
    granted = f"<p>Your extensions (your own due dates):</p><ul>{granted}</ul>" if granted else ""
    back = html.escape(lab_url)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Your scores</title>
<style>{STYLE}</style></head><body>
<header><a href="{back}">&larr; Back to the lab</a><span>Transformers as memory</span></header>
<main><h1>Your scores</h1>
<p>Each session you handed in: its score after any late penalty, the penalty, and the
feedback on each notebook (it opens in your lab). New feedback is fetched each time you open
this page.</p>{note}{granted}{empty}
<table><tr><th>session</th><th>score</th><th>late penalty</th><th>feedback</th></tr>
{''.join(body)}{total}</table>
{plot(rows)}
</main></body></html>"""


def extensions_of(course: str | Path, student: str) -> str:
    """The hub's side: the student's extensions in the course folder ``course`` (its
    ``extensions.yml``, ``tools.release.schedule``), as ``EXTENSIONS_ENV`` carries them."""
    from tools.release import schedule

    term = schedule.load(Path(course))
    return json.dumps({a: schedule.when(m) for a, m in term.extensions_of(student).items()})


def extensions_given() -> dict[str, str]:
    """The student's extensions the hub gave their server ({session: due date text})."""
    try:
        data = json.loads(os.environ.get(EXTENSIONS_ENV) or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


class ScoresHandler(JupyterHandler):
    """GET: the student's scores (new feedback fetched first)."""

    @web.authenticated
    def get(self):
        manager = self.settings.get("assignment_list_manager")
        root = Path(self.settings.get("server_root_dir", os.getcwd())).expanduser()
        lab_url = url_path_join(self.base_url, "lab")
        student = student_id()
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
            if any(s.get("has_exchange_feedback") and (not s.get("has_local_feedback")
                                                      or s.get("feedback_updated"))
                   for s in own(assignment, student)):
                result = manager.fetch_feedback(assignment["course_id"], assignment["assignment_id"])
                fetched = True
                if not result.get("success"):
                    problem = f"The feedback of {assignment['assignment_id']} could not be fetched."
        if fetched:
            listed = manager.list_submitted_assignments()
        self.set_header("Cache-Control", "no-store")
        self.finish(page(sessions(listed.get("value", []), root, student), lab_url, problem,
                         extensions_given()))


def _jupyter_server_extension_points():
    return [{"module": "tools.lab.scores_page"}]


def _load_jupyter_server_extension(serverapp) -> None:
    base = serverapp.web_app.settings["base_url"]
    serverapp.web_app.add_handlers(".*$", [(url_path_join(base, ROUTE), ScoresHandler)])
