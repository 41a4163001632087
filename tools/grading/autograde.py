"""Autograding: nbgrader run on staged submissions, with limits and repair.

``grade_batch`` grades several submissions in one nbgrader process (a time limit per
cell, a wall-clock limit after which the process tree is killed) and returns those it
failed on; ``grade_isolated`` grades one submission in its own process and, when
nbgrader fails on it, probes and repairs it (``tools.grading.repair``) and grades it
again. These are the tasks the workers of the cluster run (``tools.grading.cluster``). Each
nbgrader process is a fork of the worker's warm nbgrader (``tools.grading.warm``).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from tools.grading.judgement import finish
from tools.grading.outcome import Outcome
from tools.grading.repair import neutralise, probe
from tools.grading.settings import Settings, grader_env, submission_limit
from tools.grading.staging import Staged, write_stage
from tools.grading.warm import WarmRun, warm_for

MAX_REPAIRS = 4


def last_error(log: Path) -> str:
    if not log.exists():
        return "no log"
    lines = [
        line.strip()
        for line in log.read_text(errors="replace").splitlines()
        if "ERROR" in line or "Error" in line
    ]
    interesting = [
        line for line in lines if "Please see" not in line and "There was an error" not in line
    ]
    return (interesting or lines or ["no message"])[-1][:200]


def autograde_args(
    settings: Settings, assignment: str, submitted: Path, student: str = "*"
) -> list[str]:
    """The arguments of ``nbgrader`` that autograde ``student``'s ``assignment`` in ``submitted``."""
    from tools.grading import preprocessors

    return [
        "autograde",
        assignment,
        f"--student={student}",
        "--force",
        f"--CourseDirectory.submitted_directory={submitted}",
        f"--CourseDirectory.db_url={settings.db_url}",
        f"--Execute.timeout={settings.cell_timeout}",
        f"--SandboxExecute.timeout={settings.cell_timeout}",
        f"--Sandbox.mode={settings.sandbox}",  # over nbgrader_config.py's, as make grade checked
        f"--Autograde.sanitize_preprocessors={preprocessors.sanitize_preprocessors()}",
        f"--Autograde.autograde_preprocessors={preprocessors.autograde_preprocessors()}",
        "--Application.log_format=[%(created).3f %(name)s | %(levelname)s] %(message)s",
    ]


def start_nbgrader(settings: Settings, args: list[str], log: Path) -> WarmRun:
    """Start ``nbgrader <args>`` in the course folder, its output to ``log``: a fork of this
    worker's warm nbgrader (``tools.grading.warm``), so there is no start-up to pay."""
    return warm_for(settings.root, grader_env(settings)).start(
        args, settings.root, log, settings.memory_mb)


def run_nbgrader(settings: Settings, args: list[str], log: Path, wall: float) -> int | None:
    """Run ``nbgrader <args>`` (``start_nbgrader``); its exit code, or None when it ran over
    ``wall`` seconds (then it and every process it started were killed)."""
    run = start_nbgrader(settings, args, log)
    if run.wait(timeout=wall) is None:
        run.kill()
        return None
    return run.returncode


def wall_limit(settings: Settings, staged: Staged) -> float:
    """One submission's wall-clock limit (``tools.grading.settings.submission_limit``)."""
    return submission_limit(settings)


def overran(settings: Settings) -> str:
    return (f"it ran longer than the time limit of a submission ({submission_limit(settings):.0f} s, "
            "its runs together): scored 0")


def complete(settings: Settings, staged: Staged) -> bool:
    folder = settings.root / "autograded" / staged.student / staged.assignment
    return all((folder / name).exists() for name in staged.screened)


def grade_isolated(settings: Settings, staged: Staged) -> Outcome:
    """Grade one submission in its own nbgrader process; repair and retry if nbgrader fails on it.

    When nbgrader gives up on the submission, its notebooks are probed cell by cell (the
    one nbgrader was running first); the cell that stops the kernel or cannot be
    interrupted is replaced by one that raises (the answer before it if the cell is
    locked), and the submission is graded again. A submission a batch already failed on
    (``staged.suspects``) goes to the probe at once.
    """
    start = time.monotonic()
    deadline = start + wall_limit(settings, staged)
    extra: list[str] = []
    screened = staged.screened
    where = settings.work / "isolated" / f"{staged.student}-{staged.assignment}"
    graded = False
    rc = 1
    log = where / "autograde-0.log"
    suspects = [n for n in staged.suspects if n in screened]
    probe_first = bool(suspects)
    for attempt in range(MAX_REPAIRS + 1):
        if not screened:
            break
        if time.monotonic() >= deadline:
            extra.append(overran(settings))
            screened.clear()
            break
        if not probe_first:
            write_stage(staged, where / "submitted")
            log = where / f"autograde-{attempt}.log"
            for retry in range(3):
                rc = run_nbgrader(
                    settings,
                    autograde_args(
                        settings, staged.assignment, where / "submitted", staged.student
                    ),
                    log,
                    max(1.0, deadline - time.monotonic()),
                )
                if rc is None or "database is locked" not in log.read_text(errors="replace"):
                    break
                time.sleep(1 + retry)
            if rc == 0 and complete(settings, staged):
                graded = True
                break
        repaired = False
        for name in (
            suspects if probe_first else suspects + [n for n in screened if n not in suspects]
        ):
            s = screened[name]
            found = probe(
                s.notebook,
                where / "probe" / name.replace(".ipynb", ""),
                settings.cell_timeout,
                settings.root,
                settings.memory_mb,
                grader_env(settings),
                wall=max(1.0, deadline - time.monotonic()),
            )
            if found["status"] == "ok":
                continue
            why = {
                "timeout": (
                    f"it ran longer than {settings.cell_timeout} s and could not be interrupted"
                ),
                "dead": "it stopped the Python kernel",
            }.get(found["status"], "it stopped the notebook run")
            replaced = (
                neutralise(s, found["index"], why) if found.get("index") is not None else None
            )
            if replaced:
                extra.append(f"{name}: {replaced}: {why}: replaced by an error")
            else:
                extra.append(f"{name}: could not be run ({why}, in a locked cell): scored 0")
                del screened[name]
            repaired = True
            break  # grade again: nbgrader says whether another notebook fails too
        suspects = []
        if not repaired and probe_first:
            probe_first = False  # the batch failed for another reason: grade it on its own
            continue
        probe_first = False
        if not repaired:
            extra.append(overran(settings) if rc is None or time.monotonic() >= deadline else
                         f"nbgrader could not grade it ({last_error(log)}): scored 0")
            screened.clear()
    if not graded and screened:
        extra.append(
            f"nbgrader still failed after {MAX_REPAIRS} repairs ({last_error(log)}): scored 0"
        )
    outcome = finish(settings, staged, graded, extra, time.monotonic() - start)
    if staged.batch_error and not extra:  # nothing in the submission was at fault
        outcome.note = f"graded on its own after its batch failed ({staged.batch_error})"
    return outcome


_STAMP = re.compile(r"^\[(\d+\.\d+) ")


def _spans(text: str, path_of: re.Pattern) -> dict:
    """Seconds nbgrader spent on each submission of a batch, from its log's time stamps.

    A submission starts at the first line naming its folder and ends where the next one
    starts (the last one at the last line).
    """
    first: dict = {}
    order: list = []
    last = None
    for line in text.splitlines():
        m = _STAMP.match(line)
        if m:
            last = float(m.group(1))
        for key in path_of.findall(line):
            if key not in first and last is not None:
                first[key] = last
                order.append(key)
    spans = {}
    for i, key in enumerate(order):
        end = first[order[i + 1]] if i + 1 < len(order) else last
        spans[key] = max(0.0, (end or first[key]) - first[key])
    return spans


def grade_batch(settings: Settings, batch: list[Staged], name: str, report) -> list[Staged]:
    """Grade several submissions in one nbgrader process; return those it failed on.

    nbgrader goes on to the next submission when one fails; a submission counts as done
    when nbgrader has moved past it and wrote all its notebooks. ``report(outcome)`` is
    called for each submission graded here, as soon as it is done.
    """
    where = settings.work / "batches" / name
    for staged in batch:
        write_stage(staged, where / "submitted")
    log = where / "autograde.log"
    by_key = {(s.student, s.assignment): s for s in batch}
    names = sorted({s.assignment for s in batch})
    order: list[tuple[str, str]] = []
    reported: set[tuple[str, str]] = set()
    failed_line = re.compile(
        r"There was an error processing assignment '([^']+)' for student '([^']+)'"
    )
    path_of = re.compile(re.escape(str(where / "submitted")) + r"/([^/\s]+)/([^/\s]+)/")
    wall = sum(wall_limit(settings, s) for s in batch)
    start = time.monotonic()
    last = [start]
    args = autograde_args(settings, names[0] if len(names) == 1 else "*", where / "submitted")

    def done(key) -> None:
        reported.add(key)
        now = time.monotonic()
        spans = _spans(log.read_text(errors="replace"), path_of)
        report(finish(settings, by_key[key], True, [], spans.get(key, now - last[0])))
        last[0] = now

    run = start_nbgrader(settings, args, log)
    since: dict = {}  # when nbgrader was first seen on each submission
    over = None  # the submission that ran past its own limit (the batch is stopped for it)
    while run.wait(timeout=1.0) is None:
        if time.monotonic() - start > wall:
            run.kill()
            break
        # report the submissions nbgrader has moved past
        for key in path_of.findall(log.read_text(errors="replace")):
            if key in by_key and key not in order:
                order.append(key)
                since[key] = time.monotonic()
        for key in order[:-1]:
            if key not in reported and complete(settings, by_key[key]):
                done(key)
        if order and time.monotonic() - since[order[-1]] > wall_limit(settings, by_key[order[-1]]):
            over = order[-1]
            run.kill()
            break
    if over is not None:  # its own time is up: it scores 0; the others are graded again
        reported.add(over)
        report(finish(settings, by_key[over], False, [overran(settings)],
                      time.monotonic() - since[over]))
    text = log.read_text(errors="replace")
    for key in path_of.findall(text):
        if key in by_key and key not in order:
            order.append(key)
    failed = {(student, assignment) for assignment, student in failed_line.findall(text)}
    # the notebook nbgrader was working on when it gave up on a submission
    running = None
    sanitizing = re.compile(
        r"Sanitizing " + re.escape(str(where / "submitted")) + r"/([^/\s]+)/([^/\s]+)/([^/\s]+)$"
    )
    lines = text.splitlines()
    for index, line in enumerate(lines):
        m = sanitizing.search(line.strip())
        if m:
            running = m.groups()
        elif "There was an error processing assignment:" in line and running:
            key = running[:2]
            if key in by_key and running[2] not in by_key[key].suspects:
                by_key[key].suspects.append(running[2])
                # the traceback that follows ends with the exception
                trace = []
                for later in lines[index + 1 :]:
                    if later.startswith("[") and "Traceback" not in later:
                        break
                    if later.strip():
                        trace.append(later.strip())
                by_key[key].batch_error = f"{running[2]}: {(trace or ['?'])[-1][:200]}"
    finished = run.returncode in (0, 1) and time.monotonic() - start <= wall
    leftovers = []
    for key in order + [k for k in by_key if k not in order]:
        if key in reported:
            continue
        if finished and key in order and key not in failed and complete(settings, by_key[key]):
            done(key)
        else:
            leftovers.append(by_key[key])
    return leftovers
