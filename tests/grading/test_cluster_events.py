"""The grader's side of the cluster (``tools.grading.cluster.grade``) on a real Dask
scheduler and worker in this process, the grading tasks replaced by stand-ins: an outcome
a task sends is delivered before the task ends, a batch's leftovers are graded again one
by one, a lost batch's students not yet delivered are graded again one by one (and those
it delivered are not), a lost single task is a failed outcome, and each submission is
reported once."""

import contextlib
import threading
from pathlib import Path

import pytest

from tools.grading import cluster
from tools.grading.outcome import Outcome
from tools.grading.settings import Settings
from tools.grading.staging import Staged

STUDENTS = ("ann", "bob", "cy", "dee")
# the batch task waits for this (set when the grader reports ann) before it ends: it ends
# only if what it sent was delivered while it ran
RELEASE = threading.Event()
FATE = {"batch": "ends"}  # or "lost"


def staged(student: str) -> Staged:
    return Staged("session-1", student, Path("/nonexistent"), {}, [], True)


def batch_task(settings, batch, name, topic):
    """Sends ann's outcome on the topic, waits until the grader has delivered it, then
    returns (ann and cy graded, bob and dee left over) or is lost."""
    cluster._tell(topic, Outcome("ann", "session-1", score=3.0, note="sent by the batch"))
    if not RELEASE.wait(60):
        raise AssertionError("what the batch sent was not delivered while it ran")
    if FATE["batch"] == "lost":
        raise RuntimeError("the worker died")
    graded = [Outcome(s, "session-1", score=3.0, note="the batch's result") for s in ("ann", "cy")]
    return graded, [s for s in batch if s.student in ("bob", "dee")]


def one_task(settings, staged, topic):
    if staged.student == "dee":
        raise RuntimeError("its own worker died")
    return Outcome(staged.student, staged.assignment, score=1.0,
                   note=f"alone: {staged.batch_error}")


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as local, Client(local) as client:
        yield client


@pytest.fixture
def graded(client, monkeypatch, tmp_path):
    """``run(fate)`` grades the four students in one batch that ends or is lost: the
    outcomes reported, in their order."""

    @contextlib.contextmanager
    def connect(jobs, scheduler=None):
        yield client

    monkeypatch.setattr(cluster, "connect", connect)
    monkeypatch.setattr(cluster, "grade_one_task", one_task)
    monkeypatch.setattr(cluster, "grade_batch_task", batch_task)
    settings = Settings(root=tmp_path, submitted=tmp_path,
                        db_url=f"sqlite:///{tmp_path / 'gradebook.db'}")

    def run(fate):
        RELEASE.clear()
        FATE["batch"] = fate
        reported = []

        def report(outcome):
            reported.append(outcome)
            if outcome.student == "ann":
                RELEASE.set()  # the batch may end now

        cluster.grade(settings, [staged(s) for s in STUDENTS], jobs=1, isolate=False,
                      report=report)
        return reported

    return run


def by_student(reported) -> dict:
    assert sorted(o.student for o in reported) == sorted(STUDENTS), "each reported once"
    return {o.student: o for o in reported}


def test_a_batch_delivers_what_it_sends_and_its_leftovers_are_graded_alone(graded):
    reported = graded("ends")
    outcomes = by_student(reported)
    assert reported[0].student == "ann" and reported[0].note == "sent by the batch"
    assert outcomes["cy"].note == "the batch's result" and outcomes["cy"].score == 3.0
    assert outcomes["bob"].note == "alone: " and outcomes["bob"].score == 1.0
    assert outcomes["dee"].status == "failed"
    assert any("its own worker died" in r for r in outcomes["dee"].reasons)


def test_a_lost_batch_grades_its_students_not_yet_delivered_alone(graded):
    reported = graded("lost")
    outcomes = by_student(reported)
    assert reported[0].student == "ann" and reported[0].note == "sent by the batch"
    for student in ("bob", "cy"):
        assert outcomes[student].score == 1.0
        assert outcomes[student].note.startswith(
            "alone: its batch was lost (RuntimeError: the worker died)"), outcomes[student].note
    assert outcomes["dee"].status == "failed"
    assert any("RuntimeError: its own worker died" in r for r in outcomes["dee"].reasons)
