"""Class-grading throughput: ``make grade`` on a local Dask cluster against plain nbgrader.

A simulated class (``tests.support.simulate``: full, blank and half-done submissions) is
graded, in a copy of the course, three ways:

* **plain nbgrader**: ``nbgrader autograde`` over the whole class, one process of the
  ``nbgrader`` script as installed (no screening, no sandbox, no check by the grader),
  after the assignments are recorded in its gradebook (not timed);
* **make grade JOBS=2** (and any other ``--jobs``): ``python -m tools.grading
  --no-feedback`` on a local cluster of that many workers, each run with a gradebook of
  its own. Everything is timed: creating the gradebook, recording the assignments,
  screening, the cluster's start, grading, the export. These fixed costs (about 11 s of
  CPU, 15 s of wall clock) weigh on a small class; the issue's class of 160 submissions
  makes them small.

Each prints its seconds and submissions per minute, and the ratio to plain nbgrader
(wall clock); then the CPU seconds it used (user + system of its whole process tree:
nbgrader, the kernels, the Dask workers, the grader's checks) per submission, and the
ratio of plain nbgrader's CPU per submission to it. The CPU is counted by a cgroup of
its own (cgroup v1 ``cpuacct`` or v2, as root); without one, from the rusage of the
children, which misses the sandboxed kernels (bubblewrap's PID namespace: the benchmark
says so). On a shared machine the wall clock
says little; the CPU ratio does not depend on the load: with ``JOBS`` workers on as many
idle cores the throughput ratio is about ``JOBS x`` the CPU ratio (the ``JOBS x CPU``
column) once the fixed costs are spread over a large class.
The grades of the three must agree (the benchmark says so, or stops).

    python benchmarks/grading.py                       # 12 students x 2 sessions, JOBS=2
    python benchmarks/grading.py --students 40 --assignments session-1 session-2 \\
        session-3 session-4 --jobs 1 2                 # 40 students x 4 sessions

Target: two local workers at least 1.8x plain sequential nbgrader, on a 2-core
machine that does nothing else (the load average is printed: on a busy machine the
ratios say little).
"""

from __future__ import annotations

import argparse
import csv
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.release import assignments as course  # noqa: E402
from tests.support.simulate import classroom  # noqa: E402


def course_copy(to: pathlib.Path, which: list[str]) -> pathlib.Path:
    """The course's nbgrader layout for ``which``, with the simulated class in submitted/."""
    to.mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", to / "nbgrader_config.py")
    for where in ("solutions", "exercises"):
        for assignment in which:
            shutil.copytree(ROOT / where / assignment, to / where / assignment)
    return to


def grades(csv_path: pathlib.Path) -> dict:
    with open(csv_path, newline="") as fh:
        return {(r["assignment"], r["student_id"]): float(r["score"]) for r in csv.DictReader(fh)}


def children_cpu() -> float:
    """CPU seconds (user + system) of every child process this one has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


CGROUP_V1 = pathlib.Path("/sys/fs/cgroup/cpuacct")
CGROUP_V2 = pathlib.Path("/sys/fs/cgroup")


def new_cgroup() -> pathlib.Path | None:
    """A fresh cgroup to count one command's CPU (None when none can be made here)."""
    name = f"memcourse-bench-{os.getpid()}-{time.monotonic_ns()}"
    for base, usage in ((CGROUP_V1, "cpuacct.usage"), (CGROUP_V2, "cpu.stat")):
        if not (base / "cgroup.procs").exists() or (base is CGROUP_V2 and CGROUP_V1.is_dir()):
            continue
        try:
            (base / name).mkdir()
        except OSError:
            continue
        if (base / name / usage).exists():
            return base / name
        (base / name).rmdir()
    return None


def cgroup_seconds(group: pathlib.Path) -> float:
    if (group / "cpuacct.usage").exists():
        return int((group / "cpuacct.usage").read_text()) / 1e9
    stat = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines())
    return int(stat["usage_usec"]) / 1e6


COUNTED_BY = ["rusage"]


def measured(cmd: list[str], **kwargs) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``cmd``; (its result, wall seconds, CPU seconds of its whole process tree)."""
    group = new_cgroup()
    if group is not None:
        COUNTED_BY[0] = "cgroup"
        cmd = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group / "cgroup.procs"), *cmd]
    start, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    seconds, cpu = time.perf_counter() - start, children_cpu() - cpu
    if group is not None:
        time.sleep(0.5)  # the last processes of the tree leave
        cpu = cgroup_seconds(group)
        try:
            group.rmdir()
        except OSError:  # something of the run is still alive; counted so far
            pass
    return done, seconds, cpu


def plain_nbgrader(root: pathlib.Path, which: list[str]) -> tuple[float, float, dict]:
    url = f"sqlite:///{root / 'plain.db'}"
    for assignment in which:
        done = course.run_nbgrader(
            ["generate_assignment", assignment, "--force",
             f"--CourseDirectory.release_directory={root / 'release'}",
             f"--CourseDirectory.db_url={url}"],
            cwd=root,
        )
        if done.returncode:
            raise SystemExit(done.stdout + done.stderr)
    nbgrader = pathlib.Path(sys.executable).with_name("nbgrader")  # the script, as installed
    done, seconds, cpu = measured(
        [str(nbgrader), "autograde", "*", "--force", f"--CourseDirectory.db_url={url}",
         "--CourseDirectory.autograded_directory=autograded-plain"],
        cwd=root, env=course.tool_env(),
    )
    if done.returncode:
        raise SystemExit("plain nbgrader failed:\n" + done.stdout[-3000:] + done.stderr[-3000:])
    exported = course.run_nbgrader(
        ["export", f"--to={root / 'plain.csv'}", f"--db={url}"], cwd=root
    )
    if exported.returncode:
        raise SystemExit(exported.stdout + exported.stderr)
    return seconds, cpu, grades(root / "plain.csv")


def make_grade(root: pathlib.Path, which: list[str], jobs: int) -> tuple[float, float, dict]:
    db = root / f"jobs{jobs}.db"
    done, seconds, cpu = measured(
        [sys.executable, "-m", "tools.grading", *which, "--course-dir", str(root),
         "--jobs", str(jobs), "--no-feedback", "--db-url", f"sqlite:///{db}?timeout=60",
         "--csv", str(root / f"jobs{jobs}.csv"),
         "--report", str(root / f"jobs{jobs}-report.csv")],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if done.returncode:
        raise SystemExit(f"make grade JOBS={jobs} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return seconds, cpu, grades(root / f"jobs{jobs}.csv")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--assignments", nargs="*", default=["session-1", "session-2"])
    parser.add_argument("--jobs", type=int, nargs="*", default=[2],
                        help="worker counts of make grade to time (default: 2)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memcourse-bench-grading-") as tmp:
        root = course_copy(pathlib.Path(tmp) / "course", args.assignments)
        made = classroom.simulate(root, args.students, args.assignments, seed=args.seed)
        n = len(made)
        print(f"class-grading throughput: {args.students} students x {len(args.assignments)} "
              f"assignment(s) = {n} submissions, {os.cpu_count()} cores, load average "
              f"{os.getloadavg()[0]:.1f} at the start")
        rows = []
        seconds, cpu, reference = plain_nbgrader(root, args.assignments)
        rows.append(("plain nbgrader autograde (sequential)", seconds, cpu, 1))
        for jobs in args.jobs:
            seconds, cpu, found = make_grade(root, args.assignments, jobs)
            if found != reference:
                differ = sorted(k for k in set(found) | set(reference)
                                if found.get(k) != reference.get(k))
                raise SystemExit(f"make grade JOBS={jobs} disagrees with nbgrader on {differ}")
            rows.append((f"make grade JOBS={jobs} (local Dask cluster)", seconds, cpu, jobs))
        plain, plain_cpu = rows[0][1], rows[0][2]
        cores = os.cpu_count() or 1
        print(f"{'':<40} {'seconds':>8} {'subm/min':>9} {'vs plain':>9} "
              f"{'CPU s':>7} {'CPU/subm':>9} {'CPU ratio':>9} {'JOBS x CPU':>10}")
        for label, seconds, cpu, jobs in rows:
            ratio = plain_cpu / cpu
            print(f"{label:<40} {seconds:>8.1f} {60 * n / seconds:>9.1f} {plain / seconds:>8.2f}x "
                  f"{cpu:>7.1f} {cpu / n:>9.2f} {ratio:>8.2f}x {min(jobs, cores) * ratio:>9.2f}x")
        print("CPU ratio: plain nbgrader's CPU seconds per submission over the run's; "
              "JOBS x CPU: the throughput ratio expected on idle cores")
        if COUNTED_BY[0] != "cgroup":
            print("CPU counted from rusage (no cgroup could be made): the sandboxed kernels "
                  "of make grade are missing from it, so its CPU ratio is too high")
        print(f"grades identical in all runs; load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
