"""Issue 15: the course on a real JupyterHub, the whole assignment loop end to end.

The ``hub`` fixture does what `make hub` does (tools/hub/local.py), with users of its own
(``mct-instructor``, ``mct-student1``, ``mct-student2``, removed at the end), its own
exchange and hub state in a temporary folder, and a free port of 127.0.0.1; the users'
environment (/srv/memcourse/venv) and the proxy are the shared ones `make hub` installs
(made on the first run, a few minutes; then checked in a second). It stops the hub, and
whatever the hub left, by PID.

The loop: the instructor releases session 3 (``nbgrader release_assignment`` as that Unix
user); two students log in through the hub's login page in headless Chromium, open the
*Assignments* tab (menu Nbgrader), fetch session 3, answer (student1 every question with
the solution's answer, student2 the first half), save and submit there; the instructor
collects, grades with ``make grade`` in the course folder and releases the feedback
(``nbgrader release_feedback``); each student fetches their own feedback in the
Assignments tab. Then, as the students' Unix users: nobody reads another's feedback or
the instructor's solutions, autograded notebooks or gradebook. The grades equal those of
`make grade` run on a copy of the collected notebooks. Last, the instructor logs in and
Formgrader shows in its tab. Screenshots: _build/screenshots/hub-*.png; the grading log,
submissions and feedback of the last run: _build/hub-test/.
"""

from __future__ import annotations

import csv
import json
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tools.hub import local as course_hub
from tools.lab import browser as lab_browser

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "_build" / "screenshots"
KEPT = ROOT / "_build" / "hub-test"  # the grading log, submissions, feedback of the last run
ASSIGNMENT = "session-3"
COURSE = "memcourse"  # fetched into ~/memcourse/session-3, beside ~/book
NOTEBOOKS = ["exercises", "exit-test"]
WAIT = 180_000  # ms: a single-user server starting on a loaded 2-core machine


def remove_user(name: str) -> None:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return
    subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)


def as_user(hub, user: str, argv: list[str], cwd: Path | None = None, timeout: float = 600):
    """Run a command as that Unix user, with a clean environment (the users' venv first)."""
    home = hub.home(user)
    env = ["env", "-i", f"HOME={home}", f"USER={user}", f"LOGNAME={user}", "LANG=C.UTF-8",
           f"PATH={hub.venv}/bin:/usr/local/bin:/usr/bin:/bin"]
    return subprocess.run(["runuser", "-u", user, "--", *env, *argv], cwd=cwd or home,
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def hub():
    assert os.geteuid() == 0, "the hub test creates Unix users: run the tests as root"
    base = Path(tempfile.mkdtemp(prefix="memcourse-hubtest-"))
    os.chmod(base, 0o755)  # the users reach the exchange inside it
    hub = course_hub.Hub(state=base / "state", exchange=base / "exchange", users="mct-",
                         students=2, port=course_hub.free_port(),
                         extra_env={"MEMCOURSE_HUB_EXPOSE_APP": "1"})
    users = [hub.instructor] + hub.student_names
    for user in users:  # left by a run that was killed before its teardown
        remove_user(user)
    started = time.monotonic()
    passwords = course_hub.install(hub)
    print(f"\ninstalled in {time.monotonic() - started:.0f} s")
    try:
        course_hub.start(hub)
        print(f"hub ready after {time.monotonic() - started:.0f} s")
        yield hub, passwords
    finally:
        course_hub.stop(hub)
        left = {u: subprocess.run(["pgrep", "-u", u], capture_output=True, text=True).stdout.split()
                for u in users}
        for user in users:
            remove_user(user)
        shutil.rmtree(base, ignore_errors=True)
        assert not any(left.values()), f"processes left running after the hub stopped: {left}"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = lab_browser.launch_browser(playwright)
        yield browser
        browser.close()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"hub-{name}.png"))


def answers(part: float) -> dict[str, dict[str, str]]:
    """grade id -> the solution's answer (markers removed), per notebook; ``part`` of them."""
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
    return out


ANSWER = """async ([path, answers]) => {
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
  await widget.context.save();
  await widget.sessionContext.shutdown();
  if (widget.context.model.dirty) await widget.context.save();  // a late kernel-info change
  const dirty = widget.context.model.dirty;
  widget.dispose();
  return {changed, dirty};
}"""


def log_in(browser, hub, user: str, password: str):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
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


@pytest.fixture(scope="module")
def loop(hub, browser):
    """The whole loop; returns what the checks need."""
    hub, passwords = hub
    instructor, (full, partly) = hub.instructor, hub.student_names
    course = hub.course_dir()
    timings = {}
    t0 = time.monotonic()

    released = as_user(hub, instructor, ["nbgrader", "release_assignment", ASSIGNMENT], course)
    assert released.returncode == 0, released.stdout + released.stderr
    assert (hub.exchange / "memcourse" / "outbound" / ASSIGNMENT / "exit-test.ipynb").exists()

    pages = {}
    for student, part in ((full, 1.0), (partly, 0.5)):
        page = pages[student] = log_in(browser, hub, student, passwords[student])
        open_assignments(page)
        fetch = row(page, "released_assignments_list")
        fetch.locator("button", has_text="Fetch").wait_for()
        if student == full:
            shot(page, "released")
        fetch.locator("button", has_text="Fetch").click()
        fetched = row(page, "fetched_assignments_list")
        fetched.locator("button", has_text="Submit").wait_for()
        # the notebook's links to the chapters open the student's own copy of the book
        notebook = hub.home(student) / COURSE / ASSIGNMENT / "exit-test.ipynb"
        links = re.findall(r"\]\((\.\./\.\./book/[^)#]+)", notebook.read_text())
        assert links, "no chapter links in the fetched exit test"
        assert all((notebook.parent / link).is_file() for link in links), links
        for name, given in answers(part).items():
            done = page.evaluate(ANSWER, [f"{COURSE}/{ASSIGNMENT}/{name}.ipynb", given])
            assert done == {"changed": len(given), "dirty": False}, (student, name, done)
            saved = json.loads((hub.home(student) / COURSE / ASSIGNMENT / f"{name}.ipynb")
                               .read_text())
            on_disk = {c["metadata"].get("nbgrader", {}).get("grade_id"): "".join(c["source"])
                       for c in saved["cells"]}
            assert all(on_disk.get(gid) == answer for gid, answer in given.items()), (
                student, name, "answers not saved")
        open_assignments(page)
        row(page, "fetched_assignments_list").locator("button", has_text="Submit").click()
        wait_text(page.locator("#submitted_assignments_list"), ASSIGNMENT)
        if student == full:
            shot(page, "submitted")
    timings["students fetched, answered, submitted"] = time.monotonic() - t0

    collected = as_user(hub, instructor, ["nbgrader", "collect", ASSIGNMENT], course)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    for student in (full, partly):
        for name in NOTEBOOKS:
            assert (course / "submitted" / student / ASSIGNMENT / f"{name}.ipynb").exists()

    t1 = time.monotonic()
    graded = as_user(hub, instructor, ["make", "grade", f"ASSIGNMENTS={ASSIGNMENT}"], course,
                     timeout=900)
    KEPT.mkdir(parents=True, exist_ok=True)  # what grading said, kept for a person to read
    (KEPT / "make-grade.log").write_text(graded.stdout + graded.stderr)
    for name in ("submitted", "autograded", "feedback"):
        shutil.rmtree(KEPT / name, ignore_errors=True)
        if (course / name).is_dir():
            shutil.copytree(course / name, KEPT / name)
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    timings["make grade on the hub"] = time.monotonic() - t1
    released_fb = as_user(hub, instructor, ["nbgrader", "release_feedback", ASSIGNMENT], course)
    assert released_fb.returncode == 0, released_fb.stdout + released_fb.stderr

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
    # the instructor's lab: Formgrader in its tab (framed by the same server)
    page = log_in(browser, hub, instructor, passwords[instructor])
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Formgrader$")).first.click()
    frame = page.frame_locator("iframe[src$='/formgrader']")
    frame.get_by_text("Manage Assignments").first.wait_for()
    frame.get_by_text(ASSIGNMENT).first.wait_for()
    shot(page, "formgrader")
    page.context.close()
    timings["whole loop"] = time.monotonic() - t0
    print(" | ".join(f"{k}: {v:.0f} s" for k, v in timings.items()))
    return {"hub": hub, "course": course, "pages": pages, "grade_output": graded.stdout}


def grades(path: Path) -> dict[tuple[str, str], tuple[float, float]]:
    with path.open() as f:
        return {(r["student_id"], r["assignment"]): (float(r["score"]), float(r["max_score"]))
                for r in csv.DictReader(f)}


def test_students_fetch_their_own_feedback(loop):
    hub = loop["hub"]
    full, partly = hub.student_names
    scores = grades(loop["course"] / "grades.csv")
    report = (loop["course"] / "autograded" / "grading-report.csv").read_text()
    assert scores[(full, ASSIGNMENT)][0] > scores[(partly, ASSIGNMENT)][0] > 0, (
        scores, report, loop["grade_output"][-3000:])
    for student in (full, partly):
        fetched = sorted((hub.home(student) / COURSE / ASSIGNMENT / "feedback").glob("*/*.html"))
        assert sorted(p.stem for p in fetched) == NOTEBOOKS, (student, fetched)
        for html in fetched:
            text = html.read_text()
            assert "BEGIN HIDDEN TESTS" not in text and "### BEGIN SOLUTION" not in text
            assert pwd.getpwuid(html.stat().st_uid).pw_name == student


def test_students_cannot_read_what_is_not_theirs(loop):
    hub, course = loop["hub"], loop["course"]
    full, partly = hub.student_names
    other = next((hub.home(partly) / COURSE / ASSIGNMENT / "feedback").glob("*/exit-test.html"))
    forbidden = [
        course / "solutions" / ASSIGNMENT / "exit-test.ipynb",
        course / "autograded" / full / ASSIGNMENT / "exit-test.ipynb",
        course / "gradebook.db",
        course / "grades.csv",
        other,
        hub.home(partly) / COURSE / ASSIGNMENT / "exit-test.ipynb",
    ]
    for path in forbidden:
        assert path.exists(), path
        read = as_user(hub, full, ["cat", str(path)])
        assert read.returncode != 0 and "Permission denied" in read.stderr, (path, read.stderr)
    for path in (hub.state / "passwords.json", hub.state / "jupyterhub_cookie_secret",
                 hub.state / "jupyterhub.sqlite"):  # the hub's secrets
        read = as_user(hub, full, ["cat", str(path)])
        assert read.returncode != 0 and "Permission denied" in read.stderr, (path, read.stderr)
    for folder in ("inbound", "feedback"):  # the exchange: nobody lists the others' files
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
