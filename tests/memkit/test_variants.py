"""memkit.variants: each student's own numbers, drawn from the student's id.

The draws depend on the course, notebook, question, name and student id only (any order,
any machine); the id comes from the grader, the hub, the id file or the default, in that
order, and one nbgrader could not take is refused with a clear message; options are shuffled
per student with the key following; ``make check ID=...`` keeps the id. A student with a seat
on the class list sees a row of their block's Latin square: across any class, no letter is
the key for more than ``ceil(n / k)`` of its ``n`` students.
"""

from __future__ import annotations

import hashlib
import math
import pathlib
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from memkit import variants
from memkit.variants import Numbers

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """No id from the environment; the id file in a folder of the test's own."""
    monkeypatch.delenv(variants.ENV, raising=False)
    monkeypatch.delenv(variants.HUB_ENV, raising=False)
    monkeypatch.delenv(variants.SEAT_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path


def test_the_id_comes_from_the_grader_the_hub_the_file_or_the_default(nowhere, monkeypatch):
    assert variants.student() == (variants.DEFAULT_ID, "default")
    path = variants.set_student("alice")
    assert path == nowhere / "config" / "memcourse" / "student-id"
    assert variants.student() == ("alice", "file")
    monkeypatch.setenv(variants.HUB_ENV, "mc-student1")
    assert variants.student() == ("mc-student1", variants.HUB_ENV)
    monkeypatch.setenv(variants.ENV, "bob")  # the grader's, whatever the hub says
    assert variants.student() == ("bob", variants.ENV)
    monkeypatch.delenv(variants.ENV)
    monkeypatch.delenv(variants.HUB_ENV)
    assert variants.forget_student() and not variants.forget_student()
    assert variants.student() == (variants.DEFAULT_ID, "default")


@pytest.mark.parametrize("bad", ["", "a b", "-alice", ".hidden", "élève", "x" * 101, "a/b", "o'neil"])
def test_an_id_nbgrader_could_not_take_is_refused_clearly(nowhere, monkeypatch, bad):
    with pytest.raises(ValueError, match="not one the grader can use"):
        variants.set_student(bad)
    assert not variants.id_file().exists()
    if bad.strip():
        monkeypatch.setenv(variants.ENV, bad)
        with pytest.raises(ValueError, match="set yours with make check ID="):
            Numbers("session-1/exit-test")


def test_a_hostile_id_file_is_read_bounded_and_refused(nowhere):
    path = variants.id_file()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"alice\n" + b"\x00" * 10_000_000)
    with pytest.raises(ValueError, match="not one the grader can use"):
        variants.student()
    path.write_text("  carol  \n")
    assert variants.student() == ("carol", "file")


def test_a_draw_depends_on_its_inputs_only():
    a, b = Numbers("session-2/exit-test", "alice"), Numbers("session-2/exit-test", "alice")
    first = [a.integer("q3", "d", 10, 90), a.real("q3", "beta", 0.1, 2.0), a.pick("q5", "r", "xyz")]
    # the other order, and other draws in between: the same values
    b.pick("q5", "r", "xyz"), b.integer("q1", "other", 0, 9)
    assert [b.integer("q3", "d", 10, 90), b.real("q3", "beta", 0.1, 2.0), b.pick("q5", "r", "xyz")] == first
    # the value is the SHA-256 of the parts: the same on any machine and Python
    digest = hashlib.sha256("memcourse|session-2/exit-test|q3|alice|d|0".encode()).digest()
    assert first[0] == list(range(10, 91))[int(int.from_bytes(digest[:8], "big") / 2**64 * 81)]
    others = [Numbers("session-2/exit-test", "bob"), Numbers("session-3/exit-test", "alice")]
    assert any(o.integer("q3", "d", 10, 90) != first[0] for o in others)
    assert Numbers("session-2/exit-test", "alice").integer("q4", "d", 10, 90) != first[0] or \
        Numbers("session-2/exit-test", "alice").integer("q5", "d", 10, 90) != first[0]


def test_draws_stay_in_their_ranges_and_avoid_what_they_must():
    for i in range(200):
        n = Numbers("session-1/exit-test", f"student-{i}")
        d = n.integer("q1", "d", 28, 120, step=4, avoid=(32, 64))
        assert 28 <= d <= 120 and d % 4 == 0 and d not in (32, 64)
        x = n.real("q1", "x", 0.05, 0.15, digits=3, avoid=(0.1,))
        assert 0.05 <= x <= 0.15 and round(x, 3) == x and x != 0.1
        s = n.sample("q1", "s", range(50), 4)
        assert s == sorted(s) and len(set(s)) == 4
        assert n.pick("q1", "p", (2, 3, 5)) in (2, 3, 5)
    with pytest.raises(ValueError, match="nothing to pick"):
        Numbers("session-1/exit-test", "alice").integer("q1", "d", 3, 3, avoid=(3,))


def test_data_drawn_meet_the_premise_of_their_question():
    n = Numbers("session-1/exit-test", "alice")
    W = n.draw("q1", "W", lambda g: g.integers(-3, 4, size=(3, 3)).astype(float),
               lambda W: np.linalg.matrix_rank(W) == 2)
    assert np.linalg.matrix_rank(W) == 2
    assert np.array_equal(W, Numbers("session-1/exit-test", "alice").draw(
        "q1", "W", lambda g: g.integers(-3, 4, size=(3, 3)).astype(float),
        lambda W: np.linalg.matrix_rank(W) == 2))
    seeds = {Numbers("session-1/exit-test", f"s{i}").seed("q2", "K") for i in range(50)}
    assert len(seeds) == 50
    with pytest.raises(ValueError, match="premise"):
        n.draw("q9", "never", lambda g: 1, lambda _: False, tries=5)


def test_the_record_says_whose_numbers_and_shows_small_data():
    n = Numbers("session-1/exit-test", "alice")
    n.integer("q3", "d_k3", 40, 60)
    n.draw("q1, q2", "W, x", lambda g: (np.eye(2), np.array([0.5, 2.0])))
    n.draw("q5", "K", lambda g: g.standard_normal((20, 8)))
    n.seed("q6", "V")
    n.options("q4", ["one", "two", "three"])
    report = n.report()
    assert report.startswith("Your numbers (student id 'alice', given):")
    assert "d_k3 = " in report and "x = [0.5, 2]" in report and "K (20, 8)" in report
    assert "V: drawn for you" in report
    line = n.summary()
    assert "\n" not in line and "q4 letters" in line and "W (2, 2)" in line
    assert n.varied() == ["q1", "q2", "q3", "q4", "q5", "q6"]


def test_options_are_shuffled_per_student_and_the_key_follows():
    texts = ["right", "wrong one", "wrong two", "wrong three"]
    keys = Counter()
    orders = set()
    for i in range(400):
        found = Numbers("session-1/exit-test", f"student-{i}").options("q4", texts)
        letter = found.key(0)
        assert dict(found.shown())[letter] == "right"
        assert found.keys([0, 2]) == {letter, found.key(2)}
        keys[letter] += 1
        orders.add(tuple(found.order))
    assert set(keys) == set("abcd") and max(keys.values()) < 0.32 * 400, keys
    assert len(orders) == 24
    found = Numbers("session-5/exit-test", "alice").options("q2", list("123456"), letters="ABCDEF",
                                                          title="Points")
    assert found._repr_markdown_().startswith("*Points*\n\n- **") and "F." in repr(found)
    with pytest.raises(ValueError, match="letters"):
        Numbers("x", "alice").options("q1", ["a", "b"], letters="ABC")
    with pytest.raises(KeyError, match="not drawn yet"):
        Numbers("x", "alice").key("q1", 0)


def test_options_are_shown_in_a_kernel_and_nothing_is_imported_outside_one():
    """In an IPython shell the options are displayed as they are drawn; in a process
    without IPython (the grader's check) nothing is shown and IPython is not imported."""
    code = """
import sys
from memkit.variants import Numbers
Numbers("session-1/exit-test", "alice").options("q4", ["right", "wrong"])
print("IPython" in sys.modules)
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
InteractiveShell.instance()
with capture_output() as shown:
    Numbers("session-1/exit-test", "alice").options("q4", ["right", "wrong"])
print(any("right" in str(o.data) for o in shown.outputs))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr


def test_make_check_sets_the_id_once_and_says_whose_numbers(nowhere):
    env = {"XDG_CONFIG_HOME": str(nowhere / "config"), "PATH": "/usr/bin:/bin", "HOME": str(nowhere)}

    def check(*args):
        return subprocess.run([sys.executable, "-m", "tools.lab.notebook_check", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)

    done = check("--id", "alice")
    assert done.returncode == 0 and "student id set to 'alice'" in done.stdout, done.stdout + done.stderr
    assert variants.id_file().read_text() == "alice\n"
    refused = check("--id", "not an id")
    assert refused.returncode == 2 and "not set" in refused.stdout
    assert variants.id_file().read_text() == "alice\n"
    from tools.lab import notebook_check as checker

    assert "'alice'" in checker.whose_numbers() and "make check ID=" in checker.whose_numbers()
    forgotten = check("--forget-id")
    assert forgotten.returncode == 0 and "'self-study'" in forgotten.stdout
    assert "the default: set yours once with make check ID=<your id>" in checker.whose_numbers()


@pytest.mark.parametrize("k", range(2, 9))
def test_with_seats_no_letter_is_the_key_of_more_than_its_share_of_any_class(k):
    """Across the seats 1..n, each option is under each letter for at most ceil(n / k)
    students (for n = 20 and k >= 2, at most half), whichever option is the key; every order
    is a permutation, and two seats of one block never show an option under the same letter
    (their keys' letters differ, whatever the key)."""
    texts = [f"option {i}" for i in range(k)]
    rows = [Numbers("session-3/exit-test", f"s{seat}", seat=seat).options("q1", texts)
            for seat in range(1, 41)]
    for n in range(1, 41):
        for i in range(k):
            counts = Counter(row.key(i) for row in rows[:n])
            assert max(counts.values()) <= math.ceil(n / k), (n, i, counts)
            if n == 20:
                assert max(counts.values()) <= 10
    for row in rows:
        assert sorted(row.order) == list(range(k))
        assert dict(row.shown())[row.key(0)] == "option 0"
    for start in range(0, 40 - k + 1, k):
        block = rows[start:start + k]
        for j in range(k):
            assert len({row.order[j] for row in block}) == k, (start, j)


def test_a_seat_sets_the_order_and_the_id_the_numbers():
    """Two students with one seat (two courses' lists) see one order; the numbers stay each
    one's own. Orders of one seat differ between questions and notebooks, and between
    blocks; without a seat the order is the id's own shuffle, as before."""
    a, b = Numbers("session-2/exit-test", "alice", seat=3), Numbers("session-2/exit-test", "bob", seat=3)
    texts = list("wxyz")
    assert a.options("q5", texts).order == b.options("q5", texts).order
    assert a.integer("q3", "d", 10, 10_000) != b.integer("q3", "d", 10, 10_000)
    orders = {tuple(Numbers(nb, "alice", seat=seat).options(q, texts).order)
              for nb in ("session-2/exit-test", "session-4/exit-test")
              for q in ("q1", "q5") for seat in (3, 7, 11)}
    assert len(orders) >= 6
    free = Numbers("session-2/exit-test", "alice")
    assert free.seat is None
    assert free.options("q5", texts).order == sorted(
        range(4), key=lambda i: variants.uniform("session-2/exit-test", "q5", "alice", f"option/{i}", 0))


def test_the_seat_comes_from_the_environment_and_is_shown(nowhere, monkeypatch):
    monkeypatch.setenv(variants.HUB_ENV, "mc-student1")
    assert Numbers("session-1/exit-test").seat is None
    monkeypatch.setenv(variants.SEAT_ENV, " 4 ")
    n = Numbers("session-1/exit-test")
    assert (n.student, n.seat) == ("mc-student1", 4)
    n.options("q4", ["one", "two", "three"])
    assert "seat 4 on the class list" in n.report().splitlines()[0]
    assert n.summary().startswith("seat 4; ")
    for bad in ("0", "-1", "x", "1.5", str(variants.MAX_SEAT + 1)):
        monkeypatch.setenv(variants.SEAT_ENV, bad)
        with pytest.raises(ValueError, match="not one of the class list's"):
            Numbers("session-1/exit-test")
    with pytest.raises(ValueError, match="given"):
        Numbers("session-1/exit-test", "alice", seat=0)
