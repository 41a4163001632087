"""The settings of one grading run, and the environment nbgrader's processes get.

Stage: none (shared by every stage below the pipeline).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tools import ROOT

DEFAULT_CELL_TIMEOUT = 30


@dataclass
class Settings:
    """What a grading run is given, sent whole to every Dask worker.

    ``work`` and ``boxes`` are the run's folders: the pipeline makes temporary ones for the
    length of a run when none is given, and a worker that cannot see them uses its own
    (``tools.grading.cluster``). The gradebook ledger is not here: ``grade_class`` keeps it
    in the grader and returns it.
    """

    root: Path
    submitted: Path
    db_url: str
    cell_timeout: int = DEFAULT_CELL_TIMEOUT
    wall: float | None = None  # seconds per submission; None: ``submission_limit``
    memory_mb: int = 4096
    work: Path | None = None  # staging area (a temporary directory by default)
    sandbox: str = "bwrap"  # "bwrap": every kernel in the sandbox (tools.grading.box); "off"
    boxes: Path | None = None  # where the sandboxes' private folders go (removed at the end)
    seats: dict = field(default_factory=dict)  # {student id: seat} (memkit.class_list)


def submission_limit(settings: Settings) -> float:
    """The wall-clock seconds one submission may take, all its runs together: ``--timeout``,
    or six cells' time limits and two minutes (an honest one takes seconds). It does not
    grow with the cells a student adds."""
    return float(settings.wall or 120 + 6 * settings.cell_timeout)


def grader_env(settings: Settings) -> dict:
    """The environment of the nbgrader processes: how their kernels are sandboxed.

    (The kernels themselves get none of it: the sandbox starts them with a clean one.)
    """
    import memkit

    env = {
        "MEMCOURSE_SANDBOX": settings.sandbox,
        "MEMCOURSE_SANDBOX_MEMKIT": str(Path(memkit.__file__).resolve().parent),
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        ),
    }
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
