"""A simulated class: submissions to try the grading loop on, with the score each should get.

    python -m tests.support.simulate --students 20 [--assignments session-1 session-3]
                                   [--zoo] [--seed 0] [--course-dir .] [--zip class.zip]

writes ``submitted/<student>/<assignment>/*.ipynb`` (nbgrader's layout) from the
released notebooks of ``exercises/`` and the answers of ``solutions/``. Student 1
answers everything, student 2 nothing (the blank release), the others a random part
of the questions. With ``--zoo`` the first assignment also gets one submission of
each kind of trouble (see ``ZOO``). ``--zip`` packs the class as ``nbgrader
zip_collect`` expects (one folder per student) instead of filling ``submitted/``.

Each simulated student comes with the score it should get, so that a test can
compare the grader's result with it (``expected`` in the manifest).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

from .answers import (
    autograded_points, earned_points, questions, student_notebook,
)
from .trouble import ZOO, troubled
from tools.release import assignments as course


@dataclass
class Submission:
    """One simulated submission and the autograded score it should receive."""

    student: str
    assignment: str
    kind: str  # full, blank, partial or a ZOO kind
    expected: float
    max_score: float
    notebooks: dict[str, float]  # expected score per notebook


def _read(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def release_dir(root: Path) -> Path:
    """The released notebooks of the course: exercises/ (generated if it is missing)."""
    return Path(root) / course.RELEASE


def simulate(
    root: Path,
    n_students: int = 20,
    which: list[str] | None = None,
    zoo: bool = False,
    seed: int = 0,
    out: Path | None = None,
    kinds: dict[str, str] | None = None,
) -> list[Submission]:
    """Write a simulated class into ``out`` (default ``<root>/submitted``).

    Returns what each submission should get.

    ``kinds`` may fix the kind of chosen students (student id -> kind); the others follow
    the default mix described in the module docstring.
    """
    root = Path(root)
    out = Path(out) if out else root / "submitted"
    names = which or course.assignments(root)
    rng = random.Random(seed)
    students = [f"student-{i:02d}" for i in range(1, n_students + 1)]
    plan = dict(kinds or {})
    if zoo:
        free = [s for s in students[2:] if s not in plan]
        if len(free) < len(ZOO):
            raise ValueError(f"--zoo needs at least {len(ZOO) + 2} students")
        plan.update(zip(free, ZOO))
    made = []
    for a_index, assignment in enumerate(names):
        sources = {p.name: _read(p) for p in course.notebooks(root, assignment)}
        releases = {p.name: _read(p) for p in course.notebooks(root, assignment, course.RELEASE)}
        if sorted(sources) != sorted(releases):
            raise SystemExit(
                f"exercises/{assignment} is not generated from solutions/: make assignments"
            )
        troubled_name = "exit-test.ipynb" if "exit-test.ipynb" in sources else sorted(sources)[0]
        for s_index, student in enumerate(students):
            kind = plan.get(student) or (
                "full" if s_index == 0 else "blank" if s_index == 1 else "partial"
            )
            if kind in ZOO and a_index != 0:
                kind = "full"
            folder = out / student / assignment
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "timestamp.txt").write_text(
                f"2026-03-0{1 + a_index % 9} 12:{s_index % 60:02d}:00.000000 UTC"
            )
            expected = {}
            for name, source in sources.items():
                qs = questions(source)
                if kind in ZOO and name == troubled_name:
                    text, expected[name] = troubled(kind, source, releases[name])
                    (folder / name).write_text(text)
                    continue
                if kind == "blank":
                    answered = set()
                elif kind == "partial":
                    answered = {q.answer_id for q in qs if rng.random() < 0.5}
                else:
                    answered = {q.answer_id for q in qs}
                nb = student_notebook(source, releases[name], answered)
                (folder / name).write_text(json.dumps(nb, indent=1) + "\n")
                expected[name] = earned_points(source, answered, releases[name])
            made.append(
                Submission(
                    student,
                    assignment,
                    kind,
                    sum(expected.values()),
                    sum(autograded_points(s) for s in sources.values()),
                    expected,
                )
            )
    return made


def zip_class(folder: Path, archive: Path) -> Path:
    """Pack ``folder`` (student/assignment/notebook) as one archive, a folder per student."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(folder).as_posix())
    return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.simulate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--assignments", nargs="*", help="default: every assignment")
    parser.add_argument("--zoo", action="store_true", help="add one submission of each trouble")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--course-dir", type=Path, default=course.ROOT)
    parser.add_argument(
        "--zip", type=Path, help="write the class as this zip instead of submitted/"
    )
    parser.add_argument("--manifest", type=Path, help="write the expected scores (JSON) here")
    args = parser.parse_args(argv)
    root = args.course_dir.resolve()
    if args.zip:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            made = simulate(root, args.students, args.assignments, args.zoo, args.seed, Path(tmp))
            zip_class(Path(tmp), args.zip)
        where = args.zip
    else:
        made = simulate(root, args.students, args.assignments, args.zoo, args.seed)
        where = root / "submitted"
    if args.manifest:
        args.manifest.write_text(json.dumps([asdict(m) for m in made], indent=1))
    kinds = {}
    for m in made:
        kinds[m.kind] = kinds.get(m.kind, 0) + 1
    print(
        f"{len({m.student for m in made})} students, {len(made)} submissions in {where}: "
        + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
