"""The course on a real JupyterHub: the whole assignment loop end to end, with every attack
a hostile student makes on the exchange and the lab played by a student and refused.

The ``hub`` fixture does what `make hub` does (tools/hub/local.py), with users of its own
(``mct-instructor``, ``mct-student1``, ``mct-student2``, removed at the end), its own
exchange (a 64 MB file system of its own), hub state in a temporary folder and a free
port of 127.0.0.1; the users' environment (/srv/memcourse/venv) and the proxy are the
shared ones `make hub` installs (made on the first run, a few minutes; then checked in a
second). It stops the hub, and whatever the hub left, by PID.

The loop, through the hub's login page in headless Chromium: the instructor releases
session 3 in a terminal of their lab (File > New > Terminal, run through JupyterLab's
terminal service); two students fetch it in the *Assignments* tab, answer (student1
every question with the solution's answer, and scripts in a written answer, an added
cell, an answer's output and a file of the submission; student2 the first half), save
and submit there (student2 once more from a terminal in another folder); then the
attacks (a submission in the classmate's name, one dated 2099, a malformed
entry, a link to the solutions, a FIFO, one over the size limit, a squatted release
folder, a disk filled); the instructor collects, grades with ``make grade`` and releases
the feedback in the terminal; each student fetches their own feedback in the
Assignments tab. Then the instructor opens student1's submission in Formgrader's manual
grading, in the lab (the notebooks, the feedback page and the submitted page, trusted),
and a marker proves that no script of the student ran. As the students' Unix users,
nobody reads another's feedback or the instructor's solutions, autograded notebooks or
gradebook. The grades equal those of `make grade` run on a copy of the collected
notebooks. Last, `make hub-stop`'s stop leaves no process of the hub's users (student1
left one with ``setsid nohup`` in a terminal). Screenshots: _build/screenshots/hub-*.png;
the grading log, submissions and feedback of the last run: _build/hub-test/.
"""

from __future__ import annotations

import calendar
import csv
import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest

from tools.hub import course_repo, hub_api
from tools.hub import exchange as course_exchange
from tools.hub import local as course_hub
from tools.hub import processes as hub_processes
from tools.hub import limits
from tools.hub.limits import Limits
from tools.common import chromium
from support import lab_browser
from support.hub import own_hub
from support.hub_users import run_as
from tools.common.ports import free_port

# one worker runs every module that starts the course's lab or writes its config (conftest.py)
pytestmark = pytest.mark.xdist_group("lab")

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "_build" / "screenshots"
KEPT = ROOT / "_build" / "hub-test"  # the grading log, submissions, feedback of the last run
ASSIGNMENT = "session-3"
COURSE = "memcourse"  # the course pulled into ~/memcourse (nbgitpuller)
FETCHED = Path(COURSE) / "exercises" / ASSIGNMENT  # where nbgrader fetches, beside book/
CHAPTER = "book/ch01-matrix-vector.md"  # opened from the HTML book's launch link
NOTEBOOKS = ["exercises", "exit-test"]
WAIT = 180_000  # ms: a single-user server starting on a loaded 2-core machine
TA = "mct-ta1"  # a teaching assistant (make hub TAS=)
EXCHANGE_MB, SUBMISSION_MB, SHARE_MB = 64, 5, 12


def pwn(where: str) -> str:
    """What a student's script would do in the instructor's browser: leave a marker in the
    top window and ask the server for /pwned/<where> (seen by the browser's request log)."""
    return f"(top.__pwned=top.__pwned||[]).push(`{where}`);fetch(`/pwned/{where}`)"


WRITTEN = (f'My answer. <img src="x" onerror="{pwn("written-img")}"> '
           f'<script>{pwn("written-script")}</script> [see](javascript:{pwn("written-link")})\n')
ADDED_CELL = f'A cell of my own <img src="x" onerror="{pwn("added-cell")}">'
_IMG = f'<img src=x onerror="{pwn("output-img")}">'
_SCRIPT = f"<script>{pwn('output-script')}</script>"
_SVG = f'<svg xmlns="http://www.w3.org/2000/svg" onload="{pwn("output-svg")}"><circle r="4"/></svg>'
OUTPUTS = ("from IPython.display import HTML, SVG, Javascript, display\n"
           f"display(HTML({_IMG!r}))\ndisplay(HTML({_SCRIPT!r}))\n"
           f"display(Javascript({pwn('output-js')!r}))\ndisplay(SVG({_SVG!r}))\n")
PAGE = (f"<html><body><h1>My notes</h1><script>{pwn('page-script')}</script>"
        f'<img src="x" onerror="{pwn("page-img")}"></body></html>')
PWNED = """() => {
  const found = [];
  const visit = w => {
    try { if (w.__pwned) found.push(...w.__pwned); } catch (e) { return; }
    for (let i = 0; i < w.frames.length; i++) visit(w.frames[i]);
  };
  visit(window.top);
  return found;
}"""


# how many formulas MathJax 2 has typeset on a page (its HTML-CSS output's elements)
MATHS_TYPESET = "() => document.querySelectorAll('.MathJax, .MathJax_Display').length"

# a GET from the page, as the lab's own requests are made (the browser finds *.localhost,
# the test's HTTP client does not; JupyterHub's server wants the _xsrf cookie in a header)
FETCH = """async (url) => {
  const xsrf = (document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || '';
  const r = await fetch(url, {headers: {'X-XSRFToken': decodeURIComponent(xsrf)}});
  return [r.status, await r.text()];
}"""

# the lab's Validate button's request (nbgrader's extension posts the notebook's path)
VALIDATE = """async (path) => {
  const xsrf = (document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || '';
  const base = JSON.parse(document.getElementById('jupyter-config-data').textContent).baseUrl;
  const r = await fetch(base + 'assignments/validate', {method: 'POST',
    headers: {'X-XSRFToken': decodeURIComponent(xsrf),
              'Content-Type': 'application/x-www-form-urlencoded'},
    body: 'path=' + encodeURIComponent(path)});
  return [r.status, await r.text()];
}"""


def as_user(hub, user: str, argv: list[str], cwd: Path | None = None, timeout: float = 600):
    """Run a command as that Unix user, with a clean environment (the users' venv first, the
    lab's files on PYTHONPATH as in their terminal: the course's nbgrader plugins)."""
    return run_as(user, argv, hub.home(user), hub.venv / "bin", hub.lab, cwd, timeout=timeout)


def sh(hub, user: str, script: str):
    return as_user(hub, user, ["bash", "-c", script])


@pytest.fixture(scope="module")
def hub():
    with own_hub("memcourse-hubtest-", keep_logs=KEPT, users="mct-", students=3, tas=[TA],
                 port=free_port(), exchange_mb=EXCHANGE_MB, submission_mb=SUBMISSION_MB,
                 share_mb=SHARE_MB, limits=Limits(home_mb=64),
                 extra_env={"MEMCOURSE_HUB_EXPOSE_APP": "1"}) as hub:
        started = time.monotonic()
        passwords = course_hub.install(hub)
        print(f"\ninstalled in {time.monotonic() - started:.0f} s")
        course_hub.start(hub)
        print(f"hub ready after {time.monotonic() - started:.0f} s")
        yield hub, passwords


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = chromium.launch_browser(playwright)
        yield browser
        browser.close()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"hub-{name}.png"))


def answers(part: float, attack: bool = False) -> dict[str, dict[str, str]]:
    """grade id -> the solution's answer (markers removed), per notebook; ``part`` of them;
    with ``attack``, the written answer and q1's answer carry scripts."""
    out = {}
    for name in NOTEBOOKS:
        nb = json.loads((ROOT / "solutions" / ASSIGNMENT / f"{name}.ipynb").read_text())
        cells = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution")]
        keep = cells[: max(1, round(len(cells) * part))] if part < 1 else cells
        out[name] = {
            c["metadata"]["nbgrader"]["grade_id"]: "".join(
                line for line in "".join(c["source"]).splitlines(keepends=True)
                if not re.match(r"\s*(#+|<!--)?\s*(BEGIN|END) SOLUTION", line))
            for c in keep
        }
    if attack:
        out["exit-test"]["q6-written"] = WRITTEN + out["exit-test"]["q6-written"]
        out["exit-test"]["q1"] = OUTPUTS + out["exit-test"]["q1"]
    return out


ANSWER = """async ([path, answers, extra]) => {
  const app = window.jupyterapp;
  const widget = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await widget.context.ready;
  await widget.sessionContext.ready;  // the kernel's metadata lands before the answers
  let changed = 0;
  for (const cell of widget.content.widgets) {
    const meta = cell.model.getMetadata('nbgrader');
    if (meta && meta.solution && meta.grade_id in answers) {
      cell.model.sharedModel.setSource(answers[meta.grade_id]);
      changed++;
    }
  }
  if (extra) widget.content.model.sharedModel.insertCell(1, {cell_type: 'markdown', source: extra});
  await widget.context.save();
  await widget.sessionContext.shutdown();
  if (widget.context.model.dirty) await widget.context.save();  // a late kernel-info change
  const dirty = widget.context.model.dirty;
  widget.dispose();
  return {changed, dirty};
}"""


def log_in(browser, hub, user: str, password: str):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    context.pwned = []  # requests a student's script would make
    context.on("request", lambda r: context.pwned.append(r.url)
               if urlsplit(r.url).path.startswith("/pwned/") else None)
    page = context.new_page()
    page.set_default_timeout(WAIT)
    page.goto(f"{hub.url}/hub/login")
    if user == hub.student_names[0]:
        shot(page, "login")
    page.fill("#username_input", user)
    page.fill("#password_input", password)
    page.click("#login_submit")
    page.wait_for_url(re.compile(rf"/user/{user}/lab"), timeout=WAIT)
    page.evaluate(lab_browser.APP_READY)
    return page


# JupyterHub's home page binds its Stop button in home.js, which require.js loads after a
# setTimeout: the page's load event can come first, and a click then does nothing
STOP_BOUND = """() => { const stop = document.getElementById("stop");
  const events = stop && window.jQuery && window.jQuery._data(stop, "events");
  return Boolean(events && events.click); }"""


# Formgrader's submission page binds its score boxes once the grades it asks for have come
# (formgrade.js: formgrader.init at the window's load, then loadGrades over the API)
GRADES_BOUND = """() => Boolean(window.formgrader && formgrader.loaded && formgrader.grades
  && formgrader.grades.loaded && formgrader.comments && formgrader.comments.loaded)"""


def open_assignments(page):
    """The Assignments tab, as a student opens it: menu Nbgrader, Assignment List."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").first.click()
    page.locator("#released_assignments_list").wait_for()


def refresh(page):
    page.locator("#refresh_assignments_list").click()
    page.wait_for_timeout(1000)


def row(page, listing: str, text: str = ASSIGNMENT):
    return page.locator(f"#{listing} .list_item", has_text=text).first


def wait_text(locator, text: str, timeout: float = WAIT / 1000) -> None:
    deadline = time.monotonic() + timeout
    while text not in locator.inner_text():
        assert time.monotonic() < deadline, f"never showed {text!r}: {locator.inner_text()!r}"
        time.sleep(0.5)


def terminal(page, command: str, seconds: float = 600) -> str:
    """Run a README command in a terminal of the user's lab; its output (it must succeed)."""
    status, output = lab_browser.run_in_terminal(page, command, seconds)
    assert status == 0, f"{command!r} ended with {status}:\n{output[-3000:]}"
    return output


def inbound(hub, student: str) -> Path:
    """The student's share of the exchange, where they hand in (tools/hub/shares.py)."""
    return hub.exchange / COURSE / "inbound" / student


def play_attacks(hub) -> dict[str, str]:
    """The attacks on the exchange, as the students' Unix users, after their honest
    submissions; entry name -> what it is. Each entry is newer than the honest one."""
    one, two = hub.student_names[:2]
    now = time.strftime("%Y-%m-%d %H:%M:%S.000000 UTC", time.gmtime())
    entries = {}
    # item 2: student1 hands in under student2's name: nbgrader refuses, and an entry named
    # for student2 in student1's own share (the only place student1 writes) is refused
    forged = as_user(hub, one, ["nbgrader", "submit", ASSIGNMENT, "--student", two])
    assert forged.returncode != 0 and "You hand in as yourself" in forged.stdout + forged.stderr
    solution = hub.course_dir() / "solutions" / ASSIGNMENT / "exit-test.ipynb"
    made = sh(hub, one, f"""set -e; cd '{inbound(hub, one)}'
        cp -r "$(ls -d {one}+{ASSIGNMENT}+* | head -1)" '{two}+{ASSIGNMENT}+{now}+forged'
        touch '{one}+{ASSIGNMENT}+not-a-time'
        mkdir '{one}+{ASSIGNMENT}+{now}+link'
        ln -s '{solution}' '{one}+{ASSIGNMENT}+{now}+link/exit-test.ipynb'""")
    assert made.returncode == 0, made.stderr
    entries[f"{one}/{two}+{ASSIGNMENT}+{now}+forged"] = "forged"
    # item 3: a malformed entry; a link to the instructor's solutions; a FIFO
    entries[f"{one}/{one}+{ASSIGNMENT}+not-a-time"] = "malformed"
    entries[f"{one}/{one}+{ASSIGNMENT}+{now}+link"] = "link"
    made = sh(hub, two, f"""set -e; cd '{inbound(hub, two)}'
        mkdir '{two}+{ASSIGNMENT}+{now}+big' && cd '{two}+{ASSIGNMENT}+{now}+big'
        head -c {(SUBMISSION_MB + 1) * 1000 * 1000} /dev/zero > exercises.ipynb; cd ..
        mkdir -p '{two}+{ASSIGNMENT}+{now}+pipe' && mkfifo '{two}+{ASSIGNMENT}+{now}+pipe/exit-test.ipynb'""")
    assert made.returncode == 0, made.stderr
    entries[f"{two}/{two}+{ASSIGNMENT}+{now}+big"] = "oversized"
    entries[f"{two}/{two}+{ASSIGNMENT}+{now}+pipe"] = "fifo"
    # nobody writes in the exchange's root, in inbound, or in a classmate's share
    for where in (hub.exchange, hub.exchange / COURSE / "inbound", inbound(hub, two)):
        planted = sh(hub, one, f"touch '{where}/planted'")
        assert planted.returncode != 0 and "Permission denied" in planted.stderr, where
    return entries


def build_book(hub) -> tuple[subprocess.Popen, Path]:
    """The HTML book built for this hub (started in the background): _config.yml with the
    hub's address and the repository its students pull, as an instructor sets them; built
    into the hub's own folder, removed with it."""
    out = hub.state.parent / "book"
    out.mkdir()
    config = (ROOT / "_config.yml").read_text()
    config = config.replace('  jupyterhub_url: ""', f'  jupyterhub_url: "{hub.url}"')
    # no Binder button: a public Binder cannot reach the hub's clone (docs/hub.md)
    config = re.sub(r'binderhub_url: "[^"]*"', 'binderhub_url: ""', config)
    config = re.sub(r'repository:\n  url: "[^"]*"',
                    f'repository:\n  url: "{course_repo.url(hub.public)}"', config)
    # an execution cache of its own: the book's own build may be filling _build's at once
    config = config.replace('cache: "_build/.jupyter_cache"', f'cache: "{out / "jupyter_cache"}"')
    assert hub.url in config and course_repo.url(hub.public) in config and str(out) in config
    (out / "_config.yml").write_text(config)
    log = open(out / "build.log", "w")  # noqa: SIM115 (the child keeps it)
    jb = Path(sys.executable).with_name("jupyter-book")
    process = subprocess.Popen(
        [str(jb), "build", str(ROOT), "--config", str(out / "_config.yml"), "--path-output",
         str(out)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"})
    log.close()
    return process, out / "_build" / "html"


def launch(page, html: Path, chapter: str) -> dict:
    """A chapter opened from the HTML book's launch button, run whole: what it showed."""
    page.goto((html / chapter).with_suffix(".html").as_uri())
    href = page.locator("a[href*='/hub/user-redirect/git-pull']").first.get_attribute("href")
    page.goto(href)  # the launch menu's JupyterHub item (it opens in a new tab)
    page.wait_for_url(re.compile(r"/lab/tree/" + re.escape(f"{COURSE}/{chapter}")), timeout=WAIT)
    page.evaluate(lab_browser.APP_READY)
    opened = page.evaluate(lab_browser.OPEN_AND_RUN, [f"{COURSE}/{chapter}", "Jupytext Notebook", True])
    return {"href": href, "opened": opened,
            "errors": page.evaluate(lab_browser.ERRORS, opened["id"]),
            "figures": page.evaluate(lab_browser.FIGURES, opened["id"])}


def rosters(hub) -> dict[str, str]:
    """The LMS's exports of the class: Canvas's gradebook export, Moodle's plain text one."""
    full, partly = hub.student_names[:2]
    canvas = ("Student,ID,SIS User ID,SIS Login ID,Section,session-3 (31),Current Score\n"
              "    Points Possible,,,,,,(read only)\n"
              f'"One, Student",101,S101,{full},A,,\n"Two, Student",102,S102,{partly},A,,\n')
    moodle = ("First name,Last name,ID number,Institution,Department,Email address\n"
              f"Student,One,101,Uni,CS,{full}@uni.example\nStudent,Two,102,Uni,CS,{partly}@uni.example\n")
    return {"canvas": canvas, "moodle": moodle}


@pytest.fixture(scope="module")
def loop(hub, browser):
    """The whole loop, with the attacks; returns what the checks need."""
    hub, passwords = hub
    instructor, (full, partly, extended) = hub.instructor, hub.student_names
    course = hub.course_dir()
    timings, seen = {}, {}
    t0, started = time.monotonic(), time.time()
    book_build, html = build_book(hub)  # meanwhile: the HTML book with the hub's launch links

    # item 4: before the first release a student cannot put a release of their own
    squat = sh(hub, full, f"mkdir -p '{hub.exchange}/{COURSE}/outbound/{ASSIGNMENT}'")
    seen["squat"] = squat.returncode, squat.stderr

    ipage = log_in(browser, hub, instructor, passwords[instructor])
    released = terminal(ipage, f"cd ~/{COURSE} && nbgrader release_assignment {ASSIGNMENT}")
    outbound = hub.exchange / COURSE / "outbound" / ASSIGNMENT
    assert (outbound / "exit-test.ipynb").exists(), released
    # item 2: an entry of student1 dated 2099 (the release, blank), made before their real one
    dated = f"{full}+{ASSIGNMENT}+2099-01-01 00:00:00.000000 UTC+dated"
    made = sh(hub, full, f"""set -e; mkdir '{inbound(hub, full)}/{dated}'
        echo '2099-01-01 00:00:00.000000 UTC' > '{inbound(hub, full)}/{dated}/timestamp.txt'
        cp '{outbound}'/*.ipynb '{inbound(hub, full)}/{dated}/'""")
    assert made.returncode == 0, made.stderr

    pages = {}
    for student, part in ((full, 1.0), (partly, 0.5)):
        page = pages[student] = log_in(browser, hub, student, passwords[student])
        # the first login pulled the course into the home and opened its start page
        page.wait_for_url(re.compile(r"/lab/tree/memcourse/start\.md"), timeout=WAIT)
        seen.setdefault("start", {})[student] = sorted(
            p.name for p in (hub.home(student) / COURSE).iterdir())
        if student == full:
            page.wait_for_timeout(1500)
            shot(page, "start")
        open_assignments(page)
        fetch = row(page, "released_assignments_list")
        fetch.locator("button", has_text="Fetch").wait_for()
        if student == full:
            shot(page, "released")
        fetch.locator("button", has_text="Fetch").click()
        fetched = row(page, "fetched_assignments_list")
        fetched.locator("button", has_text="Submit").wait_for()
        # the notebook's links to the chapters open the student's own copy of the book
        notebook = hub.home(student) / FETCHED / "exit-test.ipynb"
        links = re.findall(r"\]\((\.\./\.\./book/[^)#]+)", notebook.read_text())
        assert links, "no chapter links in the fetched exit test"
        assert all((notebook.parent / link).is_file() for link in links), links
        attack = student == full
        for name, given in answers(part, attack).items():
            extra = ADDED_CELL if attack and name == "exit-test" else None
            done = page.evaluate(ANSWER, [f"{FETCHED}/{name}.ipynb", given, extra])
            assert done == {"changed": len(given), "dirty": False}, (student, name, done)
            saved = json.loads((hub.home(student) / FETCHED / f"{name}.ipynb")
                               .read_text())
            on_disk = {c["metadata"].get("nbgrader", {}).get("grade_id"): "".join(c["source"])
                       for c in saved["cells"]}
            assert all(on_disk.get(gid) == answer for gid, answer in given.items()), (
                student, name, "answers not saved")
        if student == partly:  # Validate on the hub's lab says what `make check` says
            seen["validate"] = page.evaluate(VALIDATE, f"{FETCHED}/exit-test.ipynb")
        if attack:  # a page of the student's handed in beside the notebooks
            assert sh(hub, full, f"cat > ~/{FETCHED}/notes.html <<'EOF'\n{PAGE}\nEOF"
                      ).returncode == 0
        open_assignments(page)
        row(page, "fetched_assignments_list").locator("button", has_text="Submit").click()
        wait_text(page.locator("#submitted_assignments_list"), ASSIGNMENT)
        if student == full:
            shot(page, "submitted")
            due_at = time.time() + 1  # the due date falls between the two submissions
            time.sleep(2.5)
    # a student's page cannot read the instructor's server: each server has its own origin
    seen["cross-origin"] = pages[full].evaluate("""async (url) => {
      try { const r = await fetch(url, {credentials: 'include'}); return `read: ${r.status}`; }
      catch (e) { return `refused: ${e}`; } }""", f"{hub.user_url(instructor)}/api/contents/{COURSE}")
    # item 6: a student's terminal, in another folder than the home, as the README says
    seen["student terminal"] = terminal(pages[partly], f"cd ~/{COURSE}/book && which nbgrader && "
                                                       f"nbgrader submit {ASSIGNMENT}")
    # a student with an extension (extensions.yml) hands in after the class's due date, from
    # the terminal of their lab (its first login pulled the course; nbgrader's commands, as
    # the README gives them)
    epage = log_in(browser, hub, extended, passwords[extended])
    epage.wait_for_url(re.compile(r"/lab/tree/memcourse/start\.md"), timeout=WAIT)
    fetched = sh(hub, extended, f"export PYTHONPATH='{hub.lab}'; cd ~/{COURSE} && "
                                f"nbgrader fetch_assignment {ASSIGNMENT}")
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    for name, given in answers(1.0).items():
        path = hub.home(extended) / FETCHED / f"{name}.ipynb"
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell["metadata"].get("nbgrader", {}).get("grade_id") in given:
                cell["source"] = given[cell["metadata"]["nbgrader"]["grade_id"]]
        path.write_text(json.dumps(nb))  # the student's file, rewritten in place
    handed = sh(hub, extended, f"export PYTHONPATH='{hub.lab}'; nbgrader submit {ASSIGNMENT}")
    assert handed.returncode == 0, handed.stdout + handed.stderr
    timings["students fetched, answered, submitted"] = time.monotonic() - t0

    # items 2, 3, 5: the attacks, then a disk filled and a daemon left running (item 7)
    attacks = play_attacks(hub)
    # student2 fills their share: their submit says so, and the instructor (of the group
    # of the shares) removes the file (that a classmate still hands in: test_shares.py)
    fill = inbound(hub, partly) / f"{partly}-fill"
    filled = sh(hub, partly, f"head -c {2 * SHARE_MB}M /dev/zero > '{fill}'")
    seen["fill"] = filled.returncode, filled.stderr, fill.stat().st_size
    seen["submit when full"] = as_user(hub, partly, ["nbgrader", "submit", ASSIGNMENT])
    seen["instructor clears"] = sh(hub, instructor, f"rm '{fill}'")
    terminal(pages[full], "(setsid nohup sleep 100007 > /dev/null 2>&1 < /dev/null &)")
    seen["daemon"] = daemon(pwd.getpwnam(full).pw_uid)

    t1 = time.monotonic()
    seen["collect"] = terminal(ipage, f"cd ~/{COURSE} && nbgrader collect {ASSIGNMENT}")
    for student in (full, partly):
        for name in NOTEBOOKS:
            assert (course / "submitted" / student / ASSIGNMENT / f"{name}.ipynb").exists()
    # the term's schedule: session 3 was due between student1's and student2's submission;
    # student3 has two days more; `make publish` carries it to the gradebook and the students
    due = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(due_at))
    (course / "schedule.yml").write_text(f"timezone: UTC\ndue:\n  {ASSIGNMENT}: {due}\n")
    (course / "extensions.yml").write_text(f"{ASSIGNMENT}:\n  {extended}: 2\n")
    for name in ("schedule.yml", "extensions.yml"):
        course_hub._as_user(instructor, course / name)
    seen["due"] = due
    seen["schedule published"] = terminal(ipage, f"cd ~/{COURSE} && make publish")
    graded = terminal(ipage, f"cd ~/{COURSE} && make grade ASSIGNMENTS={ASSIGNMENT}", 900)
    # the grades to the LMS, as the README says, from the rosters the LMS exported
    for lms, text in rosters(hub).items():
        (course / f"{lms}-roster.csv").write_text(text)
        course_hub._as_user(instructor, course / f"{lms}-roster.csv")
        seen[f"export {lms}"] = terminal(
            ipage, f"cd ~/{COURSE} && make export LMS={lms} ROSTER={lms}-roster.csv")
    KEPT.mkdir(parents=True, exist_ok=True)  # what grading said, kept for a person to read
    (KEPT / "make-grade.log").write_text(graded)
    for name in ("submitted", "autograded", "feedback", "refused"):
        shutil.rmtree(KEPT / name, ignore_errors=True)
        if (course / name).is_dir():
            shutil.copytree(course / name, KEPT / name)
    timings["collect and make grade in the instructor's terminal"] = time.monotonic() - t1
    seen["ta"] = teaching_assistant(hub, browser, passwords[TA], full)
    if seen["ta"]["released"][0] != 0:  # the rest of the loop needs the feedback released
        terminal(ipage, f"cd ~/{COURSE} && nbgrader release_feedback {ASSIGNMENT}")

    seen["listed"] = {  # what the Assignments tab reads (nbgrader list), as each student
        student: sh(hub, student, f"export PYTHONPATH='{hub.lab}'; nbgrader list --cached")
        for student in (full, partly)}
    for student in (full, partly):
        page = pages[student]
        open_assignments(page)
        refresh(page)
        submitted = row(page, "submitted_assignments_list")
        submitted.locator("button", has_text="Fetch Feedback").click()
        wait_text(page.locator("#submitted_assignments_list"), "view feedback")
        if student == full:
            shot(page, "feedback-fetched")
            page.locator("#submitted_assignments_list a", has_text="view feedback").first.click()
            page.locator(".jp-DirListing-item", has_text="exit-test.html").dblclick()
            page.locator(".jp-HTMLViewer iframe").wait_for()
            page.wait_for_timeout(2000)
            shot(page, "feedback")
    t3 = time.monotonic()
    for student in (full, partly):  # the scores page, as the start page links it
        page = pages[student]
        page.goto(f"{hub.url}/hub/user-redirect/memcourse/scores")
        page.locator("h1", has_text="Your scores").wait_for()
        seen.setdefault("scores page", {})[student] = page.locator("table").inner_text()
        if student == partly:
            shot(page, "scores")
            seen["scores page html"] = page.content()
            page.goto(f"{hub.url}/hub/home")  # the hub's home page says where the course is
            seen["hub home"] = page.locator("body").inner_text()
            shot(page, "home")
    # the student with an extension sees their own due date beside their score, once their
    # server restarted (the hub hands each server its student's dates at its start; docs)
    page = epage
    page.goto(f"{hub.url}/hub/home")
    page.wait_for_function(STOP_BOUND)  # the click before it would do nothing
    page.locator("#stop").click()
    page.locator("#stop").wait_for(state="hidden")  # JupyterHub's page: stopped
    page.locator("#start").click()
    page.wait_for_url(re.compile(rf"/user/{extended}/"), timeout=WAIT)
    page.goto(f"{hub.url}/hub/user-redirect/memcourse/scores")
    page.locator("h1", has_text="Your scores").wait_for()
    seen["scores page"][extended] = page.locator("main").inner_text()
    shot(page, "scores-extension")
    page.context.close()
    timings["scores pages"] = time.monotonic() - t3

    t4 = time.monotonic()
    assert book_build.wait(timeout=1200) == 0, (html.parent.parent / "build.log").read_text()[-3000:]
    timings["the HTML book for the hub (in the background)"] = time.monotonic() - t0
    seen["launch"] = launch(pages[full], html, CHAPTER)
    shot(pages[full], "chapter")
    # an instructor's correction reaches a student who edited another cell of the chapter
    mine = "MY NOTE: the rows read the input one detector at a time."
    theirs = hub.home(partly) / COURSE / CHAPTER  # the student's own copy, edited
    lines = theirs.read_text().split("\n")
    at = next(i for i, ln in enumerate(lines) if i > 20 and ln[:1].isalpha())
    lines[at] += f" {mine}"
    theirs.write_text("\n".join(lines))
    course_hub._as_user(partly, theirs)
    fix = "A CORRECTION BY THE INSTRUCTOR, PUBLISHED DURING THE TERM."
    chapter = course / CHAPTER
    chapter.write_text(chapter.read_text().rstrip("\n") + f"\n\n{fix}\n")
    course_hub._as_user(instructor, chapter)
    seen["publish"] = terminal(ipage, f"cd ~/{COURSE} && make publish")
    seen["relaunch"] = launch(pages[partly], html, CHAPTER)
    seen["merged"] = theirs.read_text()
    seen["mine"], seen["fix"] = mine, fix
    pages[partly].evaluate("""(id) => { const w = Array.from(window.jupyterapp.shell.widgets('main'))
      .find(w => w.id === id); const cells = w.content.widgets;
      cells[cells.length - 1].node.scrollIntoView(); }""", seen["relaunch"]["opened"]["id"])
    pages[partly].wait_for_timeout(800)
    shot(pages[partly], "chapter-merged")  # the correction at the chapter's end
    timings["launch links, a chapter run, a correction pulled"] = time.monotonic() - t4

    t2 = time.monotonic()
    seen["views"] = instructor_views(hub, ipage, full)
    timings["the instructor's views of the submission"] = time.monotonic() - t2
    ipage.context.close()
    timings["whole loop"] = time.monotonic() - t0
    print(" | ".join(f"{k}: {v:.0f} s" for k, v in timings.items()))
    return {"hub": hub, "course": course, "pages": pages, "grade_output": graded,
            "attacks": attacks, "seen": seen, "dated": dated, "started": started}


def daemon(uid: int, wait: float = 10) -> list[int]:
    """PIDs of the ``sleep 100007`` a student left running (once it has started)."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        for pid in hub_processes.processes_of({uid}):
            try:
                if psutil.Process(pid).cmdline()[:2] == ["sleep", "100007"]:
                    found.append(pid)
            except psutil.Error:
                continue
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def manual_score(hub, student: str, cell: str = "q6-written") -> float | None:
    """The written answer's score by hand in the instructor's gradebook (read as root)."""
    from tools.grading import gradebook

    with gradebook.opened(f"sqlite:///{hub.course_dir() / 'gradebook.db'}") as gb:
        return gb.find_grade(cell, "exit-test", ASSIGNMENT, student).manual_score


def teaching_assistant(hub, browser, password: str, student: str) -> dict:
    """The teaching assistant: Formgrader in their own lab on the instructor's course (the
    schedule's due date shown), a written answer of ``student`` graded by hand, the feedback
    released from a terminal (nbgrader's command, as Formgrader's button runs it); then, as
    their Unix user, what they may not do: change a solution, the schedule, the course."""
    seen = {}
    page = log_in(browser, hub, TA, password)
    base = hub.user_url(TA)
    status, listed = page.evaluate(FETCH, f"{base}/formgrader/api/assignments")
    assert status == 200, (status, listed[:2000])
    seen["assignments"] = {a["name"]: a for a in json.loads(listed)}
    status, listed = page.evaluate(FETCH, f"{base}/formgrader/api/submitted_notebooks/"
                                          f"{ASSIGNMENT}/exit-test")
    assert status == 200, (status, listed[:2000])
    submission = next(s["id"] for s in json.loads(listed) if s["student"] == student)
    grading = page.context.new_page()
    grading.goto(f"{base}/formgrader/submissions/{submission}/")
    written = grading.locator("input#q6-written")
    written.wait_for()
    grading.wait_for_function(GRADES_BOUND)
    with grading.expect_response(lambda r: "/formgrader/api/grade/" in r.url
                                 and r.request.method == "PUT") as saved:
        written.fill("1")
        written.press("Tab")
    seen["graded"] = saved.value.status
    grading.screenshot(path=str(SHOTS / "hub-ta-grading.png"), full_page=True)
    grading.close()
    seen["manual score"] = manual_score(hub, student)
    course = hub.course_dir()
    seen["released"] = lab_browser.run_in_terminal(  # (status, output): asserted by its test
        page, f"cd '{course}' && nbgrader release_feedback {ASSIGNMENT}", 600)
    attempts = {
        "edit a solution": f"echo x >> '{course}/solutions/{ASSIGNMENT}/exit-test.ipynb'",
        "move the solutions away": f"mv '{course}/solutions' '{course}/mine'",
        "edit the schedule": f"echo x >> '{course}/schedule.yml'",
        "replace the schedule": f"rm -f '{course}/schedule.yml'",
        "grant an extension": f"echo x >> '{course}/extensions.yml'",
        "write in the instructor's home": f"touch '{hub.home(hub.instructor)}/ta-was-here'",
    }
    seen["refused"] = {what: (done.returncode, done.stderr) for what, command in attempts.items()
                       for done in [sh(hub, TA, command)]}
    page.context.close()
    return seen


def instructor_views(hub, page, student: str) -> dict:
    """The instructor opens student's work everywhere it shows; for each view, the markers
    of scripts that ran (none may) and what the page was served with."""
    views = {}
    base = hub.user_url(hub.instructor)  # the instructor's own origin, and their server's path
    assert page.url.startswith(base), page.url

    def ran():
        return sorted(set(page.evaluate(PWNED)) | set(page.context.pwned))

    # Formgrader in its tab, then the manual grading of the student's exit test
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Formgrader$")).first.click()
    frame = page.frame_locator("iframe[src$='/formgrader']")
    frame.get_by_text("Manage Assignments").first.wait_for()
    frame.get_by_text(ASSIGNMENT).first.wait_for()
    shot(page, "formgrader")
    status, listed = page.evaluate(FETCH, f"{base}/formgrader/api/submitted_notebooks/"
                                          f"{ASSIGNMENT}/exit-test")
    assert status == 200, (status, listed[:2000])
    submission = next(s["id"] for s in json.loads(listed) if s["student"] == student)
    grading = page.context.new_page()
    response = grading.goto(f"{base}/formgrader/submissions/{submission}/")
    # Formgrader still works: the instructor changes the TA's score (1) and it is saved
    written = grading.locator("input#q6-written")
    written.wait_for()
    grading.wait_for_function(GRADES_BOUND)
    with grading.expect_response(lambda r: "/formgrader/api/grade/" in r.url
                                 and r.request.method == "PUT") as saved:
        written.fill("0.5")
        written.press("Tab")
    assert saved.value.ok, saved.value.status
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:  # the page's maths typeset by the lab's MathJax (no CDN)
        grading.wait_for_function(MATHS_TYPESET, timeout=60_000)
    except PlaywrightTimeout:
        pass  # asserted by its test, with the count
    grading.screenshot(path=str(SHOTS / "hub-formgrader-submission.png"), full_page=True)
    views["formgrader manual grading"] = {
        "ran": sorted(set(grading.evaluate(PWNED)) | set(page.context.pwned)),
        "policy": response.headers.get("content-security-policy", ""),
        "html": response.text(),
        "maths typeset": grading.evaluate(MATHS_TYPESET),
        "score saved": manual_score(hub, student),
        "written answer shown": "My answer." in grading.inner_text("body")}
    served = grading.goto(f"{base}/formgrader/submissions/{submission}/notes.html")
    grading.wait_for_timeout(1500)
    views["formgrader submission file"] = {
        "ran": sorted(set(grading.evaluate(PWNED)) | set(page.context.pwned)),
        "policy": served.headers.get("content-security-policy", "")}
    grading.close()
    # a Formgrader page takes ids only in its path (nbgrader writes them into its scripts)
    status, _ = page.evaluate(FETCH, f"{base}/formgrader/manage_submissions/"
                                     f"%3Cscript%3E{pwn('url')}%3C%2Fscript%3E")
    views["formgrader page with markup in its path"] = {"ran": ran(), "status": status}
    # the lab: the submitted and the autograded notebook, the feedback and the student's page
    course = f"{COURSE}/"
    for path, factory in [(f"submitted/{student}/{ASSIGNMENT}/exit-test.ipynb", "Notebook"),
                          (f"autograded/{student}/{ASSIGNMENT}/exit-test.ipynb", "Notebook"),
                          (f"feedback/{student}/{ASSIGNMENT}/exit-test.html", "HTML Viewer"),
                          (f"submitted/{student}/{ASSIGNMENT}/notes.html", "HTML Viewer")]:
        widget = page.evaluate(lab_browser.OPEN, [course + path, factory])
        view = {}
        if factory == "HTML Viewer":
            view["sandbox"] = page.evaluate(lab_browser.TRUST_HTML, widget)
        page.wait_for_timeout(1000)
        view["ran"] = ran()
        views[f"lab {path}"] = view
        shot(page, "lab-" + Path(path).name.replace(".", "-"))
    return views


class _Runnable(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found, self.script = [], False

    def handle_starttag(self, tag, attrs):
        self.script = tag == "script"
        for name, value in attrs:
            if "pwned" in (value or "") and (name.startswith("on") or name in ("href", "src")):
                self.found.append(f"<{tag} {name}={value!r}>")

    def handle_data(self, data):
        if self.script and "pwned" in data:
            self.found.append(f"<script>{data}</script>")

    def handle_endtag(self, tag):
        self.script = False


def runnable(page: str) -> list[str]:
    """The student's payloads a page holds where a browser would run them (not as text)."""
    parser = _Runnable()
    parser.feed(page)
    return parser.found


def grades(path: Path) -> dict[tuple[str, str], tuple[float, float]]:
    with path.open() as f:
        return {(r["student_id"], r["assignment"]): (float(r["score"]), float(r["max_score"]))
                for r in csv.DictReader(f)}


def test_students_fetch_their_own_feedback(loop):
    hub = loop["hub"]
    full, partly = hub.student_names[:2]
    scores = grades(loop["course"] / "grades.csv")
    report = (loop["course"] / "autograded" / "grading-report.csv").read_text()
    assert scores[(full, ASSIGNMENT)][0] > scores[(partly, ASSIGNMENT)][0] > 0, (
        scores, report, loop["grade_output"][-3000:])
    for student in (full, partly):
        fetched = sorted((hub.home(student) / FETCHED / "feedback").glob("*/*.html"))
        assert sorted(p.stem for p in fetched) == NOTEBOOKS, (student, fetched)
        for html in fetched:
            text = html.read_text()
            assert "BEGIN HIDDEN TESTS" not in text and "### BEGIN SOLUTION" not in text
            assert pwd.getpwuid(html.stat().st_uid).pw_name == student


def test_nothing_a_student_wrote_runs_in_the_instructors_browser(loop):
    """Item 1: the script-carrying submission opened by the instructor everywhere."""
    views = loop["seen"]["views"]
    for name, view in views.items():
        assert view["ran"] == [], f"{name}: a student's script ran: {view['ran']}"
    grading = views["formgrader manual grading"]
    assert grading["written answer shown"]
    assert grading["maths typeset"] > 0, "Formgrader's page shows its maths as raw TeX"
    assert grading["score saved"] == 0.5
    policy = dict(part.strip().split(" ", 1) for part in grading["policy"].split(";"))
    assert "'unsafe-inline'" not in policy["script-src"] and "'self'" not in policy["script-src"]
    assert "/formgrader/static/" in policy["script-src"]
    assert runnable(grading["html"]) == [], "a student's script reached Formgrader's page"
    assert views["formgrader submission file"]["policy"].startswith("sandbox")
    assert views["formgrader page with markup in its path"]["status"] == 404
    assert loop["seen"]["cross-origin"].startswith("refused"), loop["seen"]["cross-origin"]
    for name, view in views.items():
        if "sandbox" in view:  # "Trust HTML" was pressed: the page's frame may run scripts
            assert "allow-scripts" in view["sandbox"], (name, view)


def test_collect_takes_each_students_own_submission_at_the_servers_time(loop):
    """Items 2 and 3: each attack refused with its reason, the honest work collected."""
    hub, course, seen = loop["hub"], loop["course"], loop["seen"]
    full, partly = hub.student_names[:2]
    with (course / "refused" / f"{ASSIGNMENT}.csv").open() as f:
        refused = {r["entry"]: r["reason"] for r in csv.DictReader(f)}
    expected = {"forged": f"in the share of {full}, named for another student",
                "malformed": "malformed",
                "link": "symbolic link", "oversized": f"over the size limit of {SUBMISSION_MB} MB",
                "fifo": "a FIFO"}
    for entry, attack in loop["attacks"].items():
        assert entry in refused, f"{attack} entry {entry} not refused: {refused}"
        assert expected[attack] in refused[entry], (attack, refused[entry])
        assert f"Refused inbound/{entry}" in seen["collect"], "collect did not say it"
    assert f"{full}/{loop['dated']}" not in refused  # not refused: just older than the real one
    for student in (full, partly):
        stamp = (course / "submitted" / student / ASSIGNMENT / "timestamp.txt").read_text()
        when = calendar.timegm(time.strptime(stamp.split(".")[0], "%Y-%m-%d %H:%M:%S"))
        assert loop["started"] - 5 < when < time.time(), (student, stamp)  # the server's time
    own = json.loads((course / "submitted" / full / ASSIGNMENT / "exit-test.ipynb").read_text())
    assert any("My answer." in "".join(c["source"]) for c in own["cells"])  # not the 2099 one
    theirs = json.loads((course / "submitted" / partly / ASSIGNMENT / "exit-test.ipynb").read_text())
    assert not any("My answer." in "".join(c["source"]) for c in theirs["cells"])  # not forged


def test_the_exchange_is_laid_out_and_bounded(loop):
    """Items 4 and 5: the course's folders are the instructor's, with nbgrader's modes, a
    student's squat is refused (and a squatted folder found by `make hub` moved aside), and
    the exchange's file system stops a student filling the disk."""
    hub, seen = loop["hub"], loop["seen"]
    full = hub.student_names[0]
    code, err = seen["squat"]
    assert code != 0 and "Permission denied" in err, err
    owner = pwd.getpwnam(hub.instructor).pw_uid
    for name, mode in course_exchange.COURSE_MODES.items():
        st = os.lstat(hub.exchange / COURSE / name)
        if name == "feedback":  # the graders' ACL (tools/hub/staff.py): the mode's group
            acl = subprocess.run(["getfacl", "-cp", str(hub.exchange / COURSE / name)],
                                 capture_output=True, text=True, check=True).stdout.split()
            assert {"group::--x", "other::--x", f"group:formgrade-{COURSE}:rwx",
                    "default:group::r--", "default:other::r--"} <= set(acl), acl
            mode, st_mode = mode & ~0o070, st.st_mode & ~0o070  # bits are the ACL's mask
        else:
            st_mode = st.st_mode
        assert (st.st_uid, stat.S_IMODE(st_mode)) == (owner, mode), name
    code, err, size = seen["fill"]
    assert code != 0 and "No space left on device" in err and size < SHARE_MB * 1024**2, err
    full_submit = seen["submit when full"]
    said = full_submit.stdout + full_submit.stderr
    assert full_submit.returncode != 0 and "your share of the exchange is full" in said, said
    assert "Traceback" not in said, said
    assert seen["instructor clears"].returncode == 0, seen["instructor clears"].stderr
    # each entry private to its student and the instructors' group (not nbgrader's 0777)
    submitted = [p.parent for p in inbound(hub, full).glob("*/submission_secret.txt")]
    assert submitted
    for entry in submitted:  # those nbgrader submit made
        assert all(stat.S_IMODE(os.lstat(p).st_mode) & 0o007 == 0
                   for p in [entry, *entry.rglob("*")]), entry
    # a folder a student made before `make hub` laid the exchange out
    root = Path(tempfile.mkdtemp(prefix="memcourse-squat-"))
    try:
        os.chmod(root, 0o1777)
        assert sh(hub, full, f"mkdir -p '{root}/{COURSE}/outbound/{ASSIGNMENT}'").returncode == 0
        moved = course_exchange.lay_out(root, COURSE, hub.instructor)
        assert len(moved) == 1 and f"of {full} (squatted)" in moved[0], moved
        assert not (root / COURSE / "outbound" / ASSIGNMENT).exists()
        assert os.lstat(root / COURSE / "outbound").st_uid == owner
    finally:
        shutil.rmtree(root)


def test_terminals_have_the_course_environment(loop):
    """Item 6: the README's commands ran in the lab's terminals (the loop needed them)."""
    hub = loop["hub"]
    said = loop["seen"]["student terminal"]
    assert f"{hub.venv}/bin/nbgrader" in said and "Submitted as:" in said, said


def test_students_cannot_read_what_is_not_theirs(loop):
    hub, course = loop["hub"], loop["course"]
    full, partly = hub.student_names[:2]
    other = next((hub.home(partly) / FETCHED / "feedback").glob("*/exit-test.html"))
    forbidden = [
        course / "solutions" / ASSIGNMENT / "exit-test.ipynb",
        course / "autograded" / full / ASSIGNMENT / "exit-test.ipynb",
        course / "gradebook.db",
        course / "grades.csv",
        other,
        hub.home(partly) / FETCHED / "exit-test.ipynb",
    ]
    for path in forbidden:
        assert path.exists(), path
        read = as_user(hub, full, ["cat", str(path)])
        assert read.returncode != 0 and "Permission denied" in read.stderr, (path, read.stderr)
    for path in (hub.state / "passwords.json", hub.state / "jupyterhub_cookie_secret",
                 hub.state / "jupyterhub.sqlite"):  # the hub's secrets
        read = as_user(hub, full, ["cat", str(path)])
        assert read.returncode != 0 and "Permission denied" in read.stderr, (path, read.stderr)
    for folder in ("inbound", "feedback", f"inbound/{partly}"):  # nobody lists the others'
        listed = as_user(hub, full, ["ls", str(hub.exchange / "memcourse" / folder)])
        assert listed.returncode != 0 and "Permission denied" in listed.stderr, folder
    # and a student cannot collect, i.e. read what the others submitted
    collect = as_user(hub, full, ["nbgrader", "collect", ASSIGNMENT, "--course", "memcourse"])
    assert not list((hub.home(full) / "submitted").glob(f"{partly}/*")), collect.stdout


def test_grades_equal_grading_the_same_notebooks_from_a_folder(loop, tmp_path):
    """`make grade` on a copy of the course with the collected notebooks, as root."""
    course = loop["course"]
    copy = tmp_path / "course"
    shutil.copytree(course, copy, symlinks=True, ignore=shutil.ignore_patterns(
        "autograded", "feedback", "gradebook.db", "grades.csv"))
    graded = subprocess.run(["make", "grade", f"ASSIGNMENTS={ASSIGNMENT}"], cwd=copy,
                            capture_output=True, text=True, timeout=900, check=False)
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    assert grades(copy / "grades.csv") == grades(course / "grades.csv")
    with (copy / "autograded" / "grading-report.csv").open() as a, \
            (course / "autograded" / "grading-report.csv").open() as b:
        keep = ("student", "assignment", "score", "max_score", "status")
        strip = lambda rows: sorted(tuple(r.get(k) for k in keep) for r in rows)  # noqa: E731
        assert strip(csv.DictReader(a)) == strip(csv.DictReader(b))


# -- a term on the hub -----------------------------------------------------------
def test_validate_on_the_hub_says_what_make_check_says(loop):
    status, text = loop["seen"]["validate"]
    assert status == 200, text[:300]
    answer = json.loads(text)
    assert answer["success"] is True, answer
    said = json.dumps(answer["value"])
    assert "Traceback" not in said and "NameError" not in said, said[:500]


def test_the_first_login_pulls_the_course_without_the_solutions(loop):
    hub = loop["hub"]
    for student, names in loop["seen"]["start"].items():
        assert {"book", "start.md", "exercises"} <= set(names), (student, names)
        assert not {"solutions", "tools", "tests", "gradebook.db"} & set(names), names
        start = (hub.home(student) / COURSE / "start.md").read_text()
        assert f"]({hub.url}/hub/user-redirect/memcourse/scores)" in start  # through the hub


def test_a_chapter_opens_from_the_books_launch_link_and_its_figures_run(loop):
    hub, launched = loop["hub"], loop["seen"]["launch"]
    assert launched["href"].startswith(f"{hub.url}/hub/user-redirect/git-pull?repo=file")
    assert f"urlpath=lab/tree/{COURSE}/{CHAPTER}" in launched["href"]
    assert launched["opened"]["factory"] == "Jupytext Notebook"
    assert launched["errors"] == [], launched["errors"]
    assert launched["figures"] and all(f["image"] and f["natural"] > 0 for f in launched["figures"]), launched


def test_a_correction_reaches_the_student_without_losing_their_edit(loop):
    seen = loop["seen"]
    assert "published" in seen["publish"], seen["publish"][-500:]
    assert seen["mine"] in seen["merged"] and seen["fix"] in seen["merged"]
    assert seen["relaunch"]["errors"] == []


def test_a_late_submission_is_penalised_as_configured(loop):
    full, partly = loop["hub"].student_names[:2]
    with (loop["course"] / "grades.csv").open() as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f) if r["assignment"] == ASSIGNMENT}
    assert rows[full]["duedate"] == loop["seen"]["due"]
    assert float(rows[full]["late_submission_penalty"] or 0) == 0
    raw, penalty = float(rows[partly]["raw_score"]), float(rows[partly]["late_submission_penalty"])
    assert raw > 0 and penalty == pytest.approx(0.10 * raw, abs=0.01)  # 10 % for a day begun
    assert float(rows[partly]["score"]) == pytest.approx(raw - penalty)
    assert "Late submissions" in loop["grade_output"]
    assert re.search(rf"{ASSIGNMENT} {partly}: [0-9dhmin ]+ late \(1 day begun\)", loop["grade_output"])


def test_the_lms_exports_parse_with_the_documented_columns_and_the_grades(loop):
    full, partly = loop["hub"].student_names[:2]
    scores = grades(loop["course"] / "grades.csv")
    with (loop["course"] / "canvas-grades.csv").open() as f:
        canvas = list(csv.reader(f))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "session-3 (31)"]
    assert canvas[1][0].strip() == "Points Possible"
    by_login = {r[3]: float(r[5]) for r in canvas[2:]}
    with (loop["course"] / "moodle-grades.csv").open() as f:
        moodle = list(csv.reader(f))
    assert moodle[0] == ["First name", "Last name", "ID number", "Institution", "Department",
                         "Email address", ASSIGNMENT]
    by_mail = {r[5]: float(r[6]) for r in moodle[1:]}
    for student in (full, partly):
        score = scores[(student, ASSIGNMENT)][0]
        assert by_login[student] == pytest.approx(score, abs=0.01)
        assert by_mail[f"{student}@uni.example"] == pytest.approx(score, abs=0.01)


def test_the_similarity_page_is_the_instructors_alone(loop):
    hub = loop["hub"]
    page = loop["course"] / "autograded" / "_similarity" / f"{ASSIGNMENT}.html"
    assert page.is_file() and "Similar answers" in loop["grade_output"]
    assert f"{ASSIGNMENT}:" in loop["grade_output"].split("Similar answers", 1)[1]
    for student in hub.student_names:
        assert sh(hub, student, f"cat '{page}'").returncode != 0


def test_a_student_sees_every_sessions_score_and_penalty(loop):
    full, partly = loop["hub"].student_names[:2]
    scores = grades(loop["course"] / "grades.csv")
    shown = loop["seen"]["scores page"]
    for student in (full, partly):
        score, top = scores[(student, ASSIGNMENT)]
        assert ASSIGNMENT in shown[student] and f"{score:g} / {top:g}" in shown[student], shown
    assert "none" in shown[full].split("\n")[1] and "\u2212" in shown[partly]


# -- a term as a real course runs it: staff, extensions, the due date in one place ------
def test_a_teaching_assistant_grades_and_releases_feedback_but_cannot_change_the_course(loop):
    hub, ta = loop["hub"], loop["seen"]["ta"]
    assert ta["graded"] == 200 and ta["manual score"] == 1.0  # in the instructor's gradebook
    status, said = ta["released"]
    assert status == 0 and "feedback" in said.lower(), said  # nbgrader's release_feedback, as the TA
    for student, listed in loop["seen"]["listed"].items():  # each reads what the TA released
        assert listed.returncode == 0 and "feedback ready to be fetched" in listed.stderr, (
            student, listed.stderr[-2000:])
    for student in hub.student_names[:2]:  # the feedback the TA released reached the students
        assert list((hub.home(student) / FETCHED / "feedback").glob("*/exit-test.html")), student
    for what, (code, err) in ta["refused"].items():
        assert code != 0 and ("Permission denied" in err or "Operation not permitted" in err), (what, err)
    course = loop["course"]
    assert (course / "solutions" / ASSIGNMENT / "exit-test.ipynb").is_file()
    assert (course / "schedule.yml").read_text().startswith("timezone: UTC")
    assert not (hub.home(hub.instructor) / "ta-was-here").exists()


def test_formgrader_shows_the_schedules_due_date_before_grading(loop):
    """`make publish` put the due date in the gradebook; the TA's Formgrader read it."""
    seen = loop["seen"]
    assert "the due dates are in the gradebook" in seen["schedule published"]
    shown = seen["ta"]["assignments"][ASSIGNMENT]["duedate_notimezone"]
    assert shown == seen["due"].replace(" ", "T"), shown


def test_a_student_with_an_extension_handing_in_after_the_class_is_not_penalised(loop):
    hub, course = loop["hub"], loop["course"]
    extended = hub.student_names[2]
    with (course / "grades.csv").open() as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f) if r["assignment"] == ASSIGNMENT}
    row = rows[extended]
    assert row["timestamp"] > loop["seen"]["due"]  # handed in after the class's date
    assert float(row["raw_score"]) > 0 and float(row["late_submission_penalty"] or 0) == 0
    with (course / "autograded" / "grading-report.csv").open() as f:
        report = {r["student"]: r for r in csv.DictReader(f) if r["assignment"] == ASSIGNMENT}
    assert report[extended]["late"] == "on time (extended due date)", report[extended]
    assert f"{ASSIGNMENT} {extended}: due " in loop["grade_output"]
    page = loop["seen"]["scores page"][extended]
    assert "Your extensions" in page and f"{ASSIGNMENT}: due " in page, page


def test_the_scores_page_and_the_hub_home_lead_back_to_the_course(loop):
    seen = loop["seen"]
    page = seen["scores page html"]
    assert "Back to the lab" in page and "<svg" in page and "the course" in page
    assert "<script" not in page
    home = seen["hub home"]
    assert "Transformers as memory" in home and "Your scores" in home and "start page" in home


def test_hub_stop_leaves_no_process_of_a_hub_user(loop):
    """Item 7 (last: it stops the hub): a daemon left in student1's terminal is ended, the
    files student1 left in /tmp, /dev/shm and /run/lock removed, the homes unmounted and
    the users' cgroups removed."""
    hub = loop["hub"]
    full = hub.student_names[0]
    left = loop["seen"]["daemon"]
    assert left and daemon(pwd.getpwnam(hub.student_names[0]).pw_uid, 0) == left, (
        "the daemon did not start, or did not outlive its terminal")
    planted = [Path(f"/tmp/{full}-left"), Path(f"/dev/shm/{full}-left"),
               Path(f"/run/lock/{full}-left")]
    assert all(sh(hub, full, f"mkdir -p '{p}/in' && touch '{p}/in/file'").returncode == 0
               for p in planted)
    assert limits.members(full)  # its server and what it started, in its cgroup
    servers = hub_api.server_pids(hub.state)  # as the stop asks the hub for them
    assert set(servers) & set(limits.members(full)), (servers, limits.members(full))
    course_hub.stop(hub)
    uids = {pwd.getpwnam(u).pw_uid for u in [hub.instructor] + hub.tas + hub.student_names}
    assert hub_processes.processes_of(uids) == []
    assert not any(psutil.pid_exists(pid) for pid in servers), servers
    assert hub_api.server_pids(hub.state) == []  # a stopped hub answers nothing
    assert not course_exchange.mounted(hub.exchange)
    assert not any(p.exists() for p in planted), planted
    for user in hub.student_names:
        assert not limits.mounted(hub.home(user)), user
        assert not any(g.exists() for g in limits.groups(user)), user
