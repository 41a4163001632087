"""Where a class is graded: the workers of a Dask cluster (``dask.distributed``).

``tools.grading.pipeline`` screens every submission on the machine it runs on, then
hands the submissions to the workers of a cluster:

* by default a **local cluster**: ``--jobs`` worker processes (``make grade JOBS=``; one
  per core by default), one task at a time each, its scheduler on 127.0.0.1;
* with ``--scheduler tcp://host:8786`` (``make grade SCHEDULER=``) an **existing
  cluster** (``dask scheduler`` and ``dask worker tcp://host:8786 --nthreads 1`` on each
  machine). Its workers must see the course folder at the same path, run the course's
  Python (``tools`` importable, bubblewrap installed) and reach the gradebook, which
  must then be a server (PostgreSQL, ``tools.grading.gradebook``): SQLite is refused, since
  a file written from several machines gets corrupted.

A task is either a **batch** (several submissions graded by one nbgrader process,
``tools.grading.autograde.grade_batch``) or **one submission on its own** with repair
(``tools.grading.autograde.grade_isolated``). Both run on the worker as they ran in the
grader before: a time limit per cell, a wall-clock limit per submission after which the
process tree is killed, every kernel in the sandbox (``tools.grading.box``), the grader's own check of
the answers (``tools.grading.recheck``). One bad submission never stops the others: the
submissions a batch failed on, or of a batch whose task was lost (a worker that died),
are graded again each on its own as soon as the batch ends; a submission whose own task
is lost scores 0 with the reason (status ``failed``).

Each worker sends an outcome as soon as a submission is done (a Dask event on a topic
of this run), so the grader prints its progress line and records the gradebook rows at
once, as it did with its own processes. The grader waits on one queue, fed by the topic
and by each task's done-callback, and handles outcomes and tasks' ends in the order they
arrive: nothing is polled.

The scheduler of the local cluster listens on 127.0.0.1; the kernels, in a network
namespace of their own, cannot reach it (nor the gradebook server).

The local workers are new Python processes (multiprocessing's spawn): a script that
calls ``tools.grading.pipeline.grade_class`` must start from ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import queue
import tempfile
import uuid
from pathlib import Path

from tools.grading import gradebook
from tools.grading import autograde, judgement, lateness
from tools.grading.outcome import Outcome

# What a local cluster does while its workers wait for nbgrader: by default it samples
# every thread's stack 100 times a second (the profiler), checks its event loop every
# 20 ms and polls the system twice a second, in the scheduler and in each worker: 0.14 s
# of CPU per second of grading (measured, 2 workers), taken from the cores the kernels
# grade on. A grading task is one long call that waits on a process: none of it is of use.
QUIET = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.worker.memory.monitor-interval": "5s",
}

MAX_BATCH = 25  # submissions per batch at most: each batch pays one start of nbgrader (a
# fork of the worker's warm one, tools.grading.warm, and its set-up), a batch too long
# keeps its worker after the others are done. (Measured on 160 submissions: more, shorter
# batches toward the end, which should end the workers together, graded more slowly.)


def sqlite_refused(db_url: str, scheduler: str | None) -> str | None:
    """Why the gradebook cannot serve the workers of ``scheduler`` (None when it can)."""
    if scheduler and not gradebook.is_server(db_url):
        return (
            f"the workers of the cluster at {scheduler} write the gradebook from their own "
            f"machines, and the gradebook {gradebook.hidden(db_url)} is "
            + ("an SQLite file" if gradebook.is_sqlite(db_url) else "not a database server")
            + ", which several machines cannot write safely: give a PostgreSQL gradebook "
            "(--db-url or MEMCOURSE_DB_URL, e.g. postgresql+psycopg2://user:password@host/"
            "memcourse), or grade on this machine's own cluster (no SCHEDULER)"
        )
    return None


@contextlib.contextmanager
def connect(jobs: int, scheduler: str | None = None):
    """A client of the cluster: ``scheduler``'s, or a local one of ``jobs`` worker processes."""
    import dask
    from distributed import Client, LocalCluster

    if scheduler:
        client = Client(scheduler, timeout="30s")
        try:
            yield client
        finally:
            client.close()
        return
    # a task on a lost worker is not tried again elsewhere: the grader grades its
    # submissions on their own (they may be what killed the worker)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0, **QUIET}):
        cluster = LocalCluster(
            n_workers=max(1, jobs),
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            # no dashboard; its HTTP server (health checks) on a free port of 127.0.0.1
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            memory_limit=0,  # nbgrader's processes have their own limit (--memory-limit)
            silence_logs=logging.ERROR,
        )
        try:
            client = Client(cluster)
            try:
                yield client
            finally:
                client.close()
        finally:
            cluster.close()


def _worker_problem(root: str, sandbox_mode: str) -> str | None:
    """Run on each worker of a remote cluster: can it grade this course?"""
    if not (Path(root) / "nbgrader_config.py").is_file():
        return f"it does not see the course folder {root}"
    if sandbox_mode == "bwrap":
        from tools.grading.box import unusable

        return unusable()
    return None


def check_workers(client, settings) -> None:
    """Stop with a clear message when a worker of the cluster cannot grade the course."""
    answers = client.run(_worker_problem, str(settings.root), settings.sandbox)
    if not answers:
        raise SystemExit("the cluster has no worker: start some (dask worker <scheduler>)")
    bad = [f"  {worker}: {problem}" for worker, problem in sorted(answers.items()) if problem]
    if bad:
        raise SystemExit("these workers of the cluster cannot grade:\n" + "\n".join(bad))


def batches(runnable: list, workers: int) -> list[list]:
    """The submissions split in batches: as many batches as workers, or a multiple of it
    so that no batch holds more than ``MAX_BATCH`` submissions (every worker busy, and
    the fewest starts of nbgrader)."""
    if not runnable:
        return []
    workers = max(1, workers)
    rounds = -(-len(runnable) // (workers * MAX_BATCH))
    parts = max(1, min(workers * rounds, len(runnable)))
    return [runnable[i::parts] for i in range(parts) if runnable[i::parts]]


# --------------------------------------------------------------------------- on a worker


@contextlib.contextmanager
def _on_worker(settings):
    """The grader's settings on a worker: its folders, or the worker's own.

    A worker on another machine does not see the grader's temporary folders: the work
    folder (``work``) and, where the settings have one, the folder of the sandboxes'
    private folders (``boxes``) are then temporary folders of the worker's.
    """
    missing = {
        name: folder
        for name in ("work", "boxes")
        if (folder := getattr(settings, name, None)) is not None and not Path(folder).is_dir()
    }
    if settings.work is None:
        missing["work"] = None
    if not missing:
        yield settings
        return
    with tempfile.TemporaryDirectory(prefix="memcourse-worker-") as tmp:
        own = {name: Path(tmp) / name for name in missing}
        for folder in own.values():
            folder.mkdir()
        yield dataclasses.replace(settings, **own)


def _tell(topic: str, outcome) -> None:
    """Send one outcome to the grader now (a Dask event); the task's result carries it too."""
    try:
        from distributed import get_worker

        get_worker().log_event(topic, {**dataclasses.asdict(outcome),
                                       "late": lateness.as_message(outcome.late)})
    except Exception:  # noqa: BLE001 - the result of the task brings it anyway
        pass


def grade_batch_task(settings, batch: list, name: str, topic: str):
    """A batch on a worker: (its outcomes, the submissions to grade again on their own)."""
    outcomes = []

    def report(outcome) -> None:
        outcomes.append(outcome)
        _tell(topic, outcome)

    with _on_worker(settings) as here:
        leftovers = autograde.grade_batch(here, batch, name, report)
    return outcomes, leftovers


def grade_one_task(settings, staged, topic: str):
    """One submission on a worker, on its own (with repair)."""
    with _on_worker(settings) as here:
        outcome = autograde.grade_isolated(here, staged)
    _tell(topic, outcome)
    return outcome


# --------------------------------------------------------------------------- the grader


def failed_outcome(settings, staged, exc: BaseException):
    """A submission whose grading was lost: 0 in the gradebook, with the reason."""
    outcome = Outcome(
        staged.student,
        staged.assignment,
        status="failed",
        reasons=staged.reasons
        + [f"the grader failed on it ({type(exc).__name__}: {exc}): scored 0"],
    )
    try:
        judgement.record_zero(settings, staged.assignment, staged.student)
        outcome.max_score = (
            judgement.scores(settings, staged.assignment, staged.student) or (0, 0, False)
        )[1]
    except Exception:  # noqa: BLE001 - the report says failed anyway
        pass
    return outcome


def grade(
    settings,
    runnable: list,
    jobs: int,
    isolate: bool,
    report,
    scheduler: str | None = None,
    progress=None,
) -> dict:
    """Grade the screened submissions ``runnable`` on the cluster; ``report(outcome)`` each.

    ``report`` is called in this thread, once per submission, as soon as it is done.
    Returns how many submissions each worker graded (by address); ``progress(line)``
    gets that as a line at the end.
    """
    if not runnable:
        return {}
    refused = sqlite_refused(settings.db_url, scheduler)
    if refused:
        raise SystemExit(refused)
    if settings.work is not None:  # the workers of this machine use it (_on_worker)
        settings.work.mkdir(parents=True, exist_ok=True)
    run = uuid.uuid4().hex[:12]
    topic = f"memcourse-grading-{run}"
    # what happens, in the order it happens: ("sent", an outcome a task sent on the topic)
    # and ("done", a task's future that ended, with its result, its error or cancelled)
    events: queue.Queue = queue.Queue()
    reported: set = set()
    graded_on: dict = {}  # (student, assignment) -> the worker's address

    def deliver(outcome) -> None:
        key = (outcome.student, outcome.assignment)
        if key not in reported:
            reported.add(key)
            report(outcome)

    def received(message) -> None:
        """An outcome a worker sent on the topic, delivered now."""
        if not isinstance(message, dict):
            return
        message = dict(message)
        worker = message.pop("worker", None)  # the scheduler adds the sender
        late = lateness.from_message(message.pop("late", None))
        try:
            outcome = Outcome(**message)
        except TypeError:  # not an outcome of ours
            return
        outcome.late = late
        outcome.reasons = list(outcome.reasons)  # msgpack sends a list as a tuple
        if worker:
            graded_on[(outcome.student, outcome.assignment)] = worker
        deliver(outcome)

    with connect(jobs, scheduler) as client:
        if scheduler:
            check_workers(client, settings)
        workers = max(1, len(client.scheduler_info().get("workers", {})) or jobs)
        client.subscribe_topic(topic, lambda event: events.put(("sent", event[1])))
        pending: dict = {}  # future -> ("batch", [Staged]) or ("one", Staged)

        def submitted(future, what) -> None:
            pending[future] = what
            future.add_done_callback(lambda done: events.put(("done", done)))

        def one(staged) -> None:
            submitted(client.submit(
                grade_one_task, settings, staged, topic, key=f"grade-{run}-{staged.student}-"
                f"{staged.assignment}-{uuid.uuid4().hex[:6]}", pure=False, priority=1
            ), ("one", staged))

        def ended(future) -> None:
            """A task ended: its outcomes delivered, its leftovers (or a lost batch's
            students not yet reported) graded again each on its own."""
            kind, what = pending.pop(future)
            try:
                result = future.result()
            except Exception as exc:  # noqa: BLE001 - a lost task stops nothing
                if kind == "one":
                    deliver(failed_outcome(settings, what, exc))
                    return
                result = ([], [])
                for staged in what:
                    if (staged.student, staged.assignment) not in reported:
                        staged.batch_error = f"its batch was lost ({type(exc).__name__}: {exc})"
                        result[1].append(staged)
            if kind == "one":
                deliver(result)
                return
            outcomes, leftovers = result
            for outcome in outcomes:
                deliver(outcome)
            for staged in leftovers:  # graded again on their own, now
                one(staged)

        if isolate:
            for staged in runnable:
                one(staged)
        else:
            for i, batch in enumerate(batches(runnable, workers)):
                submitted(client.submit(
                    grade_batch_task, settings, batch, f"batch-{i}", topic,
                    key=f"grade-{run}-batch-{i}", pure=False,
                ), ("batch", batch))
        try:
            while pending:
                kind, item = events.get()  # until the next outcome or the next task's end
                if kind == "sent":
                    received(item)
                else:
                    ended(item)
            while not events.empty():  # sent before the last task ended, arrived after it
                kind, item = events.get_nowait()
                if kind == "sent":
                    received(item)
        finally:
            with contextlib.suppress(Exception):
                client.unsubscribe_topic(topic)
    per_worker = dict(sorted(collections.Counter(graded_on.values()).items()))
    if progress and per_worker:
        progress(
            f"graded on {len(per_worker)} worker(s): "
            + ", ".join(f"{w} {n}" for w, n in per_worker.items())
        )
    return per_worker
