"""The course hub in one-Unix-user mode (``make hub ONE_UNIX_USER=1``), as on Kubernetes:
every student's nbgrader runs as the one Unix user ``mco-pod``, in their own pod home, and
the exchange is the course's service behind the hub (tools/hub/hub_exchange.py), which
knows each caller from their hub API token.

One hub for the module (tools/hub/local.py's install and start, as `make hub` runs them, with
users of its own, its own state folder, a free port of 127.0.0.1; the users' environment,
lab files and proxy shared with `make hub`), stopped by PID at the end. nbgrader runs as
the users, from the users' environment, with each user's own token (asked for with their
password). The instructor releases session 3; three students fetch and submit; then the
exchange attacks with one Unix user: a student reads a classmate's
submission or feedback, hands in under their name, backdates an entry, fills the exchange;
the instructor collects, grades with the course's grader and releases feedback, which each
student fetches, their own only. Last, the hub spawns one student's server: its Unix user,
home, view of the machine, token, Assignments tab and scores page are checked.
"""

from __future__ import annotations

import base64
import csv
import datetime
import json
import os
import pwd
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest

from support.hub import own_hub
from support.hub_users import hub_token, run_as
from tools.common.ports import free_port
from tools.hub import hub_api
from tools.hub import local as course_hub
from tools.hub.limits import Limits

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "session-3"
SUBMISSION_MB, SHARE_MB = 1, 2


@pytest.fixture(scope="module")
def hub():
    port = free_port()
    with own_hub("memcourse-onehub-", users="mco-", students=3, port=free_port(),
                 exchange_mb=0, submission_mb=SUBMISSION_MB, share_mb=SHARE_MB,
                 limits=Limits(home_mb=0), one_user=True,
                 extra_env={"MEMCOURSE_HUB_EXCHANGE_PORT": str(port)}) as hub:
        passwords = course_hub.install(hub)  # as make hub ONE_UNIX_USER=1
        course_hub.start(hub)
        url = f"http://127.0.0.1:{port}/services/exchange/"
        tokens = {user: hub_token(hub.url, user, passwords[user])
                  for user in [hub.instructor] + hub.student_names}
        yield hub, url, tokens


def nbgrader(hub, url, tokens, user: str, args: list[str], token_of: str | None = None):
    """``nbgrader *args`` as the hub's ``user``: a student as the one Unix user in their pod
    home, the instructor as themselves in the course folder; ``token_of``: whose token."""
    env = {"MEMCOURSE_EXCHANGE_URL": url, "JUPYTERHUB_API_TOKEN": tokens[token_of or user],
           "JUPYTERHUB_USER": user}
    bin_dir = hub.venv / "bin"
    if user == hub.instructor:
        return run_as(user, [str(bin_dir / "nbgrader"), *args], hub.home(user), bin_dir,
                      hub.course_dir(), cwd=hub.course_dir(), env=env)
    return run_as(hub.pod_user, [str(bin_dir / "nbgrader"), *args], hub.pod_home(user),
                  bin_dir, hub.lab, env=env)


def api(url: str, token: str | None, method: str, path: str, body=None):
    """(status, JSON) of a request to the exchange service, as a student's script makes it."""
    request = urllib.request.Request(
        url + "api/" + path, method=method, data=json.dumps(body).encode() if body else None,
        headers={"Authorization": f"token {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        text = exc.read()
        try:
            return exc.code, json.loads(text)
        except ValueError:
            return exc.code, text.decode(errors="replace")


def ok(done) -> str:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def loop(hub):
    hub, url, tokens = hub
    one, two, three = hub.student_names
    seen = {}
    ok(nbgrader(hub, url, tokens, hub.instructor, ["release_assignment", ASSIGNMENT]))
    # a student cannot release (or withdraw) an assignment
    seen["student release"] = api(url, tokens[one], "POST", f"assignments/{ASSIGNMENT}?force=1",
                                  {"files": {"x.ipynb": base64.b64encode(b"{}").decode()}})
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    for student in (one, two, three):
        ok(nbgrader(hub, url, tokens, student, ["fetch_assignment", ASSIGNMENT]))
        fetched = hub.pod_home(student) / "memcourse" / "exercises" / ASSIGNMENT
        (fetched / "answer.txt").write_text(f"the work of {student}\n")
        subprocess.run(["chown", "-R", f"{hub.pod_user}:", str(fetched)], check=True)
        seen[f"submit {student}"] = ok(nbgrader(hub, url, tokens, student, ["submit", ASSIGNMENT]))
    # the attacks, by student1, running as the Unix user every student's server runs as
    seen["submit as two"] = nbgrader(hub, url, tokens, one, ["submit", ASSIGNMENT, "--student", two])
    seen["forged name"] = api(url, tokens[one], "POST", f"submissions/{ASSIGNMENT}",
                              {"student_id": two, "files": {
                                  "answer.txt": base64.b64encode(b"forged by one").decode()}})
    seen["backdated"] = api(url, tokens[one], "POST", f"submissions/{ASSIGNMENT}",
                            {"timestamp": "2001-01-01 00:00:00.000000 UTC", "files": {
                                "answer.txt": base64.b64encode(b"dated 2001").decode()}})
    seen["list as one"] = api(url, tokens[one], "GET", f"submissions?student={two}")
    theirs = api(url, tokens[two], "GET", "submissions")[1][0]
    seen["read two's"] = api(url, tokens[one], "GET",
                             f"submissions/{ASSIGNMENT}/{two}/{theirs['id']}")
    seen["no token"] = api(url, None, "GET", "submissions")
    seen["bad token"] = api(url, "not-a-token", "GET", "submissions")
    seen["pod reads the store"] = run_as(hub.pod_user, ["ls", str(hub.state / "exchange-service")],
                                         hub.home(hub.pod_user), hub.venv / "bin", hub.lab)
    seen["inbound listed by one"] = nbgrader(hub, url, tokens, one, ["list", "--inbound"])
    # student3 fills their share: refused with the reason, student2 still hands in
    fill = []
    for size in (900_000, 10_000):  # large pieces, then small ones, each until refused
        chunk = {"files": {"big.bin": base64.b64encode(os.urandom(size)).decode()}}
        while len(fill) < 300:
            fill.append(api(url, tokens[three], "POST", f"submissions/{ASSIGNMENT}", chunk)[0])
            if fill[-1] != 200:
                break
    seen["fill"] = fill
    seen["submit when full"] = nbgrader(hub, url, tokens, three, ["submit", ASSIGNMENT])
    seen["two after"] = nbgrader(hub, url, tokens, two, ["submit", ASSIGNMENT])
    ok(nbgrader(hub, url, tokens, one, ["submit", ASSIGNMENT]))  # their work, newest again
    seen["before"], seen["after"] = before, datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)

    # the instructor collects, grades with the course's grader, releases the feedback
    seen["collect"] = ok(nbgrader(hub, url, tokens, hub.instructor, ["collect", ASSIGNMENT]))
    graded = run_as(hub.instructor, [str(hub.venv / "bin" / "python"), "-m", "tools.grading",
                                     ASSIGNMENT, "--jobs", "1"], hub.home(hub.instructor),
                    hub.venv / "bin",
                    hub.course_dir(), cwd=hub.course_dir(),
                    env={"MEMCOURSE_EXCHANGE_URL": url}, timeout=1200)
    seen["grade"] = ok(graded)
    seen["release feedback"] = ok(nbgrader(hub, url, tokens, hub.instructor,
                                           ["release_feedback", ASSIGNMENT]))
    for student in (one, two, three):
        seen[f"fetch feedback {student}"] = ok(nbgrader(hub, url, tokens, student,
                                                        ["fetch_feedback", ASSIGNMENT]))
    seen["two's feedback read by one"] = api(url, tokens[one], "GET", f"feedback/{ASSIGNMENT}/{two}")
    seen["tokens"], seen["url"] = tokens, url
    return hub, seen


def test_a_student_can_neither_release_nor_read_a_classmates_submission(loop):
    hub, seen = loop
    one, two = hub.student_names[:2]
    assert seen["student release"][0] == 403
    status, listed = seen["list as one"]
    assert status == 200 and listed and {s["student_id"] for s in listed} == {one}
    assert seen["read two's"][0] == 403
    assert seen["two's feedback read by one"][0] == 403
    assert seen["no token"][0] == 403 and seen["bad token"][0] == 403
    pod = seen["pod reads the store"]
    assert pod.returncode != 0 and "Permission denied" in pod.stderr
    listed = ok(seen["inbound listed by one"])
    assert f"memcourse {one} {ASSIGNMENT}" in listed and two not in listed, listed


def test_a_student_hands_in_under_their_own_name_only(loop):
    hub, seen = loop
    one, two = hub.student_names[:2]
    refused = seen["submit as two"]
    assert refused.returncode != 0 and "You hand in as yourself" in refused.stdout + refused.stderr
    status, entry = seen["forged name"]
    assert status == 200 and entry["student_id"] == one  # the name in the body is ignored
    collected = hub.course_dir() / "submitted" / two / ASSIGNMENT / "answer.txt"
    assert collected.read_text() == f"the work of {two}\n"


def test_an_entrys_time_is_the_services_clock(loop):
    hub, seen = loop
    status, entry = seen["backdated"]
    when = datetime.datetime.strptime(entry["timestamp"], "%Y-%m-%d %H:%M:%S.%f UTC")
    assert status == 200 and seen["before"] <= when <= seen["after"]
    for student in hub.student_names:
        stamp = (hub.course_dir() / "submitted" / student / ASSIGNMENT / "timestamp.txt").read_text()
        collected = datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f UTC")
        assert seen["before"] <= collected <= seen["after"], (student, stamp)


def test_a_full_share_stops_its_student_only(loop):
    hub, seen = loop
    fill = seen["fill"]
    assert fill[0] == 200 and fill[-1] == 507 and fill.count(507) == 2, fill
    full = seen["submit when full"]
    assert full.returncode != 0 and "your share of the exchange is full" in full.stdout + full.stderr
    assert seen["two after"].returncode == 0, seen["two after"].stderr


def test_the_instructor_collects_grades_and_each_student_fetches_their_own_feedback(loop):
    hub, seen = loop
    course = hub.course_dir()
    honest = hub.student_names[:2]  # student3's newest entry is the last piece that filled it
    for student in honest:
        assert (course / "submitted" / student / ASSIGNMENT / "exit-test.ipynb").is_file()
    with open(course / "grades.csv") as f:
        graded = {row["student_id"] for row in csv.DictReader(f)}
    assert set(honest) <= graded, graded
    for student in honest:
        got = list((hub.pod_home(student) / "memcourse" / "exercises" / ASSIGNMENT / "feedback")
                   .rglob("exit-test.html"))
        assert len(got) == 1, (student, got)
        stamp = (course / "submitted" / student / ASSIGNMENT / "timestamp.txt").read_text()
        assert got[0].parent.name == stamp


def server_process(user: str) -> int:
    """The PID of ``user``'s jupyterhub-singleuser (inside its bubblewrap)."""
    for process in psutil.process_iter(["cmdline"]):
        command = process.info["cmdline"] or []
        if any("jupyterhub-singleuser" in part for part in command) and command[:1] != ["bwrap"]:
            try:
                if process.environ().get("JUPYTERHUB_USER") == user:
                    return process.pid
            except psutil.Error:
                continue
    raise AssertionError(f"no server of {user} running")


def test_a_students_server_runs_as_the_one_user_and_its_token_reaches_only_their_own(loop):
    """The hub spawns student1's server: it runs as the one Unix user in the student's pod
    home, sees no classmate's home and no process but its own, and the token the hub gives
    it calls the exchange as student1, and only so."""
    import requests

    hub, seen = loop
    one = hub.student_names[0]
    admin = {"Authorization": f"token {seen['tokens'][hub.instructor]}"}
    started = requests.post(f"{hub.url}/hub/api/users/{one}/server", headers=admin, timeout=60)
    assert started.status_code in (201, 202), started.text
    try:
        deadline = time.monotonic() + 240
        while not requests.get(f"{hub.url}/hub/api/users/{one}", headers=admin,
                               timeout=60).json()["servers"].get("", {}).get("ready"):
            assert time.monotonic() < deadline, "the server never got ready"
            time.sleep(1)
        pid = server_process(one)
        named = hub_api.server_pids(hub.state)  # what make hub-stop would end
        ancestors = {pid} | {parent.pid for parent in psutil.Process(pid).parents()}
        uid = psutil.Process(pid).uids().real
        environ = psutil.Process(pid).environ()
        seen_homes = os.listdir(f"/proc/{pid}/root{hub.home(hub.pod_user)}")  # as the server sees
        seen_pids = {int(p) for p in os.listdir(f"/proc/{pid}/root/proc") if p.isdigit()}
        own = api(seen["url"], environ["JUPYTERHUB_API_TOKEN"], "GET", "submissions")
        theirs = api(seen["url"], environ["JUPYTERHUB_API_TOKEN"], "GET",
                     f"feedback/{ASSIGNMENT}/{hub.student_names[1]}")
        # the lab's Assignments tab and the scores page, asked of the server as the lab asks
        lab = {"Host": f"{one}.localhost:{hub.port}", "Authorization": f"token {seen['tokens'][one]}"}
        base = f"http://127.0.0.1:{hub.port}/user/{one}"
        listed = requests.get(f"{base}/assignments", params={"course_id": "memcourse"},
                              headers=lab, timeout=120).json()
        page = requests.get(f"{base}/memcourse/scores", headers=lab, timeout=120).text
    finally:
        requests.delete(f"{hub.url}/hub/api/users/{one}/server", headers=admin, timeout=60)
    assert uid == pwd.getpwnam(hub.pod_user).pw_uid
    assert len(named) == 1 and named[0] in ancestors, (named, ancestors)  # its bubblewrap
    assert seen_homes == [one], seen_homes  # the classmates' pod homes are not there
    assert os.getpid() not in seen_pids and len(seen_pids) < 50, seen_pids  # its own /proc
    assert environ["HOME"] == str(hub.pod_home(one)) and environ["USER"] == hub.pod_user
    assert environ["MEMCOURSE_EXCHANGE_URL"] == seen["url"]
    assert own[0] == 200 and {s["student_id"] for s in own[1]} == {one}
    assert theirs[0] == 403
    assert listed["success"], listed
    statuses = [(a["assignment_id"], a["status"]) for a in listed["value"]]
    assert statuses == [(ASSIGNMENT, "fetched"), (ASSIGNMENT, "submitted")], statuses
    handed = listed["value"][1]["submissions"]
    assert handed and {s["student_id"] for s in handed} == {one}
    assert any(s["has_local_feedback"] for s in handed)  # the feedback fetched before
    assert ASSIGNMENT in page and "Your scores" in page, page[-2000:]
