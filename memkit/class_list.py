"""The class list: each student's seat, which balances the letters of the keys.

``class-list.csv`` in the course's folder (beside ``nbgrader_config.py``), written by the
instructor or by ``make class-list ADD="alice bob"`` (``python -m memkit.class_list add``),
and by ``make hub`` for its students::

    seat,student
    1,alice
    2,bob

A student's seat is a whole number from 1 (``memkit.variants.MAX_SEAT`` at most), and their
id is the one nbgrader files their work under (the hub user). The hub gives each student on
the list their seat (``MEMCOURSE_SEAT``) and so does the grader for each submission; with it
the options of a multiple-choice question come in an order drawn for the seat's block of
the class (``memkit.variants.Numbers.options``), so that no letter is the key of a ``k``-option
question for more than ``ceil(n / k)`` of ``n`` seated students. A seat stays the student's for the term: a new student is added
at the end (``add``), and a student who leaves keeps their line, or leaves a gap; changing
a seat changes the letters that student sees.

The file is the instructor's, but read as if it were anyone's, since the hub reads and
writes it as root in the instructor's folder: a regular file only (no link followed, no FIFO
waited on), bounded, every line checked, an error naming the line; written to a new file
(never through a link planted in its place) renamed over the old one.
"""

from __future__ import annotations

import csv
import io
import os
import stat
import sys
from pathlib import Path

from memkit.variants import MAX_SEAT, STUDENT_ID, checked_id, checked_seat

__all__ = ["NAME", "ClassListError", "add", "read"]

NAME = "class-list.csv"
HEADER = ["seat", "student"]
MAX_BYTES = 4 * 1024**2


class ClassListError(ValueError):
    """A class list that cannot be used, with the line at fault."""


def _read_regular(path: Path) -> bytes | None:
    """The bytes of the regular file ``path`` (None: there is none), at most ``MAX_BYTES``:
    no link followed, the kind checked on the descriptor. memkit imports nothing of
    tools/, so this is its own copy of ``tools.common.safe_files.read_bounded``;
    ``tests/test_bounded_reads.py`` holds the two to the same answers on hostile files."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: a link, which is not followed
        raise ClassListError(f"{path}: cannot be read ({exc.strerror}; a link is not followed)") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ClassListError(f"{path}: not a regular file")
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_BYTES + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        raise ClassListError(f"{path}: larger than {MAX_BYTES // 1024**2} MB")
    finally:
        os.close(fd)


def read(path: str | os.PathLike) -> dict[str, int]:
    """{student id: seat} of the class list at ``path`` ({} where there is none)."""
    path = Path(path)
    raw = _read_regular(path)
    if raw is None:
        return {}
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig", errors="replace"))))
    if not rows or [c.strip().lower() for c in rows[0]] != HEADER:
        raise ClassListError(f"{path}, line 1: the header must be {','.join(HEADER)}")
    seats: dict[str, int] = {}
    taken: dict[int, str] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != 2:
            raise ClassListError(f"{path}, line {number}: two fields (seat,student), not {len(row)}")
        try:
            seat, student = checked_seat(row[0], "its seat"), checked_id(row[1], "its student")
        except ValueError as exc:
            raise ClassListError(f"{path}, line {number}: {exc}") from None
        if student in seats:
            raise ClassListError(f"{path}, line {number}: {student!r} is on the list already "
                                 f"(seat {seats[student]})")
        if seat in taken:
            raise ClassListError(f"{path}, line {number}: seat {seat} is taken by {taken[seat]!r}")
        seats[student], taken[seat] = seat, student
    return seats


def add(path: str | os.PathLike, students) -> dict[str, int]:
    """Give each of ``students`` not on the list the next seat (after the last one taken),
    in the order given; keep every other line. Returns {student: seat} of those added."""
    path = Path(path)
    seats = read(path)
    added: dict[str, int] = {}
    following = max(seats.values(), default=0) + 1
    for student in students:
        student = checked_id(str(student), "to add")
        if student in seats or student in added:
            continue
        if following > MAX_SEAT:
            raise ClassListError(f"{path}: no seat left after {MAX_SEAT}")
        added[student] = following
        following += 1
    if not added:
        return added
    rows = sorted({**seats, **added}.items(), key=lambda item: item[1])
    fresh = path.with_name(path.name + ".new")
    fresh.unlink(missing_ok=True)  # whatever was left there (a link is removed, not followed)
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with open(fd, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(HEADER)
        writer.writerows((seat, student) for student, seat in rows)
    os.replace(fresh, path)
    return added


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m memkit.class_list",
                                     description="The class list: each student's seat.")
    parser.add_argument("--file", type=Path, default=Path(NAME),
                        help=f"the class list (default: {NAME} in this folder)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("show", help="every student's seat")
    adding = commands.add_parser("add", help="give new students the next seats")
    adding.add_argument("students", nargs="+", help=f"student ids ({STUDENT_ID.pattern})")
    args = parser.parse_args(argv)
    try:
        if args.command == "add":
            added = add(args.file, args.students)
            for student, seat in added.items():
                print(f"seat {seat}: {student}")
            print(f"{len(added)} added to {args.file}" if added else f"all on {args.file} already")
        else:
            seats = read(args.file)
            for student, seat in sorted(seats.items(), key=lambda item: item[1]):
                print(f"seat {seat}: {student}")
            print(f"{len(seats)} students on {args.file}")
    except ValueError as exc:
        print(f"class list: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
