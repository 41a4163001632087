"""The students' start page (``start.md``): the sessions, their chapters, assignments and due dates.

``make assignments`` writes it (``write``; so does ``make publish``, ``python -m
tools.release.start_page``, after the schedule changed), ``python -m tools.release --check``
says whether it is up to date (``differences``).

A page at the course's root, where a student lands on the course hub (the course pulled
into ``~/memcourse``, opened at ``start.md``): one section per session of ``_toc.yml``,
with links to its chapters (``book/...``), its assignments as a student receives them
(``exercises/session-N/...``: the notebooks the *Assignments* tab fetches there) and the
session's due date from ``schedule.yml`` (``tools.release.schedule``), the late policy the
course configures, and the link to the student's scores page on the hub (``scores_url``).
It is a MyST notebook of markdown cells only, so JupyterLab opens it rendered, links live.
"""

from __future__ import annotations

import re
from pathlib import Path

from tools.release import layout, schedule
from tools.release.session_pages import FRONT_MATTER, TITLES  # the book's MyST notebook header

FILE = "start.md"
SCORES_PATH = "/hub/user-redirect/memcourse/scores"  # the student's own server (tools.lab.scores_page)
SESSION = re.compile(r"^Session (\d+)\s*·\s*(.+)$")


def _title(root: Path, page: str) -> str:
    """A chapter's title: its first heading (``# 3. A sum of outer products is a memory``)."""
    path = Path(root) / f"{page}.md"
    if not path.is_file():
        return Path(page).name
    for line in path.read_text().splitlines():
        if line.startswith("# "):
            title = line[2:].strip()
            m = re.match(r"^(\d+)\.\s+(.+)$", title)  # "3. A sum of ..." is Chapter 3
            return f"Chapter {m.group(1)}: {m.group(2)}" if m else title
    return Path(page).name


def _sessions(root: Path) -> list[tuple[int, str, list[str]]]:
    """(number, title, pages) of each session part of ``_toc.yml``, the session page left out."""
    import yaml

    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text())
    found = []
    for part in toc.get("parts", []):
        m = SESSION.match(str(part.get("caption", "")))
        if not m:
            continue
        pages = [c["file"] for c in part.get("chapters", [])
                 if not Path(c["file"]).name.startswith("session-")]
        found.append((int(m.group(1)), m.group(2).strip(), pages))
    return found


def _policy(root: Path) -> str:
    """The late policy's sentence, from the course's nbgrader configuration ('' if none)."""
    try:
        from nbgrader.preprocessors import AssignLatePenalties
        from traitlets.config.loader import PyFileConfigLoader

        config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
        plugin = AssignLatePenalties(config=config).plugin_class(config=config)
    except Exception:  # noqa: BLE001 - the page says the dates all the same
        return ""
    describe = getattr(plugin, "describe", None)
    return describe() if callable(describe) else ""


def scores_url(root: Path) -> str:
    """The link to the scores page: through the hub ``_config.yml`` names
    (``launch_buttons.jupyterhub_url``), else a path on the hub the page is opened from (a
    hub whose users' servers have origins of their own needs the hub's address: ``make
    hub`` publishes the page with its own, ``tools.hub.course_repo``)."""
    import yaml

    config = yaml.safe_load((Path(root) / "_config.yml").read_text()) or {}
    hub = str((config.get("launch_buttons") or {}).get("jupyterhub_url") or "").rstrip("/")
    return f"{hub}{SCORES_PATH}"


def render(root: Path = layout.ROOT) -> str:
    """The start page's text."""
    root = Path(root)
    term = schedule.load(root)
    released = set(layout.assignments(root, layout.RELEASE))
    policy = _policy(root)
    lines = [FRONT_MATTER, "# Transformers as memory: start here", "",
             "The course in nine sessions. For each: read its chapters (open one, then *Run "
             "All*: the figures are live), then do its exit test and exercises. Fetch those in "
             "the lab's **Assignments** tab (menu *Nbgrader > Assignment List*): they arrive in "
             "`exercises/session-N/`, answer them there, *Submit* before the due date. Your "
             f"scores, late penalties and feedback are on [your scores page]({scores_url(root)}),"
             " and so is your own due date where you were granted an extension.",
             ""]
    if any(term.due.values()):
        lines += [f"Due dates are in {term.timezone} time"
                  + (f"; {policy}." if policy else "."), ""]
    lines += ["Your edits to a chapter are yours: when the course is updated, opening a "
              "chapter's link again brings the changes without undoing them.", ""]
    for number, title, pages in _sessions(root):
        name = f"session-{number}"
        lines += [f"## Session {number} · {title}", ""]
        chapters = ", ".join(f"[{_title(root, p)}]({p}.md)" for p in pages)
        lines += [f"- **Read:** {chapters}"]
        if name in released:
            notebooks = sorted(layout.notebooks(root, name, layout.RELEASE),
                               key=lambda p: (p.stem != "exit-test", p.stem))
            work = ", ".join(f"[{TITLES.get(p.stem, p.stem)}](exercises/{name}/{p.name})"
                             for p in notebooks)
            lines += [f"- **Do:** {work} (fetch `{name}` in the Assignments tab)"]
            due = term.due.get(name)
            lines += [f"- **Due:** {schedule.when(due) if due else 'no due date'}"]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write(root: Path = layout.ROOT) -> Path:
    path = Path(root) / FILE
    path.write_text(render(root))
    return path


def differences(root: Path = layout.ROOT) -> list[str]:
    """The start page, if it is missing or out of date."""
    path = Path(root) / FILE
    if not path.exists():
        return [f"missing page: {FILE} (make assignments)"]
    if path.read_text() != render(root):
        return [f"out of date: {FILE} (make assignments)"]
    return []


if __name__ == "__main__":
    print(f"wrote {write(Path.cwd())}")
