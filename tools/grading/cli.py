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
   submissions, on the workers of a Dask cluster (``tools.grading.cluster``: ``--jobs`` local
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

Every kernel (nbgrader's and the probe's) runs in a sandbox (``tools.grading.box``: a
private folder, the environment read-only, no course root, no secrets, no network, its
own PID namespace and, as root, its own unprivileged user). Screening adds, before each
test cell, a cell that prints the answers the test reads as plain data, and after it one
that prints the calls the test made to the student's functions; after nbgrader, the
grader runs each test again in its own process on those values (``tools.grading.recheck``) and
withdraws the points of a test that passed in the kernel only (status ``overruled``).

Then the feedback is generated (without the hidden tests, and a failing test shows its
message, not its traceback; each submission's in a run of its own with a time and a memory
limit), the gradebook is compared with what the grader wrote
(``tools.grading.gradebook_guard``: what anything else wrote is listed and undone), the grades
are exported as CSV, a report (one line per submission: score, status, seconds,
reasons, lateness) is written and a summary per assignment printed, with the pages of
similar answers (``tools.grading.similarity``: for the instructor only) and the item analysis
(``tools.grading.item_analysis``: each question's facility, discrimination and options
chosen, ``autograded/item-analysis.csv``, for the instructor only). A student on the
course's class list (``class-list.csv``, ``memkit.class_list``) is graded with their seat,
which sets the order of their options. The statuses are
``STATUSES``; folders whose name cannot be a student id are ``skipped``, with the reason.

Stage: the command line (``python -m tools.grading``, ``make grade``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from memkit import class_list
from tools.common.text import shown
from tools.release import assignments as course
from tools.grading import cluster, gradebook, gradebook_guard, item_analysis, similarity
from tools.grading.collect import collect_zips
from tools.grading.feedback import feedback
from tools.grading.pipeline import grade_class
from tools.grading.report import export_csv, summary, write_report
from tools.grading.settings import DEFAULT_CELL_TIMEOUT, Settings, default_db_url

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
        "then be a server (tools.grading.cluster)",
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
    parser.add_argument("--lms", choices=["canvas", "moodle"],
                        help="also write the grades as this LMS's import CSV (needs --roster)")
    parser.add_argument("--roster", type=Path,
                        help="the CSV of students exported from the LMS (tools.grading.lms)")
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
    args = parser.parse_args(argv)
    if args.lms and not args.roster:
        parser.error("--lms needs --roster: the CSV of students exported from the LMS")

    started = time.monotonic()
    root = args.course_dir.resolve()
    every = course.assignments(root)
    which = args.assignments or every
    unknown = [a for a in which if a not in every]
    if unknown:
        parser.error(f"unknown assignment(s) {', '.join(unknown)}; known: {', '.join(every)}")
    try:
        seats = class_list.read(root / class_list.NAME)
    except class_list.ClassListError as exc:
        parser.error(f"{exc} (the class list gives each student their seat: memkit.class_list)")
    settings = Settings(
        root=root,
        seats=seats,
        submitted=(args.submitted or root / "submitted").resolve(),
        db_url=args.db_url or default_db_url(root),
        cell_timeout=args.cell_timeout,
        wall=args.timeout,
        memory_mb=args.memory_limit,
        sandbox=args.sandbox,
    )
    refused = cluster.sqlite_refused(settings.db_url, args.scheduler)
    if refused:
        parser.error(refused)
    if settings.sandbox == "bwrap":
        from traitlets import TraitError

        from tools.grading.box import configured, unusable

        problem = unusable()
        if problem:
            parser.error(problem)
        try:
            configured(root, settings.sandbox)
        except TraitError as exc:
            parser.error(f"the sandbox's settings (c.Sandbox, docs/grading-safely.md): {exc}")
    archive_notes = collect_zips(settings, [z.resolve() for z in args.zip], which) if args.zip else {}
    with tempfile.TemporaryDirectory(prefix="memcourse-grading-") as work:
        settings.work = args.work.resolve() if args.work else Path(work)
        outcomes, skipped, ledger = grade_class(
            settings, which, args.student or None, args.jobs, args.isolate,
            scheduler=args.scheduler, archive_notes=archive_notes,
        )
        for left_out in skipped:
            print(f"skipped: {shown(str(left_out))}")
        if not outcomes:
            print(f"no submission of {', '.join(which)} under {settings.submitted}")
            return 1
        graded_assignments = [a for a in which if any(o.assignment == a for o in outcomes)]
        if not args.no_feedback:
            for problem in feedback(settings, outcomes, args.jobs):
                print(shown(problem))
        alike = similarity.report(settings, outcomes, {
            a: [json.loads(p.read_text()) for p in course.notebooks(root, a, course.RELEASE)]
            for a in graded_assignments})
    # nothing but the grader wrote to the gradebook: else undo it before the export
    tampered = gradebook_guard.check_and_restore(
        settings.db_url,
        ledger,
        gradebook.guarded(settings.db_url, [(o.assignment, o.student) for o in outcomes]),
    )
    csv_path = (args.csv or root / "grades.csv").resolve()
    export_csv(settings, csv_path)
    report = (args.report or root / "autograded" / "grading-report.csv").resolve()
    write_report(outcomes, report)
    print()
    print(summary(outcomes, graded_assignments, tampered))
    print()
    if alike:
        print()
        print("Similar answers (for the instructor only, never released):")
        print("\n".join(similarity.summary_lines(alike)))
        print()
    items = item_analysis.report(settings, outcomes, {
        a: {p.name: json.loads(p.read_text()) for p in course.notebooks(root, a)}
        for a in graded_assignments})
    if items:
        print(f"Item analysis (for the instructor only, never released; "
              f"{root / 'autograded' / item_analysis.CSV_NAME}):")
        print("\n".join(item_analysis.summary_lines(items)))
        print()
    listed = sum(o.student in settings.seats for o in outcomes)
    print(f"class list: {listed} of {len(outcomes)} submission(s) by students with a seat"
          if settings.seats else
          f"class list: none ({root / class_list.NAME}): each student's options in an order of "
          "their own")
    print(f"grades: {csv_path}")
    if args.lms:
        from tools.grading.lms import EXPORTERS, export_lms

        lms_path, said = export_lms(root, args.lms, args.roster, db_url=settings.db_url)
        for line in said:
            print(f"  {shown(line)}")
        print(f"{EXPORTERS[args.lms].lms} grades: {lms_path}")
    print(f"report: {report}")
    if not args.no_feedback:
        print(f"feedback: {root / 'feedback'}/<student>/<assignment>/")
    print(f"{len(outcomes)} submission(s) in {time.monotonic() - started:.0f} s")
    return 0
