"""The gradebook of a class: an SQLite file for one grader, a server for several.

The gradebook is an SQLAlchemy URL (``--db-url``, ``$MEMCOURSE_DB_URL``):

* ``sqlite:///<course>/gradebook.db`` (the default): one file on the grader's machine.
  The workers of a local cluster share it (SQLite waits for its lock), but it cannot be
  shared over a network: ``tools.grading.cluster`` refuses it when the workers are elsewhere.
* ``postgresql+psycopg2://user:password@host:5432/memcourse``: a PostgreSQL server,
  which several graders (several ``make grade`` at once, on disjoint students, or the
  workers of a remote cluster) write to at the same time. The database must exist
  (``createdb memcourse``); nbgrader creates its tables on first use.

Several graders at once need three things this module gives them:

* ``exclusive``: recording the assignments (``nbgrader generate_assignment``) and
  creating the tables happen one grader at a time (a PostgreSQL advisory lock), else two
  graders insert the same rows and one of them fails;
* ``add_students``: every student of a run is in the gradebook before any nbgrader
  process starts, so that two processes grading two assignments of one student never
  race to create that student;
* ``guarded``: on a server the gradebook guard (``tools.grading.gradebook_guard``) compares only
  the submissions this grader graded; the others belong to the other graders.

``opened`` keeps nbgrader's ``Gradebook`` open in a process between its uses.

The URL reaches the grader's processes only (nbgrader's command line, the worker's task
arguments): every kernel starts with a clean environment in its own network namespace
(``tools.grading.box``), where neither the URL nor the server is reachable.

Stage: below judgement and the pipeline (the gradebook every stage reads).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re

SERVER_SCHEMES = ("postgresql", "postgres", "mysql", "mariadb")


def scheme(db_url: str) -> str:
    """The database kind of a URL: 'sqlite', 'postgresql', ... ('' when it has none)."""
    m = re.match(r"^([A-Za-z][A-Za-z0-9.+-]*)://", db_url or "")
    return m.group(1).split("+", 1)[0].lower() if m else ""


def is_sqlite(db_url: str) -> bool:
    return scheme(db_url) == "sqlite"


def is_server(db_url: str) -> bool:
    """A gradebook several machines can write to at once (a database server)."""
    return scheme(db_url) in SERVER_SCHEMES


def hidden(db_url: str) -> str:
    """The URL with its password replaced by ***, for messages and logs."""
    return re.sub(r"^([^:/]+://[^:/@]+:)[^@]*@", r"\1***@", db_url or "")


def _lock_key(name: str) -> int:
    """A signed 64-bit key for pg_advisory_lock, the same in every grader."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


@contextlib.contextmanager
def exclusive(db_url: str, name: str = "memcourse-gradebook-setup"):
    """One grader at a time in this block (PostgreSQL: a session advisory lock).

    With SQLite nothing is needed: the file's own lock serialises the writers, and a
    single machine grades.
    """
    if scheme(db_url) != "postgresql":
        yield
        return
    from sqlalchemy import create_engine, text

    engine = create_engine(db_url, future=True)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _lock_key(name)})
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _lock_key(name)})
                conn.commit()
    finally:
        engine.dispose()


def add_students(db_url: str, students: list[str]) -> None:
    """Create the students of a run in the gradebook (those already there are kept)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gb:
        for student in sorted(set(students)):
            try:
                gb.find_student(student)
            except MissingEntry:
                gb.add_student(student)


def submitted_assignments(db_url: str) -> list[str]:
    """The assignments of the gradebook with at least one submission (those the schedule
    only dated, ``make publish``, are left out), in the gradebook's order."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        return [a.name for a in gb.assignments if a.num_submissions > 0]


def guarded(db_url: str, pairs) -> set | None:
    """What the gradebook guard of one grader compares: every row (None) or these submissions.

    With SQLite the grader is alone: it guards the whole gradebook. On a server other
    graders write their students' rows at the same time: it guards the (assignment,
    student) pairs it graded.
    """
    return None if not is_server(db_url) else {tuple(p) for p in pairs}


_OPEN: dict = {}


def _identity(db_url: str):
    """What tells one gradebook from another behind the same URL: an SQLite file's inode
    (a file removed and created again is another gradebook)."""
    if not is_sqlite(db_url):
        return None
    from sqlalchemy.engine import make_url

    path = make_url(db_url).database
    if not path or path == ":memory:":
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return "absent"
    return (stat.st_dev, stat.st_ino)


def _alembic_head() -> str:
    """The revision nbgrader stamps a new gradebook with, read in this process.

    (nbgrader runs ``alembic heads`` in a new process for it: 1-3 s of CPU for every new
    gradebook; the same library call here costs a tenth of it.)
    """
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader import api

    with api._temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        heads = ScriptDirectory.from_config(Config(ini)).get_heads()
    return heads[0]


@contextlib.contextmanager
def opened(db_url: str):
    """nbgrader's ``Gradebook`` of ``db_url``, kept open in this process between uses.

    Opening one costs about 0.1 s of CPU (a new engine, and a look at every table); the
    grader and each worker read the gradebook once or twice per submission. Each use
    gets a fresh session (what other processes wrote since is seen), closed after it.
    A gradebook created here gets its alembic revision from ``_alembic_head``.
    """
    from nbgrader.api import Gradebook

    from nbgrader import api

    key = (db_url, _identity(db_url))
    gb = _OPEN.get(key)
    if gb is None:
        if getattr(api.get_alembic_version, "__module__", "") == "nbgrader.api":
            api.get_alembic_version = _alembic_head  # a new gradebook: stamped as nbgrader does
        gb = Gradebook(db_url)
        if key[1] == "absent":  # created by Gradebook: key it by the file it now is
            key = (db_url, _identity(db_url))
        _OPEN[key] = gb
    try:
        yield gb
    except BaseException:
        gb.db.rollback()
        raise
    finally:
        gb.db.remove()
