"""Autograde a class with nbgrader so that no submission can stop the others.

    python -m tools.grading [ASSIGNMENT ...] [--submitted DIR | --zip FILE ...]
                            [--student ID ...] [--cell-timeout S] [--timeout S] [--jobs N]
                            [--isolate] [--csv grades.csv] [--report PATH] [--db-url URL]
                            [--memory-limit MB] [--no-feedback]

(``make grade`` runs it.) Each submission ``<submitted>/<student>/<assignment>/``:

1. **Screening.** Each notebook is checked against the assignment's source before
   nbgrader sees it (on a copy; what the student handed in is never changed). A file
   that is not a notebook (not valid JSON) is left out, so it scores 0. Locked cells
   that were deleted, copied, retyped or edited are put back as released (a copied
   grade id stops nbgrader); a deleted answer cell comes back as its stub; cells the
   student added are kept, after the graded cell they followed.
2. **Autograding in batches.** ``nbgrader autograde`` runs once per batch of
   submissions, on the workers of a Dask cluster (``tools.cluster``: ``--jobs`` local
   worker processes, or ``--scheduler``'s workers), each in its own process group, with a
   time limit per cell (nbgrader interrupts a cell that overruns) and a wall-clock
   limit after which the whole process tree is killed. nbgrader goes on to the next
   submission when one fails.
3. **Repair.** A submission the batch failed on (a kernel killed by ``os._exit``, a
   loop that ignores the interrupt ...) is probed cell by cell to find the cell at
   fault; that cell is replaced by one that raises (the answer before it if the cell
   is locked) and the submission is graded again on its own: the question of that
   cell scores 0, the others count.
4. **Scores and reasons** come from the gradebook, and from the autograded notebooks
   for cells that overran or printed without end.

Every kernel (nbgrader's and the probe's) runs in a sandbox (``tools.sandbox``: a
private folder, the environment read-only, no course root, no secrets, no network, its
own PID namespace and, as root, its own unprivileged user). Screening adds, before each
test cell, a cell that prints the answers the test reads as plain data, and after it one
that prints the calls the test made to the student's functions; after nbgrader, the
grader runs each test again in its own process on those values (``tools.judge``) and
withdraws the points of a test that passed in the kernel only (status ``overruled``).

Then the feedback is generated (without the hidden tests, and a failing test shows its
message, not its traceback), the gradebook is compared with what the grader wrote
(``tools.gradebook_guard``: what anything else wrote is listed and undone), the grades
are exported as CSV, a report (one line per submission: score, status, seconds,
reasons) is written and a summary per assignment printed. The statuses are
``STATUSES``; folders whose name cannot be a student id are ``skipped``, with the reason.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import csv
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from tools import assignments as course
from tools import gradebook_db, gradebook_guard, judge

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]*$")
TRUNCATED = "... Output truncated ..."
DEFAULT_CELL_TIMEOUT = 30
MAX_REPAIRS = 4


def _meta(cell: dict) -> dict:
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
    return nbg if isinstance(nbg, dict) else {}


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(str(part) for part in source)
    return source if isinstance(source, str) else str(source)


def _new_cell(cell_type: str, source: str, metadata: dict, cell_id: str):
    if cell_type == "code":
        cell = nbformat.v4.new_code_cell(source, metadata=metadata)
    elif cell_type == "markdown":
        cell = nbformat.v4.new_markdown_cell(source, metadata=metadata)
    else:
        cell = nbformat.v4.new_raw_cell(source, metadata=metadata)
    cell["id"] = cell_id
    return cell


# --------------------------------------------------------------------------- screening


@dataclass
class Screened:
    """A submitted notebook after screening.

    ``notebook`` is what nbgrader grades (locked cells as released) and ``probe`` the
    same with the locked cells of the source (hidden tests in), which is what nbgrader
    executes. Both are None when the notebook is rejected.
    """

    notebook: dict | None
    probe: dict | None
    reasons: list[str] = field(default_factory=list)
    rejected: bool = False
    graded_ids: list[str | None] = field(default_factory=list)  # grade id per cell, None if plain


def screen(text: str, source: dict, release: dict) -> Screened:
    """Check a submitted notebook (its file text) against its source and release; repair it."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        where = f", line {exc.lineno}" if hasattr(exc, "lineno") else ""
        return Screened(
            None, None, [f"not valid JSON ({getattr(exc, 'msg', exc)}{where}): scored 0"], True
        )
    upgraded = []
    if isinstance(data, dict) and "worksheets" in data and data.get("nbformat", 3) < 4:
        old = data.get("nbformat", 3)
        try:
            data = json.loads(json.dumps(nbformat.convert(nbformat.from_dict(data), 4)))
            upgraded = [f"an nbformat {old} notebook: upgraded to nbformat 4"]
        except Exception as exc:  # a broken old notebook
            return Screened(
                None,
                None,
                [f"not a notebook (an old format nbformat cannot read: {exc}): scored 0"],
                True,
            )
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return Screened(None, None, ["not a notebook (no list of cells): scored 0"], True)

    released = [c for c in release["cells"] if _meta(c).get("grade_id")]
    known = {_meta(c)["grade_id"]: c for c in released}
    order = [_meta(c)["grade_id"] for c in released]
    source_text = {
        _meta(c).get("grade_id"): _text(c) for c in source["cells"] if _meta(c).get("grade_id")
    }
    answers = {g for g, c in known.items() if _meta(c).get("solution")}
    reasons: list[str] = list(upgraded)
    occurrences: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    extras: dict[str | None, list[tuple[str, str]]] = collections.defaultdict(list)
    seen_order: list[str] = []
    anchor = None
    dropped = 0
    for raw in data["cells"]:
        if not isinstance(raw, dict):
            dropped += 1
            continue
        ctype = (
            raw.get("cell_type") if raw.get("cell_type") in ("code", "markdown", "raw") else "raw"
        )
        text_ = _text(raw)
        gid = _meta(raw).get("grade_id")
        if not isinstance(gid, str) or gid not in known:
            if isinstance(gid, str) and gid:
                reasons.append(f"a cell with the unknown grade id {gid!r} was kept as a plain cell")
            extras[anchor].append((ctype, text_))
            continue
        if gid not in occurrences:
            seen_order.append(gid)
        occurrences[gid].append((ctype, text_))
        anchor = gid
    if dropped:
        reasons.append(
            f"{dropped} entr{'y' if dropped == 1 else 'ies'} of the cell list "
            "that were not cells dropped"
        )

    for gid in order:
        rc = known[gid]
        found = occurrences.get(gid, [])
        if gid in answers:
            if not found:
                reasons.append(f"answer cell {gid} was deleted: counted as not answered")
            elif len(found) > 1:
                reasons.append(
                    f"answer cell {gid} appears {len(found)} times: the last one is graded"
                )
            if found and found[-1][0] != rc["cell_type"]:
                reasons.append(
                    f"answer cell {gid} was turned into a {found[-1][0]} cell: "
                    f"graded as {rc['cell_type']}"
                )
            continue
        if not found:
            reasons.append(f"locked cell {gid} was deleted: restored")
            continue
        if len(found) > 1:
            reasons.append(
                f"locked cell {gid} was copied ({len(found)} copies): the copies were removed"
            )
        ctype, text_ = found[0]
        if ctype != rc["cell_type"]:
            reasons.append(f"locked cell {gid} was turned into a {ctype} cell: restored")
        elif text_ != _text(rc):
            reasons.append(f"locked cell {gid} was edited: restored")
    if [g for g in seen_order] != [g for g in order if g in occurrences]:
        reasons.append("graded cells were out of order: put back in the order of the release")

    graded, probe, ids = [], [], []

    def emit(cell_type, text_, metadata, cell_id, gid, probe_text=None):
        graded.append(_new_cell(cell_type, text_, metadata, cell_id))
        probe.append(
            _new_cell(cell_type, text_ if probe_text is None else probe_text, metadata, cell_id)
        )
        ids.append(gid)

    counter = iter(range(1, 1_000_000))

    def emit_extras(key):
        for ctype, text_ in extras.get(key, []):
            emit(ctype, text_, {}, f"student-{next(counter)}", None)

    # the grader's exporter first, then each graded test cell preceded by its export cell
    # (tools.judge: the answers the test reads, printed as plain data)
    locked_names = set()
    for c in source["cells"]:
        if _meta(c).get("locked") or (_meta(c).get("grade") and not _meta(c).get("solution")):
            locked_names |= judge.names_bound(_text(c))
    functions = judge.callable_names(source)
    emit("code", judge.EXPORTER, {}, f"{judge.EXPORT_ID}-def", None)
    emit_extras(None)
    for gid in order:
        rc = known[gid]
        metadata = json.loads(json.dumps(rc.get("metadata", {})))
        cell_id = rc.get("id") or gid
        is_test = (
            _meta(rc).get("grade") and not _meta(rc).get("solution") and rc["cell_type"] == "code"
        )
        if is_test:
            needed = judge.names_read(source_text.get(gid, _text(rc))) - locked_names
            source = judge.export_cell_source(
                sorted(needed - functions), sorted(needed & functions)
            )
            emit("code", source, {}, f"{judge.EXPORT_ID}-{gid}", None)
        if gid in answers:
            found = occurrences.get(gid) or [(rc["cell_type"], _text(rc))]
            for ctype, text_ in found[:-1]:
                emit(ctype, text_, {}, f"student-{next(counter)}", None)
            emit(rc["cell_type"], found[-1][1], metadata, cell_id, gid)
        else:
            emit(
                rc["cell_type"], _text(rc), metadata, cell_id, gid, source_text.get(gid, _text(rc))
            )
        if is_test:
            emit("code", judge.CALLS_SOURCE, {}, f"{judge.CALLS_ID}-{gid}", None)
        emit_extras(gid)

    def notebook(cells):
        nb = nbformat.v4.new_notebook(cells=cells)
        nb.metadata = json.loads(json.dumps(release.get("metadata", {})))
        return nb

    return Screened(notebook(graded), notebook(probe), reasons, False, ids)


# --------------------------------------------------------------------------- processes


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (kernels run in their own session, so not in its group)."""
    try:
        out = subprocess.run(
            ["ps", "-A", "-o", "pid=", "-o", "ppid="], capture_output=True, text=True, timeout=20
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    children = collections.defaultdict(list)
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            children[int(parts[1])].append(int(parts[0]))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_tree(proc: subprocess.Popen) -> None:
    for pid in [proc.pid] + _descendants(proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def _limits(memory_mb: int):
    def apply():
        if memory_mb:
            import resource

            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def run_limited(
    cmd: list[str], cwd: Path, wall: float, log: Path, memory_mb: int = 0, env: dict | None = None
) -> int | None:
    """Run ``cmd`` in a new process group; its output goes to ``log``.

    Returns the exit code, or None when it ran over ``wall`` seconds (then it and
    every process it started are killed).
    """
    with open(log, "w") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_limits(memory_mb),
            env=course.tool_env(env),
        )
        try:
            return proc.wait(timeout=wall)
        except subprocess.TimeoutExpired:
            _kill_tree(proc)
            proc.wait()
            return None
        finally:
            for pid in _descendants(proc.pid):  # nothing should be left; make sure
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


# --------------------------------------------------------------------------- probing


def _probe_main(path: Path, cell_timeout: int) -> int:
    """Run one notebook cell by cell; print where it stops the kernel or overruns (JSON)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    nb = nbformat.read(path, as_version=4)
    marker = path.with_suffix(".probe-index")
    current = {"index": None}

    def started(cell, cell_index, **_):
        current["index"] = cell_index
        marker.write_text(str(cell_index))

    client = NotebookClient(
        nb,
        timeout=cell_timeout,
        interrupt_on_timeout=False,
        allow_errors=True,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        on_cell_execute=started,
        shutdown_kernel="immediate",
    )
    if os.environ.get("MEMCOURSE_SANDBOX", "bwrap") != "off":
        from tools.sandbox import SandboxKernelManager

        client.kernel_manager_class = SandboxKernelManager
    try:
        client.execute()
        result = {"status": "ok"}
    except CellTimeoutError:
        result = {"status": "timeout", "index": current["index"]}
    except DeadKernelError:
        result = {"status": "dead", "index": current["index"]}
    except Exception as exc:  # anything else that stops a run is the cell's fault too
        result = {"status": "error", "index": current["index"], "message": str(exc)[:300]}
    print("PROBE " + json.dumps(result), flush=True)
    return 0


def probe(
    notebook: dict, folder: Path, cell_timeout: int, memory_mb: int = 0, env: dict | None = None
) -> dict:
    """Where does ``notebook`` stop its kernel or overrun? ``{"status", "index"}``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "probe.ipynb"
    nbformat.write(nbformat.from_dict(notebook), path)
    marker = path.with_suffix(".probe-index")
    marker.unlink(missing_ok=True)
    cells = sum(1 for c in notebook["cells"] if c["cell_type"] == "code")
    wall = 60 + cell_timeout * (cells + 2)
    log = folder / "probe.log"
    rc = run_limited(
        [
            sys.executable,
            "-m",
            "tools.grading",
            "--probe",
            str(path),
            "--cell-timeout",
            str(cell_timeout),
        ],
        course.ROOT,
        wall,
        log,
        memory_mb,
        env,
    )
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("PROBE "):
            return json.loads(line[6:])
    index = int(marker.read_text()) if marker.exists() else None
    return {"status": "timeout" if rc is None else "dead", "index": index}


def neutralise(screened: Screened, index: int, why: str) -> str | None:
    """Replace the student's cell at fault (or the answer before a locked cell at fault).

    Returns the grade id (or 'an added cell') that was replaced, None if nothing could be.
    """
    cells = screened.notebook["cells"]
    target = min(index, len(cells) - 1)
    while target >= 0 and not (
        cells[target]["cell_type"] == "code"
        and not _meta(cells[target]).get("locked")
        and not judge.grader_cell(cells[target])
    ):
        target -= 1
    if target < 0:
        return None
    stub = f'raise RuntimeError("The grader replaced this cell: {why}.")'
    for nb in (screened.notebook, screened.probe):
        nb["cells"][target]["source"] = stub
    return screened.graded_ids[target] or "a cell the student added"


# --------------------------------------------------------------------------- grading


@dataclass
class Outcome:
    """The result of grading one submission."""

    student: str
    assignment: str
    score: float = 0.0
    max_score: float = 0.0
    status: str = "ok"  # ok, repaired, rejected, failed
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0
    needs_manual: bool = False
    note: str = ""  # what went wrong with the grader itself, not with the submission


@dataclass
class Staged:
    """A submission ready for nbgrader: its screened notebooks and what screening found."""

    assignment: str
    student: str
    folder: Path  # where the student's files are
    screened: dict[str, Screened]
    reasons: list[str]
    handed_in: bool
    suspects: list[str] = field(default_factory=list)  # notebooks a batch run failed on
    batch_error: str = ""  # nbgrader's error when a batch failed on it
    sources: dict = field(default_factory=dict)  # the source notebook of each name
    screen_seconds: float = 0.0


@dataclass
class Settings:
    root: Path
    submitted: Path
    db_url: str
    cell_timeout: int = DEFAULT_CELL_TIMEOUT
    wall: float | None = None  # per submission; None: from the number of cells
    memory_mb: int = 4096
    work: Path | None = None  # staging area (a temporary directory by default)
    sandbox: str = "bwrap"  # "bwrap": every kernel in the sandbox (tools.sandbox); "off"
    ledger: dict = field(default_factory=dict)  # the gradebook rows as the grader left them
    boxes: Path | None = None  # where the sandboxes' private folders go (removed at the end)


def grader_env(settings: Settings, times: Path | None = None) -> dict:
    """The environment of the nbgrader processes: how their kernels are sandboxed.

    (The kernels themselves get none of it: the sandbox starts them with a clean one.)
    """
    import memkit

    tools_root = str(Path(__file__).resolve().parents[1])
    env = {
        "MEMCOURSE_SANDBOX": settings.sandbox,
        "MEMCOURSE_SANDBOX_MEMKIT": str(Path(memkit.__file__).resolve().parent),
        "PYTHONPATH": os.pathsep.join(
            [tools_root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        ),
    }
    if times is not None:
        env["MEMCOURSE_SANDBOX_TIMES"] = str(times)
    if settings.boxes is not None:
        env["MEMCOURSE_SANDBOX_TMP"] = str(settings.boxes)
    return env


def default_db_url(root: Path) -> str:
    """$MEMCOURSE_DB_URL, or the SQLite gradebook of the course.

    SQLite waits up to a minute for a lock here (instead of 5 s), since several nbgrader
    processes write to it at once.
    """
    return (
        os.environ.get("MEMCOURSE_DB_URL")
        or f"sqlite:///{Path(root).resolve() / 'gradebook.db'}?timeout=60"
    )


def prepare_gradebook(settings: Settings, which: list[str], release_dir: Path) -> None:
    """Record the assignments (notebooks, graded cells, points) in the gradebook.

    nbgrader does it when it generates the release; the release goes to ``release_dir``
    (a temporary folder), so that ``exercises/`` is left alone.
    """
    every = course.assignments(settings.root)
    patterns = ["session-*"] if sorted(which) == sorted(every) and len(which) > 1 else which
    for pattern in patterns:
        result = course.run_nbgrader(
            [
                "generate_assignment",
                pattern,
                "--force",
                f"--CourseDirectory.release_directory={release_dir}",
                f"--CourseDirectory.db_url={settings.db_url}",
            ],
            cwd=settings.root,
        )
        if result.returncode != 0:
            raise SystemExit(
                f"could not record {pattern} in the gradebook:\n{result.stdout}{result.stderr}"
            )


def _read_nb(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def _scores(settings: Settings, assignment: str, student: str):
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(settings.db_url) as gb:
        try:
            sub = gb.find_submission(assignment, student)
        except MissingEntry:
            return None
        return float(sub.score), float(sub.max_score), bool(sub.needs_manual_grade)


def _record_zero(settings: Settings, assignment: str, student: str) -> None:
    """A submission with nothing nbgrader can run: every grade 0, in the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(settings.db_url) as gb:
        gb.update_or_create_student(student)
        sub = gb.update_or_create_submission(assignment, student)
        for notebook in sub.notebooks:
            for grade in notebook.grades:
                grade.auto_score = 0
                grade.needs_manual_grade = False
        gb.db.commit()


def _scan_autograded(folder: Path, cell_timeout: int) -> list[str]:
    """Reasons read from the autograded notebooks: cells that overran or printed without end."""
    reasons = []
    for path in sorted(folder.glob("*.ipynb")):
        nb = _read_nb(path)
        for index, cell in enumerate(nb.get("cells", [])):
            where = _meta(cell).get("grade_id") or f"cell {index + 1}"
            outputs = cell.get("outputs", [])
            names = {o.get("ename") for o in outputs if o.get("output_type") == "error"}
            if "CellTimeoutError" in names:
                reasons.append(
                    f"{path.name}: {where} ran longer than {cell_timeout} s: interrupted"
                )
            if any(
                TRUNCATED in _text({"source": o.get("text", "")})
                for o in outputs
                if o.get("output_type") == "stream"
            ):
                reasons.append(f"{path.name}: {where} printed without end: output cut")
    return reasons


def _last_error(log: Path) -> str:
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


def stage(
    settings: Settings, assignment: str, student: str, sources: dict, releases: dict
) -> Staged:
    """Screen the notebooks of one submission (``screen``); note what is missing or extra."""
    started = time.monotonic()
    folder = settings.submitted / student / assignment
    reasons: list[str] = []
    screened: dict[str, Screened] = {}
    present = {p.name for p in folder.glob("*.ipynb")}
    for name in sorted(sources):
        if name not in present:
            reasons.append(f"{name}: not handed in: scored 0")
            continue
        raw = (folder / name).read_bytes().decode("utf-8", errors="replace")
        result = screen(raw, sources[name], releases[name])
        reasons += [f"{name}: {r}" for r in result.reasons]
        if not result.rejected:
            screened[name] = result
    for extra in sorted(present - set(sources)):
        reasons.append(f"{extra}: not a notebook of {assignment}: ignored")
    staged = Staged(
        assignment, student, folder, screened, reasons, bool(screened), sources=sources
    )
    staged.screen_seconds = time.monotonic() - started
    return staged


def _write_stage(staged: Staged, into: Path) -> None:
    """Write a staged submission as ``into/<student>/<assignment>/`` for nbgrader."""
    target = into / staged.student / staged.assignment
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for item in staged.folder.iterdir():
        if item.is_file() and item.suffix != ".ipynb":
            shutil.copy(item, target / item.name)
    for name, s in staged.screened.items():
        nbformat.write(nbformat.from_dict(s.notebook), target / name)


def _autograde_cmd(
    settings: Settings, assignment: str, submitted: Path, student: str = "*"
) -> list[str]:
    from tools import sandbox

    return course.nbgrader_command() + [
        "autograde",
        assignment,
        f"--student={student}",
        "--force",
        f"--CourseDirectory.submitted_directory={submitted}",
        f"--CourseDirectory.db_url={settings.db_url}",
        f"--Execute.timeout={settings.cell_timeout}",
        f"--SandboxExecute.timeout={settings.cell_timeout}",
        f"--Autograde.autograde_preprocessors={sandbox.autograde_preprocessors()}",
        "--Application.log_format=[%(created).3f %(name)s | %(levelname)s] %(message)s",
    ]


def _wall(settings: Settings, staged: Staged) -> float:
    cells = sum(len(s.notebook["cells"]) for s in staged.screened.values())
    return settings.wall or 90 + settings.cell_timeout * (cells + 4)


def _complete(settings: Settings, staged: Staged) -> bool:
    folder = settings.root / "autograded" / staged.student / staged.assignment
    return all((folder / name).exists() for name in staged.screened)


def finish(
    settings: Settings, staged: Staged, graded: bool, extra: list[str], seconds: float
) -> Outcome:
    """The outcome of a submission once nbgrader is done with it (or gave up)."""
    outcome = Outcome(staged.student, staged.assignment, reasons=staged.reasons + extra)
    autograded = settings.root / "autograded" / staged.student / staged.assignment
    overruled: list[str] = []
    if graded:
        outcome.reasons += _scan_autograded(autograded, settings.cell_timeout)
        overruled = apply_judgement(settings, staged, autograded)
        outcome.reasons += overruled
    else:
        shutil.rmtree(autograded, ignore_errors=True)
        _record_zero(settings, staged.assignment, staged.student)
    found = _scores(settings, staged.assignment, staged.student)
    if found:
        outcome.score, outcome.max_score, outcome.needs_manual = found
    outcome.status = status_of(graded, staged.handed_in, outcome.reasons, bool(overruled))
    outcome.seconds = seconds + staged.screen_seconds
    return outcome


# The status of a graded submission, most serious first.
STATUSES = {
    "failed": "nothing could be graded: scored 0",
    "rejected": "a notebook could not be read (not a notebook, not valid JSON): it scored 0",
    "missing": "no notebook of the assignment was handed in: scored 0",
    "incomplete": "a notebook of the assignment was not handed in: it scored 0, the others count",
    "overruled": "a test passed in the student's kernel but not when the grader checked the "
    "answers: its points were withdrawn",
    "repaired": "graded after a repair (reasons given)",
    "ok": "graded as handed in",
    "skipped": "not graded (reason given): the instructor must act",
}


def status_of(graded: bool, handed_in: bool, reasons: list[str], overruled: bool) -> str:
    unreadable = any(("not valid JSON" in r or "not a notebook" in r) for r in reasons)
    missing = any("not handed in: scored 0" in r for r in reasons)
    if not graded:
        if unreadable:
            return "rejected"
        return "missing" if not handed_in and missing else "failed"
    if unreadable:
        return "rejected"
    if missing:
        return "incomplete"
    if overruled:
        return "overruled"
    if any("scored 0" in r for r in reasons):
        return "failed" if not handed_in else "repaired"
    return "repaired" if reasons else "ok"


def apply_judgement(settings: Settings, staged: Staged, autograded: Path) -> list[str]:
    """The grader's own check of each test cell (``tools.judge``); withdraw what it fails.

    A test cell nbgrader gave points to but the grader's re-run fails scores 0 (in the
    gradebook), and its cell in the autograded notebook gets the grader's error, so the
    feedback says why. The export cells are removed from the autograded notebooks.
    Returns the reasons (one per withdrawn test).
    """
    from nbgrader.api import Gradebook, MissingEntry

    reasons: list[str] = []
    withdrawn: list[tuple[str, str]] = []
    for name in sorted(staged.screened):
        path = autograded / name
        if not path.exists():
            continue
        nb = _read_nb(path)
        exports, calls = judge.read_exports(nb)
        source = staged.sources.get(name)
        verdicts = (
            judge.judge_apart(source, exports, calls, memory_mb=settings.memory_mb)
            if source
            else judge.Judgement(problem="no source")
        )
        if verdicts.problem:
            reasons.append(f"{name}: not checked by the grader ({verdicts.problem})")
        for cell in nb.get("cells", []):
            gid = _meta(cell).get("grade_id")
            verdict = verdicts.verdicts.get(gid)
            if not verdict or verdict.passed is not False:
                continue
            outputs = cell.setdefault("outputs", [])
            if any(o.get("output_type") == "error" for o in outputs):
                continue  # failed in the kernel too: nbgrader gave it nothing
            ename, _, evalue = verdict.message.partition(": ")
            outputs.append(
                {
                    "output_type": "error",
                    "ename": ename,
                    "evalue": evalue,
                    "traceback": [f"{verdict.message} (checked by the grader)"],
                }
            )
            withdrawn.append((name, gid))
            reasons.append(
                f"{name}: {gid} passed in the student's kernel but not when the grader "
                "checked the answers: its points were withdrawn"
            )
        nb["cells"] = [c for c in nb.get("cells", []) if not judge.grader_cell(c)]
        path.write_text(json.dumps(nb, indent=1))
    if withdrawn:
        with Gradebook(settings.db_url) as gb:
            for name, gid in withdrawn:
                try:
                    grade = gb.find_grade(
                        gid, name[: -len(".ipynb")], staged.assignment, staged.student
                    )
                except MissingEntry:
                    continue
                grade.auto_score = 0
            gb.db.commit()
    return reasons


def grade_isolated(settings: Settings, staged: Staged) -> Outcome:
    """Grade one submission in its own nbgrader process; repair and retry if nbgrader fails on it.

    When nbgrader gives up on the submission, its notebooks are probed cell by cell (the
    one nbgrader was running first); the cell that stops the kernel or cannot be
    interrupted is replaced by one that raises (the answer before it if the cell is
    locked), and the submission is graded again. A submission a batch already failed on
    (``staged.suspects``) goes to the probe at once.
    """
    start = time.monotonic()
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
        if not probe_first:
            _write_stage(staged, where / "submitted")
            log = where / f"autograde-{attempt}.log"
            for retry in range(3):
                rc = run_limited(
                    _autograde_cmd(
                        settings, staged.assignment, where / "submitted", staged.student
                    ),
                    settings.root,
                    _wall(settings, staged),
                    log,
                    settings.memory_mb,
                    grader_env(settings),
                )
                if rc is None or "database is locked" not in log.read_text(errors="replace"):
                    break
                time.sleep(1 + retry)
            if rc == 0 and _complete(settings, staged):
                graded = True
                break
        repaired = False
        for name in (
            suspects if probe_first else suspects + [n for n in screened if n not in suspects]
        ):
            s = screened[name]
            found = probe(
                s.probe,
                where / "probe" / name.replace(".ipynb", ""),
                settings.cell_timeout,
                settings.memory_mb,
                grader_env(settings),
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
            extra.append(
                "nbgrader could not grade it ("
                + ("time limit of the submission reached" if rc is None else _last_error(log))
                + "): scored 0"
            )
            screened.clear()
    if not graded and screened:
        extra.append(
            f"nbgrader still failed after {MAX_REPAIRS} repairs ({_last_error(log)}): scored 0"
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
        _write_stage(staged, where / "submitted")
    log = where / "autograde.log"
    by_key = {(s.student, s.assignment): s for s in batch}
    names = sorted({s.assignment for s in batch})
    order: list[tuple[str, str]] = []
    reported: set[tuple[str, str]] = set()
    failed_line = re.compile(
        r"There was an error processing assignment '([^']+)' for student '([^']+)'"
    )
    path_of = re.compile(re.escape(str(where / "submitted")) + r"/([^/\s]+)/([^/\s]+)/")
    wall = sum(_wall(settings, s) for s in batch)
    start = time.monotonic()
    last = [start]
    cmd = _autograde_cmd(settings, names[0] if len(names) == 1 else "*", where / "submitted")

    def done(key) -> None:
        reported.add(key)
        now = time.monotonic()
        spans = _spans(log.read_text(errors="replace"), path_of)
        report(finish(settings, by_key[key], True, [], spans.get(key, now - last[0])))
        last[0] = now

    with open(log, "w") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=settings.root,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_limits(settings.memory_mb),
            env=course.tool_env(grader_env(settings)),
        )
        while True:
            try:
                proc.wait(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() - start > wall:
                    _kill_tree(proc)
                    proc.wait()
                    break
            # report the submissions nbgrader has moved past
            for key in path_of.findall(log.read_text(errors="replace")):
                if key in by_key and key not in order:
                    order.append(key)
            for key in order[:-1]:
                if key not in reported and _complete(settings, by_key[key]):
                    done(key)
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
    finished = proc.returncode in (0, 1) and time.monotonic() - start <= wall
    leftovers = []
    for key in order + [k for k in by_key if k not in order]:
        if key in reported:
            continue
        if finished and key in order and key not in failed and _complete(settings, by_key[key]):
            done(key)
        else:
            leftovers.append(by_key[key])
    return leftovers


def collect_zips(settings: Settings, zips: list[Path], which: list[str]) -> None:
    """Unpack class archives into the submitted tree with ``nbgrader zip_collect``."""
    for assignment in which:
        with tempfile.TemporaryDirectory(prefix="memcourse-zip-") as tmp:
            archive = Path(tmp) / "downloaded" / assignment / "archive"
            archive.mkdir(parents=True)
            for z in zips:
                shutil.copy(z, archive / Path(z).name)
            regexp = (
                rf".*/(?P<student_id>(?!session-\d+/)[^/.][^/]*)/(?:{re.escape(assignment)}/)?"
                r"(?P<file_id>[^/.][^/]*\.ipynb)$"
            )
            # nbgrader joins this folder to the course root before formatting: give it relative
            downloaded = os.path.relpath(Path(tmp) / "downloaded", settings.root)
            result = course.run_nbgrader(
                [
                    "zip_collect",
                    assignment,
                    "--force",
                    f"--ZipCollectApp.downloaded_directory={downloaded}",
                    f"--CourseDirectory.submitted_directory={settings.submitted}",
                    f"--FileNameCollectorPlugin.named_regexp={regexp}",
                ],
                cwd=settings.root,
            )
            if result.returncode != 0:
                raise SystemExit(
                    f"nbgrader zip_collect {assignment} failed:\n{result.stdout}{result.stderr}"
                )


def submissions(settings: Settings, which: list[str], only: list[str] | None = None):
    """(assignment, student) pairs found in the submitted tree, and the folders left out."""
    found, skipped = [], []
    if not settings.submitted.is_dir():
        return found, skipped
    for folder in sorted(settings.submitted.iterdir()):
        if not folder.is_dir() or folder.name in IGNORED_FOLDERS:
            continue
        if only and folder.name not in only:
            continue
        for assignment in which:
            if (folder / assignment).is_dir():
                if STUDENT_ID.match(folder.name):
                    found.append((assignment, folder.name))
                else:
                    skipped.append(
                        f"{folder.name}/{assignment}: not graded: {odd_id_reason(folder.name)}"
                    )
    return found, skipped


IGNORED_FOLDERS = {".ipynb_checkpoints", "__MACOSX", ".DS_Store"}


def odd_id_reason(name: str) -> str:
    """Why a folder name cannot be a student id for nbgrader (said in the report)."""
    if name.startswith("."):
        why = "it starts with a dot (a hidden folder)"
    elif name.startswith("-"):
        why = "it starts with a dash (read as an option)"
    elif any(c.isspace() for c in name):
        why = "it holds a space"
    elif not name.isascii():
        why = "it holds a character outside ASCII"
    else:
        bad = sorted({c for c in name if not (c.isalnum() or c in "._@+-")})
        why = f"it holds {' '.join(repr(c) for c in bad) or 'a character nbgrader refuses'}"
    return (
        f"the folder name {name!r} is not a usable student id ({why}); rename the folder "
        "to the student's id (letters, digits, . _ @ + -) and grade again"
    )


def feedback(settings: Settings, outcomes: list[Outcome], jobs: int = 2) -> list[str]:
    """Generate the feedback (HTML) of every graded submission, in ``jobs`` nbgrader processes.

    Each process sees a share of the students (a folder of links to their autograded
    folders); if one fails, its students are done one at a time so that the failure is
    named.
    """
    pairs = sorted(
        {
            (o.student, o.assignment)
            for o in outcomes
            if (settings.root / "autograded" / o.student / o.assignment).is_dir()
        }
    )
    graded = sorted({student for student, _ in pairs})
    if not graded:
        return []
    parts = max(1, min(jobs, len(graded)))
    groups = [graded[i::parts] for i in range(parts)]

    def run(group: list[str], name: str, student: str = "*") -> bool:
        share = settings.work / "feedback" / name
        shutil.rmtree(share, ignore_errors=True)
        for who, assignment in pairs:
            if who in group:
                feedback_copy(
                    settings.root / "autograded" / who / assignment, share / who / assignment
                )
        result = course.run_nbgrader(
            [
                "generate_feedback",
                "*",
                "--force",
                f"--student={student}",
                f"--CourseDirectory.autograded_directory={share}",
                f"--CourseDirectory.db_url={settings.db_url}",
            ],
            cwd=settings.root,
        )
        return result.returncode == 0

    problems = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=parts) as pool:
        done = list(pool.map(lambda ig: run(ig[1], f"part-{ig[0]}"), enumerate(groups)))
    for ok, group in zip(done, groups):
        if ok:
            continue
        for student in group:
            if not run([student], f"one-{student}", student):
                problems.append(f"{student}: feedback could not be generated")
    return problems


def feedback_copy(autograded: Path, into: Path) -> None:
    """A copy of an autograded folder for the feedback: a failing test shows its message only.

    The error of a test cell keeps its name and message ("AssertionError: q5: not the
    right choice"), not its traceback, whose lines would show the hidden test that failed
    (its expected value included).
    """
    into.mkdir(parents=True, exist_ok=True)
    for item in autograded.iterdir():
        if not item.is_file():
            continue
        if item.suffix != ".ipynb":
            shutil.copy(item, into / item.name)
            continue
        nb = _read_nb(item)
        for cell in nb.get("cells", []):
            meta = _meta(cell)
            if not (meta.get("grade") and not meta.get("solution")):
                continue
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    message = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
                    output["traceback"] = [message.rstrip(": ")]
        (into / item.name).write_text(json.dumps(nb, indent=1))


def export_csv(settings: Settings, path: Path) -> None:
    result = course.run_nbgrader(
        ["export", f"--to={path}", f"--db={settings.db_url}"], cwd=settings.root
    )
    if result.returncode != 0:
        raise SystemExit(f"nbgrader export failed:\n{result.stdout}{result.stderr}")


def write_report(outcomes: list[Outcome], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            [
                "assignment",
                "student",
                "score",
                "max_score",
                "status",
                "needs_manual_grading",
                "seconds",
                "reasons",
                "grader_note",
            ]
        )
        for o in sorted(outcomes, key=lambda o: (o.assignment, o.student)):
            writer.writerow(
                [
                    o.assignment,
                    o.student,
                    "" if o.status == "skipped" else f"{o.score:g}",
                    "" if o.status == "skipped" else f"{o.max_score:g}",
                    o.status,
                    "yes" if o.needs_manual else "no",
                    f"{o.seconds:.1f}",
                    " | ".join(o.reasons),
                    o.note,
                ]
            )


SUMMARY_STATUSES = ["repaired", "overruled", "incomplete", "missing", "rejected", "failed"]


def summary(outcomes: list[Outcome], which: list[str], problems: list[str] = ()) -> str:
    """The table printed at the end: per assignment, and the submissions with a problem.

    ``graded`` counts the submissions graded (the mean, min and max are theirs);
    ``skipped`` those that could not be (listed below with the reason).
    """
    lines = [
        f"{'assignment':<12} {'graded':>6} {'mean':>7} {'min':>6} {'max':>6} {'of':>5} "
        + " ".join(f"{s:>{max(6, len(s))}}" for s in SUMMARY_STATUSES + ["skipped", "manual"])
    ]
    for assignment in sorted({o.assignment for o in outcomes} | set(which), key=_session_key):
        mine = [o for o in outcomes if o.assignment == assignment and o.status != "skipped"]
        count = collections.Counter(o.status for o in outcomes if o.assignment == assignment)
        tail = " ".join(
            f"{count[s]:>{max(6, len(s))}}" for s in SUMMARY_STATUSES + ["skipped"]
        )
        if not mine:
            lines.append(
                f"{assignment:<12} {0:>6} {'-':>7} {'-':>6} {'-':>6} {'-':>5} {tail} {0:>6}"
            )
            continue
        scores = [o.score for o in mine]
        lines.append(
            f"{assignment:<12} {len(mine):>6} {statistics.mean(scores):>7.2f} {min(scores):>6g} "
            f"{max(scores):>6g} {max(o.max_score for o in mine):>5g} {tail} "
            f"{sum(o.needs_manual for o in mine):>6}"
        )
    lines.append("")
    lines.append(
        "status: "
        + "; ".join(f"{s}: {STATUSES[s]}" for s in ["ok"] + SUMMARY_STATUSES + ["skipped"])
    )
    trouble = [o for o in outcomes if o.status != "ok"]
    if trouble:
        lines.append("")
        lines.append("Submissions with a problem (status: reasons):")
        for o in sorted(trouble, key=lambda o: (o.assignment, o.student)):
            score = "-" if o.status == "skipped" else f"{o.score:g}/{o.max_score:g}"
            lines.append(f"  {o.assignment} {o.student} {score} {o.status}:")
            lines += [f"      {r}" for r in o.reasons]
    noted = [o for o in outcomes if o.note]
    if noted:
        lines.append("")
        lines.append("Grader notes (not the submission's fault; graded as normal):")
        for o in sorted(noted, key=lambda o: (o.assignment, o.student)):
            lines.append(f"  {o.assignment} {o.student}: {o.note}")
    if problems:
        lines.append("")
        lines.append("The gradebook was changed by something other than the grader during the run")
        lines.append("(the changes were undone before the export):")
        lines += [f"  {p}" for p in problems]
    return "\n".join(lines)


def _session_key(name: str):
    m = course.ASSIGNMENT.match(name)
    return (0, int(m.group(1)), name) if m else (1, 0, name)


def _say(line: str) -> None:
    print(line, flush=True)


def grade_class(
    settings: Settings,
    which: list[str],
    only: list[str] | None = None,
    jobs: int = 2,
    isolate: bool = False,
    progress=_say,
    scheduler: str | None = None,
) -> tuple[list[Outcome], list[str]]:
    """Grade every submission of ``which``; return the outcomes and the folders left out.

    The submissions are split in batches, each graded by one nbgrader process (nbgrader
    starts once per batch, not once per submission) on a worker of a Dask cluster
    (``tools.cluster``: ``jobs`` local worker processes, or the workers of
    ``scheduler``); a submission nbgrader fails on is then graded again on its own
    (``grade_isolated``). With ``isolate`` every submission gets its own process from
    the start.
    """
    if settings.sandbox != "off":
        from tools import sandbox

        problem = sandbox.unusable()
        if problem:
            raise SystemExit(problem)
    with gradebook_db.exclusive(settings.db_url):  # the first grader creates the tables
        settings.ledger = gradebook_guard.snapshot(settings.db_url)
    pairs, skipped = submissions(settings, which, only)
    odd = [
        Outcome(
            line.split("/", 1)[0],
            line.split("/", 1)[1].split(":", 1)[0],
            status="skipped",
            reasons=[line.split(": not graded: ", 1)[1]],
        )
        for line in skipped
    ]
    if not pairs:
        return odd, skipped
    graded_assignments = sorted({a for a, _ in pairs}, key=which.index)
    sources = {
        a: {p.name: _read_nb(p) for p in course.notebooks(settings.root, a)}
        for a in graded_assignments
    }
    outcomes: list[Outcome] = list(odd)
    lock = threading.Lock()
    width = len(str(len(pairs)))

    def report(outcome: Outcome) -> None:
        with lock:
            try:  # the rows the grader just wrote: the reference for the final check
                settings.ledger.update(
                    gradebook_guard.snapshot(settings.db_url, outcome.assignment, outcome.student)
                )
            except Exception as exc:  # noqa: BLE001 - keep grading; the check will tell
                outcome.note = f"its gradebook rows could not be read back ({exc})"
            outcomes.append(outcome)
            mark = "" if outcome.status == "ok" else f"  {outcome.status}"
            progress(
                f"[{len(outcomes) - len(odd):>{width}}/{len(pairs)}] "
                f"{outcome.assignment} {outcome.student:<16} "
                f"{outcome.score:g}/{outcome.max_score:g}{mark} ({outcome.seconds:.1f} s)"
            )

    with tempfile.TemporaryDirectory(prefix="memcourse-grading-") as tmp:
        # the private folders of the sandboxes: one a kernel killed before its clean-up
        # leaves behind goes with this folder
        settings.boxes = Path(tmp) / "boxes"
        settings.boxes.mkdir()
        release_tmp = Path(tmp) / "release"
        with gradebook_db.exclusive(settings.db_url):  # one grader at a time (a server)
            prepare_gradebook(settings, graded_assignments, release_tmp)
            gradebook_db.add_students(settings.db_url, [s for _, s in pairs])
        releases = {
            a: {p.name: _read_nb(p) for p in sorted((release_tmp / a).glob("*.ipynb"))}
            for a in graded_assignments
        }
        own_work = settings.work is None
        if own_work:
            settings.work = Path(tmp) / "work"
        progress(
            f"grading {len(pairs)} submission(s) of {len(graded_assignments)} assignment(s), "
            f"{jobs} at a time, {settings.cell_timeout} s per cell"
        )
        staged = [stage(settings, a, s, sources[a], releases[a]) for a, s in pairs]
        runnable = [s for s in staged if s.screened]
        for s in staged:
            if not s.screened:  # nothing nbgrader can run
                report(finish(settings, s, False, [], 0.0))
        from tools import cluster

        cluster.grade(settings, runnable, jobs, isolate, report, scheduler, progress)
        if own_work:
            settings.work = None
        settings.boxes = None
    return outcomes, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.grading",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("assignments", nargs="*", help="e.g. session-3 (default: every assignment)")
    parser.add_argument("--course-dir", type=Path, default=course.ROOT)
    parser.add_argument(
        "--submitted", type=Path, help="the submitted tree (default: <course>/submitted)"
    )
    parser.add_argument(
        "--zip",
        type=Path,
        action="append",
        default=[],
        help="a class archive as nbgrader zip_collect expects (repeatable)",
    )
    parser.add_argument("--student", action="append", default=[], help="grade only these students")
    parser.add_argument(
        "--cell-timeout",
        type=int,
        default=int(os.environ.get("MEMCOURSE_CELL_TIMEOUT", DEFAULT_CELL_TIMEOUT)),
    )
    parser.add_argument(
        "--timeout", type=float, help="seconds for one whole submission (default: from its size)"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 2,
        help="worker processes of the local cluster (default: one per core)",
    )
    parser.add_argument(
        "--scheduler",
        default=os.environ.get("MEMCOURSE_SCHEDULER") or None,
        help="grade on the workers of this Dask scheduler, e.g. tcp://host:8786 (default: "
        "$MEMCOURSE_SCHEDULER, or a local cluster of --jobs workers); the gradebook must "
        "then be a server (tools.cluster)",
    )
    parser.add_argument("--memory-limit", type=int, default=4096, help="MB per process (0: none)")
    parser.add_argument(
        "--db-url", help="gradebook (default: $MEMCOURSE_DB_URL or sqlite gradebook.db)"
    )
    parser.add_argument("--csv", type=Path, help="grades CSV (default: <course>/grades.csv)")
    parser.add_argument(
        "--report", type=Path, help="report CSV (default: <course>/autograded/grading-report.csv)"
    )
    parser.add_argument(
        "--isolate",
        action="store_true",
        help="one nbgrader process per submission (slower; default: batches)",
    )
    parser.add_argument("--no-feedback", action="store_true")
    parser.add_argument(
        "--sandbox",
        choices=["bwrap", "off"],
        default=os.environ.get("MEMCOURSE_SANDBOX", "bwrap"),
        help="run every kernel in the bubblewrap sandbox (default), or 'off' (unsafe: "
        "the submissions run as you, with your files, environment and network)",
    )
    parser.add_argument(
        "--work", type=Path, help="keep the screened notebooks and nbgrader's logs in this folder"
    )
    parser.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        return _probe_main(args.probe, args.cell_timeout)

    started = time.monotonic()
    root = args.course_dir.resolve()
    every = course.assignments(root)
    which = args.assignments or every
    unknown = [a for a in which if a not in every]
    if unknown:
        parser.error(f"unknown assignment(s) {', '.join(unknown)}; known: {', '.join(every)}")
    settings = Settings(
        root=root,
        submitted=(args.submitted or root / "submitted").resolve(),
        db_url=args.db_url or default_db_url(root),
        cell_timeout=args.cell_timeout,
        wall=args.timeout,
        memory_mb=args.memory_limit,
        sandbox=args.sandbox,
    )
    from tools import cluster

    refused = cluster.sqlite_refused(settings.db_url, args.scheduler)
    if refused:
        parser.error(refused)
    if settings.sandbox == "bwrap":
        from tools import sandbox

        problem = sandbox.unusable()
        if problem:
            parser.error(problem)
    if args.zip:
        collect_zips(settings, [z.resolve() for z in args.zip], which)
    with tempfile.TemporaryDirectory(prefix="memcourse-grading-") as work:
        settings.work = args.work.resolve() if args.work else Path(work)
        outcomes, skipped = grade_class(
            settings, which, args.student or None, args.jobs, args.isolate,
            scheduler=args.scheduler,
        )
        for line in skipped:
            print(f"skipped {line}")
        if not outcomes:
            print(f"no submission of {', '.join(which)} under {settings.submitted}")
            return 1
        graded_assignments = [a for a in which if any(o.assignment == a for o in outcomes)]
        if not args.no_feedback:
            for problem in feedback(settings, outcomes, args.jobs):
                print(problem)
    # nothing but the grader wrote to the gradebook: else undo it before the export
    tampered = gradebook_guard.check_and_restore(
        settings.db_url,
        settings.ledger,
        gradebook_db.guarded(settings.db_url, [(o.assignment, o.student) for o in outcomes]),
    )
    csv_path = (args.csv or root / "grades.csv").resolve()
    export_csv(settings, csv_path)
    report = (args.report or root / "autograded" / "grading-report.csv").resolve()
    write_report(outcomes, report)
    print()
    print(summary(outcomes, graded_assignments, tampered))
    print()
    print(f"grades: {csv_path}")
    print(f"report: {report}")
    if not args.no_feedback:
        print(f"feedback: {root / 'feedback'}/<student>/<assignment>/")
    print(f"{len(outcomes)} submission(s) in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    # through the module tools.grading, not __main__: the Dask workers unpickle its classes
    from tools.grading import main as _main

    sys.exit(_main())
