"""Time every figure's update against a naive rebuild, and the book's cold and warm builds.

An update is what a reader's drag costs: set a control, the artists are updated in
place, and the picture the widget shows (``live_picture()``: high-density JPEG) is rendered. Wall-clock p50 / p95 are reported
with the CPU time of the update (steadier when the machine is busy). The naive version of the same
figure builds a new matplotlib figure with all its axes on every change and renders
it. Both are timed over the same sequence of control values.

    python benchmarks/figures.py               # figures only
    python benchmarks/figures.py --book        # and the book: cold, and after a prose edit
    python benchmarks/figures.py --repeats 60  # more updates per figure

Target: p50 <= 30 ms per figure on a 2-core machine, and at least 3x
faster than the naive rebuild.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import subprocess
import sys
import time

import matplotlib
import numpy as np

matplotlib.use("Agg")

from memkit import figures  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def control_values(control, count):
    """A cycle of ``count`` values that differ from one step to the next."""
    if hasattr(control, "options") and not hasattr(control, "max"):
        options = [o[1] if isinstance(o, tuple) else o for o in control.options]
    else:
        options = list(np.linspace(control.min, control.max, 9))
        options = [type(control.value)(v) for v in options]
        options = list(dict.fromkeys(options))
    return [options[i % len(options)] for i in range(count)]


def time_figure(figure_id, repeats):
    live = figures.get(figure_id)
    name, control = next(iter(live.controls.items()))
    values = control_values(control, repeats + 1)
    live.live_picture()  # warm the renderer
    update, naive, cpu = [], [], []
    for value in values[1:]:
        start, start_cpu = time.perf_counter(), time.process_time()
        control.value = value
        live.live_picture()  # what the live widget renders
        update.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        start = time.perf_counter()
        figures.get(figure_id, **{name: value}).live_picture()
        naive.append(time.perf_counter() - start)
    return name, np.array(update) * 1e3, np.array(naive) * 1e3, np.array(cpu) * 1e3


def time_book():
    """A cold build (no execution cache, no figure frames, no pages) and a rebuild after a
    prose edit of one chapter, each as `make book` runs it: the parallel execution of the
    chapters (tools/book/execution_cache.py), then the strict build. MathJax stays vendored."""
    jb = pathlib.Path(sys.executable).with_name("jupyter-book")
    build = ROOT / "_build"
    for name in ("html", ".doctrees", ".jupyter_cache", ".figure_frames"):
        shutil.rmtree(build / name, ignore_errors=True)
    (build / ".jupyter_cache.memkit-sha256").unlink(missing_ok=True)

    def make_book():
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tools.book.execution_cache"], check=True,
                       cwd=ROOT, capture_output=True)
        subprocess.run([str(jb), "build", str(ROOT), "-W", "--keep-going", "-q"], check=True,
                       cwd=ROOT, capture_output=True)
        return time.perf_counter() - start

    times = {"cold": make_book()}
    chapter = ROOT / "book" / "ch03-outer-product-memory.md"
    text = chapter.read_text()
    try:
        chapter.write_text(text + "\nA sentence added by the benchmark, as an author would.\n")
        times["prose edit"] = make_book()
    finally:
        chapter.write_text(text)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--book", action="store_true",
                        help="also time a cold book build and a rebuild after a prose edit")
    args = parser.parse_args()
    print(f"{'figure':24} {'control':10} {'update p50':>10} {'p95':>7} {'cpu p50':>8}"
          f" {'naive p50':>10} {'p95':>7} {'speed-up':>9}")
    worst = []
    for figure_id in figures.ids():
        name, update, naive, cpu = time_figure(figure_id, args.repeats)
        p50, p95 = np.percentile(update, [50, 95])
        n50, n95 = np.percentile(naive, [50, 95])
        ratio = n50 / p50
        worst.append((p50 <= 30 and ratio >= 3, figure_id))
        print(f"{figure_id:24} {name:10} {p50:8.1f}ms {p95:5.1f}ms {np.median(cpu):6.1f}ms"
              f" {n50:8.1f}ms {n95:5.1f}ms {ratio:8.1f}x")
    missed = [f for ok, f in worst if not ok]
    print("target (p50 <= 30 ms, >= 3x): " + ("met by every figure" if not missed else "missed by " + ", ".join(missed)))
    if args.book:
        times = time_book()
        print(f"book build: cold {times['cold']:.0f} s, after a prose edit"
              f" {times['prose edit']:.0f} s (targets: 120 s and 15 s on 2 cores)")


if __name__ == "__main__":
    main()
