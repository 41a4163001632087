"""The pipeline: a class graded from collected submissions to outcomes (``grade_class``).

It records the assignments in the gradebook (``prepare_gradebook``), screens and stages
every submission here, scores those with nothing to run, and hands the others to the
workers of a Dask cluster (``tools.grading.cluster``, which runs ``tools.grading.autograde``);
each outcome's gradebook rows are recorded for the final check (``tools.grading.gradebook_guard``).
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

from tools.release import assignments as course, schedule
from tools.grading import cluster, gradebook, gradebook_guard, hidden, lateness
from tools.grading.cells import read_nb
from tools.grading.collect import Skipped, submissions
from tools.grading.judgement import finish
from tools.grading.outcome import Outcome
from tools.grading.settings import Settings
from tools.grading.staging import Staged, stage

def prepare_gradebook(settings: Settings, which: list[str], release_dir: Path) -> None:
    """Record the assignments (notebooks, graded cells, points) in the gradebook.

    nbgrader does it when it generates the release; the release goes to ``release_dir``
    (a temporary folder), so that ``exercises/`` is left alone. Each assignment's due date
    is the schedule's (``schedule.yml``), recorded as nbgrader's ``duedate``.
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
    lateness.record_due_dates(settings.db_url, schedule.load(settings.root, every), which)


def _stage_guarded(settings: Settings, assignment: str, student: str, sources, releases,
                   splits) -> Staged:
    """``stage``, and whatever goes wrong in it is this submission's reason, not the class's."""
    try:
        return stage(settings, assignment, student, sources, releases, splits)
    except Exception as exc:  # noqa: BLE001 - a submission nothing could read scores 0
        folder = settings.submitted / student / assignment
        why = f"{type(exc).__name__}: {str(exc)[:200]}"
        return Staged(assignment, student, folder, {}, [
            f"the grader could not screen it ({why}): scored 0"], True, sources=sources)


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
    archive_notes: dict[str, list[str]] | None = None,
) -> tuple[list[Outcome], list[Skipped], dict]:
    """Grade every submission of ``which``; return the outcomes, the folders left out and
    the ledger: the gradebook rows as the grader left them (``tools.grading.gradebook_guard``),
    the reference of the final check. The ledger stays with the grader, never sent to a worker.

    The submissions are split in batches, each graded by one nbgrader process (nbgrader
    starts once per batch, not once per submission) on a worker of a Dask cluster
    (``tools.grading.cluster``: ``jobs`` local worker processes, or the workers of
    ``scheduler``); a submission nbgrader fails on is then graded again on its own
    (``grade_isolated``). With ``isolate`` every submission gets its own process from
    the start. ``archive_notes``: the members of class archives that were refused, by
    student (``tools.grading.collect.collect_zips``), given as reasons of that student's
    submissions; those of no student graded here get a report line of their own.
    """
    if settings.sandbox != "off":
        from tools.grading.box import unusable

        problem = unusable()
        if problem:
            raise SystemExit(problem)
    with gradebook.exclusive(settings.db_url):  # the first grader creates the tables
        ledger = gradebook_guard.snapshot(settings.db_url)
    pairs, skipped = submissions(settings, which, only)
    odd = [Outcome(s.student, s.assignment, status="skipped", reasons=[s.reason]) for s in skipped]
    notes = dict(archive_notes or {})
    graded_students = {s for _, s in pairs}
    lost = [r for who, rs in sorted(notes.items()) if who not in graded_students for r in rs]
    if lost:
        odd.append(Outcome("(class archive)", which[0], status="skipped", reasons=lost))
    if not pairs:
        return odd, skipped, ledger
    graded_assignments = sorted({a for a, _ in pairs}, key=which.index)
    sources = {
        a: {p.name: read_nb(p) for p in course.notebooks(settings.root, a)}
        for a in graded_assignments
    }
    splits = {a: {name: hidden.discover_apart(nb, folder=settings.root / course.SOURCE / a)
                  for name, nb in sources[a].items()}
              for a in graded_assignments}
    unsplit = [f"solutions/{a}/{name}: {p}" for a in graded_assignments
               for name, split in sorted(splits[a].items()) for p in split.problems]
    if unsplit:
        raise SystemExit(
            "the grader cannot keep these hidden tests out of the students' kernels "
            "(CONTRIBUTING.md says how a hidden test is written):\n  " + "\n  ".join(unsplit))
    outcomes: list[Outcome] = list(odd)
    lock = threading.Lock()
    width = len(str(len(pairs)))

    def report(outcome: Outcome) -> None:
        with lock:
            try:  # the rows the grader just wrote: the reference for the final check
                ledger.update(
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
        with gradebook.exclusive(settings.db_url):  # one grader at a time (a server)
            prepare_gradebook(settings, graded_assignments, release_tmp)
            gradebook.add_students(settings.db_url, [s for _, s in pairs])
        releases = {
            a: {p.name: read_nb(p) for p in sorted((release_tmp / a).glob("*.ipynb"))}
            for a in graded_assignments
        }
        own_work = settings.work is None
        if own_work:
            settings.work = Path(tmp) / "work"
        progress(
            f"grading {len(pairs)} submission(s) of {len(graded_assignments)} assignment(s), "
            f"{jobs} at a time, {settings.cell_timeout} s per cell"
        )
        staged = [_stage_guarded(settings, a, s, sources[a], releases[a], splits[a])
                  for a, s in pairs]
        for s in staged:
            s.reasons += [
                note for note in notes.get(s.student, [])
                if f"/{s.assignment}/" in note or not any(f"/{a}/" in note for a in which)
            ]
        runnable = [s for s in staged if s.screened]
        for s in staged:
            if not s.screened:  # nothing nbgrader can run
                try:
                    report(finish(settings, s, False, [], 0.0))
                except Exception as exc:  # noqa: BLE001 - one submission stops no one
                    report(cluster.failed_outcome(settings, s, exc))
        try:
            cluster.grade(settings, runnable, jobs, isolate, report, scheduler, progress)
        finally:
            from tools.grading.box import remove_boxes

            remove_boxes(settings.boxes)
        if own_work:
            settings.work = None
        settings.boxes = None
    return outcomes, skipped, ledger
