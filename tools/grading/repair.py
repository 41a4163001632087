"""Repair: find the cell that stops a notebook run and replace it.

``probe`` runs a notebook cell by cell (in the sandbox, with the limits of
``tools.grading.process_limits`` and the sandbox's settings of the course's
``nbgrader_config.py``, as nbgrader's kernels get them) and says where its kernel died or
a cell could not be interrupted; ``neutralise`` replaces that cell by one that raises
(the answer before it when the cell is locked). ``python -m tools.grading.repair NOTEBOOK
--cell-timeout S --course-dir DIR`` is the probe's own process.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import nbformat

from tools.release import assignments as course
from tools.grading import recheck
from tools.common import nbgrader_cells
from tools.grading.process_limits import run_limited
from tools.grading.screening import Screened

def probe_main(path: Path, cell_timeout: int, course_dir: Path) -> int:
    """Run one notebook cell by cell, its kernel in the sandbox of the course folder
    ``course_dir`` (``tools.grading.box.configured``, the mode of ``$MEMCOURSE_SANDBOX`` over
    the course's); print where it stops the kernel or overruns (JSON)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    from tools.grading.box import configured

    sandbox = configured(course_dir, os.environ.get("MEMCOURSE_SANDBOX") or None)

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
        config=sandbox.config,
    )
    if sandbox.mode != "off":
        from tools.grading.kernels import SandboxKernelManager

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
    notebook: dict, folder: Path, cell_timeout: int, course_dir: Path, memory_mb: int = 0,
    env: dict | None = None, wall: float = 300.0,
) -> dict:
    """Where does ``notebook`` stop its kernel or overrun? ``{"status", "index"}``.

    Its kernel gets the sandbox's settings of the course folder ``course_dir``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "probe.ipynb"
    nbformat.write(nbformat.from_dict(notebook), path)
    marker = path.with_suffix(".probe-index")
    marker.unlink(missing_ok=True)
    log = folder / "probe.log"
    rc = run_limited(
        [
            sys.executable,
            "-m",
            "tools.grading.repair",
            str(path),
            "--cell-timeout",
            str(cell_timeout),
            "--course-dir",
            str(course_dir),
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
        and not nbgrader_cells.is_locked(cells[target])
        and not recheck.grader_cell(cells[target])
    ):
        target -= 1
    if target < 0:
        return None
    stub = f'raise RuntimeError("The grader replaced this cell: {why}.")'
    screened.notebook["cells"][target]["source"] = stub
    return screened.graded_ids[target] or "a cell the student added"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.grading.repair",
        description="Run one notebook cell by cell; print where it stops (the probe's process).",
    )
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--cell-timeout", type=int, required=True)
    parser.add_argument("--course-dir", type=Path, required=True,
                        help="the course folder, whose nbgrader_config.py sets c.Sandbox")
    args = parser.parse_args(argv)
    return probe_main(args.notebook, args.cell_timeout, args.course_dir)


if __name__ == "__main__":
    sys.exit(main())
