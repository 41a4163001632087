"""memkit.class_list: each student's seat on the instructor's class list.

Read bounded and checked line by line (an error names the line), appended to with the next
seats (a seat, once given, is kept), and its command line says what it did.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from memkit import class_list
from memkit.class_list import ClassListError


def test_no_list_is_no_seats_and_add_gives_the_next_seats_keeping_the_others(tmp_path):
    path = tmp_path / class_list.NAME
    assert class_list.read(path) == {}
    assert class_list.add(path, ["alice", "bob", "alice"]) == {"alice": 1, "bob": 2}
    assert path.read_text() == "seat,student\n1,alice\n2,bob\n"
    path.write_text("seat,student\n2,bob\n\n7,carol\n1,alice\n")  # edited by hand, a gap
    assert class_list.add(path, ["bob", "dave", "erin"]) == {"dave": 8, "erin": 9}
    assert class_list.read(path) == {"alice": 1, "bob": 2, "carol": 7, "dave": 8, "erin": 9}
    assert class_list.add(path, ["carol"]) == {}


@pytest.mark.parametrize("text,where", [
    ("student,seat\n1,alice\n", "line 1: the header"),
    ("", "line 1: the header"),
    ("seat,student\n1,alice\n1,bob\n", "line 3: seat 1 is taken by 'alice'"),
    ("seat,student\n1,alice\n2,alice\n", "line 3: 'alice' is on the list already (seat 1)"),
    ("seat,student\n0,alice\n", "line 2: the seat '0'"),
    ("seat,student\nfirst,alice\n", "line 2: the seat 'first'"),
    ("seat,student\n1,a b\n", "line 2: the student id 'a b'"),
    ("seat,student\n1,alice,extra\n", "line 2: two fields"),
])
def test_a_list_that_cannot_be_used_names_its_line(tmp_path, text, where):
    path = tmp_path / class_list.NAME
    path.write_text(text)
    with pytest.raises(ClassListError, match=re.escape(f"{class_list.NAME}, {where}")):
        class_list.read(path)
    with pytest.raises(ClassListError):
        class_list.add(path, ["zoe"])
    assert path.read_text() == text  # a list that cannot be read is not rewritten


def test_a_huge_list_is_refused_without_reading_it_whole(tmp_path):
    path = tmp_path / class_list.NAME
    with open(path, "w") as fh:
        fh.write("seat,student\n")
        fh.truncate(class_list.MAX_BYTES + 10)
    with pytest.raises(ClassListError, match="larger than"):
        class_list.read(path)


def test_no_link_is_followed_and_no_fifo_waited_on(tmp_path):
    """The hub reads and writes the list as root in the instructor's folder: a link put in
    its place is refused, not followed, and so is a FIFO (which would stall the hub's
    spawn); a link planted as the new file is removed, and its target left as it was."""
    secret = tmp_path / "secret"
    secret.write_text("seat,student\n1,alice\n")
    path = tmp_path / class_list.NAME
    path.symlink_to(secret)
    with pytest.raises(ClassListError, match="a link is not followed"):
        class_list.read(path)
    with pytest.raises(ClassListError):
        class_list.add(path, ["bob"])
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(ClassListError, match="not a regular file"):
        class_list.read(path)
    path.unlink()
    path.with_name(path.name + ".new").symlink_to(secret)
    assert class_list.add(path, ["bob"]) == {"bob": 1}
    assert secret.read_text() == "seat,student\n1,alice\n" and not path.is_symlink()
    assert class_list.read(path) == {"bob": 1}


def test_an_id_that_cannot_be_a_student_is_not_added(tmp_path):
    path = tmp_path / class_list.NAME
    with pytest.raises(ValueError, match="not one the grader can use"):
        class_list.add(path, ["alice", "../bob"])
    assert not path.exists()


def test_the_command_line_adds_and_shows(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "memkit.class_list", *args],
                              cwd=tmp_path, capture_output=True, text=True)

    done = run("add", "alice", "bob")
    assert done.returncode == 0 and "seat 1: alice" in done.stdout and "2 added" in done.stdout
    done = run("show")
    assert done.stdout.splitlines() == ["seat 1: alice", "seat 2: bob",
                                        f"2 students on {class_list.NAME}"]
    (tmp_path / class_list.NAME).write_text("seat,student\n1,alice\n1,bob\n")
    done = run("show")
    assert done.returncode == 2 and "line 3: seat 1" in done.stderr and "Traceback" not in done.stderr
