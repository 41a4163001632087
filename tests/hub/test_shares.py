"""The exchange's shares (tools/hub/shares.py, tools/hub/exchange.py) as `make hub` lays
them out, without starting the hub: real Unix users run nbgrader from the users'
environment with the course's plugins, as in their lab's terminal.

Two students fetch and submit; one fills their share: their submit says so in a sentence,
the classmate's goes through, the instructor removes what filled it, and collects both.
Nobody writes in the exchange's root, in inbound or in a classmate's share; an entry is
private to its student and the instructors; a submission in another's name is refused;
``clear`` empties the exchange for a new term.
"""

from __future__ import annotations

import os
import stat
import subprocess

import pytest

from support.hub import own_hub
from tools.hub import local, shares
from tools.hub.limits import Limits

ASSIGNMENT = "session-3"
SHARE_MB = 3


@pytest.fixture(scope="module")
def hub():
    with own_hub("memcourse-shares-", users="mcs-", students=2, exchange_mb=32,
                 share_mb=SHARE_MB, submission_mb=1, limits=Limits(home_mb=0)) as hub:
        local.ensure_lab(hub)  # the plugins the students' nbgrader imports
        local.ensure_users(hub)
        local.ensure_exchange(hub)
        yield hub


def run(hub, user: str, command: str) -> subprocess.CompletedProcess:
    """A shell command as that user, with the environment the hub gives its server."""
    home = hub.home(user)
    env = ["env", "-i", f"HOME={home}", f"USER={user}", "LANG=C.UTF-8",
           f"PATH={hub.venv}/bin:/usr/bin:/bin", f"PYTHONPATH={hub.lab}"]
    cwd = hub.course_dir() if user == hub.instructor else home
    return subprocess.run(["runuser", "-u", user, "--", *env, "bash", "-c", command], cwd=cwd,
                          capture_output=True, text=True, timeout=300, check=False)


def said(done: subprocess.CompletedProcess) -> str:
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def handed_in(hub):
    released = run(hub, hub.instructor, f"nbgrader release_assignment {ASSIGNMENT}")
    assert released.returncode == 0, said(released)
    for student in hub.student_names:
        fetched = run(hub, student, f"nbgrader fetch_assignment {ASSIGNMENT}")
        assert fetched.returncode == 0, said(fetched)
        submitted = run(hub, student, f"nbgrader submit {ASSIGNMENT}")
        assert submitted.returncode == 0, said(submitted)
    return hub


def test_nobody_writes_where_another_hands_in(handed_in):
    hub = handed_in
    one, two = hub.student_names
    inbound = hub.exchange / "memcourse" / "inbound"
    for where in (hub.exchange, inbound, inbound / two, hub.exchange / "memcourse" / "outbound"):
        done = run(hub, one, f"touch '{where}/planted'")
        assert done.returncode != 0 and "Permission denied" in done.stderr, where
    entry = next((inbound / one).glob(f"{one}+{ASSIGNMENT}+*"))
    modes = {stat.S_IMODE(os.lstat(p).st_mode) for p in [entry, *entry.rglob("*")]}
    assert all(m & 0o007 == 0 for m in modes), sorted(map(oct, modes))  # not nbgrader's 0777
    read = run(hub, two, f"cat '{entry}/exit-test.ipynb'")
    assert read.returncode != 0 and "Permission denied" in read.stderr
    forged = run(hub, one, f"nbgrader submit {ASSIGNMENT} --student {two}")
    assert forged.returncode != 0 and "You hand in as yourself" in said(forged), said(forged)


def test_a_full_share_stops_its_student_only_with_a_sentence(handed_in):
    hub = handed_in
    one, two = hub.student_names
    fill = hub.exchange / "memcourse" / "inbound" / one / "fill"
    filled = run(hub, one, f"head -c {2 * SHARE_MB}M /dev/zero > '{fill}'")
    assert filled.returncode != 0 and "No space left on device" in filled.stderr
    again = run(hub, one, f"nbgrader submit {ASSIGNMENT}")
    assert again.returncode != 0, said(again)
    assert "Not handed in: your share of the exchange is full" in said(again), said(again)
    assert "Traceback" not in said(again), said(again)
    assert not [p for p in fill.parent.iterdir() if p.name.count("+") == 3 and
                not (p / "submission_secret.txt").exists()], "a partial entry was left"
    classmate = run(hub, two, f"nbgrader submit {ASSIGNMENT}")
    assert classmate.returncode == 0, said(classmate)
    cleared = run(hub, hub.instructor, f"rm -f '{fill}'")  # the instructors' group's share
    assert cleared.returncode == 0 and not fill.exists(), cleared.stderr
    after = run(hub, one, f"nbgrader submit {ASSIGNMENT}")
    assert after.returncode == 0, said(after)


def test_the_instructor_collects_each_students_own_and_a_new_term_starts_clean(handed_in):
    hub = handed_in
    collected = run(hub, hub.instructor, f"nbgrader collect {ASSIGNMENT}")
    assert collected.returncode == 0, said(collected)
    for student in hub.student_names:
        assert (hub.course_dir() / "submitted" / student / ASSIGNMENT / "exit-test.ipynb").exists()
    removed = shares.clear(hub.exchange, "memcourse")
    assert removed
    inbound = hub.exchange / "memcourse" / "inbound"
    assert all(not any(p for p in (inbound / s).iterdir()) for s in hub.student_names)
    assert not any((hub.exchange / "memcourse" / "outbound").iterdir())
