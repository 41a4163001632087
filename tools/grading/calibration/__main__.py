"""``python -m tools.grading.calibration`` (``make calibrate``): every graded question
calibrated over a sample of ids (the notebooks split into chunks of ``CHUNK`` ids, run by
``--jobs`` worker processes), the report written, its failures printed.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import random
import resource
import sys
import time
from pathlib import Path

# one BLAS thread per process, set before numpy loads: the worker processes are the parallelism
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from tools import ROOT  # noqa: E402
from tools.grading.calibration import book, catalog, engine, report, run  # noqa: E402

CHUNK = 25  # ids per task of a worker


def sample_ids(count: int) -> list[str]:
    """``count`` student ids, the same every run (as nbgrader may name students)."""
    return [f"c{random.Random(38_000 + i).getrandbits(40):010x}" for i in range(count)]


def notebooks(only: str | None = None) -> list[Path]:
    paths = sorted((ROOT / "solutions").glob("session-*/*.ipynb"))
    return [p for p in paths if not only or only in f"{p.parent.name}/{p.stem}"]


def _task(args) -> list[run.Result]:
    path, ids, seeds, band_ids, printed = args
    return run.calibrate(path, ids, seeds, band_ids, printed)


def calibrate(ids: list[str], seeds: int, band_ids: int, jobs: int, only: str | None = None) -> list[run.Result]:
    """Every graded question of the notebooks (``only``: whose name holds it), merged over
    the chunks of ids the workers ran."""
    printed = book.printed(ROOT)
    probed = set(ids[:band_ids])
    tasks = [(path, ids[i:i + CHUNK], seeds, probed, printed)
             for path in notebooks(only) for i in range(0, len(ids), CHUNK)]
    parts = []
    with multiprocessing.get_context("fork").Pool(jobs) if jobs > 1 else contextlib.nullcontext() as pool:
        for done, part in enumerate(pool.imap_unordered(_task, tasks) if pool else map(_task, tasks), 1):
            parts.append(part)
            print(f"\r{done} of {len(tasks)} parts calibrated", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    merged: dict[tuple[str, str], run.Result] = {}
    for part in parts:
        for result in part:
            key = (result.notebook, result.question)
            if key in merged:
                merged[key].merge(result)
            else:
                merged[key] = result
    order = {f"{p.parent.name}/{p.stem}": i for i, p in enumerate(notebooks())}
    return sorted(merged.values(), key=lambda r: (order.get(r.notebook, 0), int(r.question[1:])))


def table() -> str:
    """The instructor's guide's table of the questions that vary, from the catalog."""
    return catalog.varied_table({engine.Notebook.read(p).name: list(engine.Notebook.read(p).questions)
                                 for p in notebooks()})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.grading.calibration", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", type=int, default=200, help="student ids (default 200)")
    parser.add_argument("--seeds", type=int, default=catalog.HONEST_PER_MC // 200,
                        help="honest answers per id of a Monte Carlo question (default 10)")
    parser.add_argument("--band-ids", type=int, default=40, help="ids whose bands are probed (default 40)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--only", help="only the notebooks whose name holds this (session-3/exercises)")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "calibration", help="the report's folder")
    parser.add_argument("--table", action="store_true", help="print the table of the questions that vary, and stop")
    args = parser.parse_args(argv)
    if args.table:
        print(table())
        return 0
    if args.ids < 2 or args.seeds < 1 or args.jobs < 1:
        parser.error("--ids needs at least 2, --seeds and --jobs at least 1")
    load, start = os.getloadavg()[0], time.perf_counter()
    results = calibrate(sample_ids(args.ids), args.seeds, args.band_ids, args.jobs, args.only)
    seconds = time.perf_counter() - start
    cpu = sum(getattr(resource.getrusage(who), part) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
              for part in ("ru_utime", "ru_stime"))
    context = {
        "ids": str(args.ids), "seeds per Monte Carlo id": str(args.seeds),
        "time": f"{seconds:.0f} s with {args.jobs} worker(s) on {os.cpu_count()} cores, {cpu:.0f} s of CPU "
                f"(load {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)",
        "book numbers from": book.printed(ROOT).source,
    }
    paths = report.write(results, args.out, context)
    for row in report.session_table(results):
        print("  ".join(f"{k} {v}" for k, v in row.items()))
    failing = [r for r in results if r.unlisted()]
    for r in results:
        if r.failures():
            print(f"{'FAIL' if r.unlisted() else 'known'}  {r.notebook} {r.question}: {report.status(r)}")
    print(f"{context['time']}; report: {', '.join(str(p) for p in paths)}")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
