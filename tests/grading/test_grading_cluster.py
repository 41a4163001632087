"""A PostgreSQL gradebook written by two graders at once, and grading on a Dask cluster
of two workers started as a cluster is started.

``postgres`` starts a PostgreSQL server of its own (Debian's package, ``make
system-deps``) on 127.0.0.1, on a free port, with a password and a temporary data folder
(as root: run by the ``postgres`` user, or ``nobody``; PostgreSQL refuses root), and
stops it by its PID. ``dask_cluster`` starts ``dask scheduler`` and two ``dask worker``
processes on 127.0.0.1 the way an instructor starts them on their machines (the workers
are given the gradebook URL in their environment), and stops them by PID.

``graded`` grades one simulated class of the first session three ways, with the same
submissions: full, blank, half-done, one whose answer kills its kernel (repaired), one
that is not a notebook (rejected), and one whose added cell looks for the gradebook
from its kernel:

1. ``reference``: SQLite with one local worker (``make grade JOBS=1``);
2. ``pair``: two ``python -m tools.grading`` at once on PostgreSQL, each with its own
   half of the students;
3. ``cluster``: ``--scheduler`` the two-worker cluster, on PostgreSQL.

The tests compare the grades cell by cell and the statuses.
"""

import csv
import json
import os
import pathlib
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from tools.common.ports import free_port
from tools.release import assignments as course
from tools.grading import cluster, gradebook, gradebook_guard
from support.simulate import classroom

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIRST = course.assignments(ROOT)[0]
SPY = "GRADEBOOK-SPY"
KINDS = {"student-04": "kernel-exit", "student-05": "invalid-json"}
STUDENTS = 6  # 01 full, 02 blank, 03 half-done, 04 kernel-exit, 05 invalid JSON, 06 the spy
CELL_TIMEOUT = "10"


def postgres_program(name: str) -> str:
    found = sorted(
        pathlib.Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
        key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0,
    )
    assert found, "PostgreSQL is not installed (make system-deps installs postgresql)"
    return str(found[-1])


def server_user() -> dict:
    """Popen's arguments that run PostgreSQL unprivileged (it refuses to run as root)."""
    if os.geteuid() != 0:
        return {}
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
    raise AssertionError("no unprivileged user (postgres or nobody) to run PostgreSQL as")


def stop(proc: subprocess.Popen, sig=signal.SIGTERM, timeout: float = 30) -> None:
    """Stop a server we started, by its PID (its process group if it will not stop)."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
            return
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def postgres():
    import psycopg2

    as_user = server_user()
    home = pathlib.Path(tempfile.mkdtemp(prefix="memcourse-pg-"))
    password = secrets.token_hex(12)
    (home / "password").write_text(password + "\n")
    if as_user:
        for path in (home, home / "password"):
            os.chown(path, as_user["user"], as_user["group"])
    made = subprocess.run(
        [postgres_program("initdb"), "-D", str(home / "data"), "-U", "memcourse",
         "--auth=scram-sha-256", f"--pwfile={home / 'password'}", "-E", "UTF8", "--no-sync"],
        cwd=home, capture_output=True, text=True, check=False, **as_user,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    port = free_port()
    log = open(home.parent / f"{home.name}.log", "w")
    server = subprocess.Popen(
        [postgres_program("postgres"), "-D", str(home / "data"), "-h", "127.0.0.1",
         "-p", str(port), "-k", str(home), "-c", "fsync=off", "-c", "full_page_writes=off",
         "-c", "synchronous_commit=off"],
        cwd=home, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True, **as_user,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, pathlib.Path(log.name).read_text()[-2000:]
            try:
                conn = psycopg2.connect(host="127.0.0.1", port=port, user="memcourse",
                                        password=password, dbname="postgres", connect_timeout=3)
                break
            except psycopg2.OperationalError:
                assert time.monotonic() < deadline, "PostgreSQL did not accept connections"
                time.sleep(0.3)
        conn.autocommit = True
        with conn.cursor() as cur:
            for db in ("pair", "cluster"):
                cur.execute(f"CREATE DATABASE {db}")
        conn.close()
        yield {
            "url": lambda db: f"postgresql+psycopg2://memcourse:{password}@127.0.0.1:{port}/{db}",
            "password": password,
            "port": port,
        }
    finally:
        stop(server, signal.SIGINT)  # PostgreSQL's fast shutdown
        log.close()
        os.unlink(log.name)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def dask_cluster(postgres, tmp_path_factory):
    """``dask scheduler`` and two ``dask worker`` (one thread each) on 127.0.0.1."""
    from distributed import Client

    dask = str(pathlib.Path(sys.executable).with_name("dask"))
    logs = tmp_path_factory.mktemp("dask")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMCOURSE_DB_URL": postgres["url"]("cluster")}
    started = []

    def start(name, args):
        out = open(logs / f"{name}.log", "w")
        started.append(subprocess.Popen(
            [dask, *args], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        ))
        out.close()

    try:
        start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", str(port),
                            "--no-dashboard", "--dashboard-address", "127.0.0.1:0"])
        for name in ("worker-1", "worker-2"):
            start(name, ["worker", address, "--name", name, "--nthreads", "1",
                         "--nworkers", "1", "--host", "127.0.0.1", "--no-dashboard",
                         "--memory-limit", "0", "--death-timeout", "60",
                         "--local-directory", str(logs / name)])
        with Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
            workers = sorted(client.scheduler_info()["workers"])
        yield {"address": address, "workers": workers, "logs": logs}
    finally:
        for proc in reversed(started):  # the workers first, then the scheduler
            stop(proc)


def course_copy(to: pathlib.Path, submitted: pathlib.Path | None = None) -> pathlib.Path:
    to.mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", to / "nbgrader_config.py")
    for where in ("solutions", "exercises"):
        shutil.copytree(ROOT / where / FIRST, to / where / FIRST)
    if submitted:
        shutil.copytree(submitted, to / "submitted")
    return to


def spy_cell(port: int, password: str) -> str:
    """An added cell that looks for the gradebook from the student's kernel."""
    return "\n".join([
        "import os, socket",
        f"leaked = sorted(k for k, v in os.environ.items() if 'postgres' in v or {password!r} in v)",
        "try:",
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=3).close()",
        "    reach = 'reached'",
        "except OSError:",
        "    reach = 'unreachable'",
        f"print({SPY!r}, leaked, reach)",
    ])


def grade(root, *args, env=None, timeout=900):
    return subprocess.Popen(
        [sys.executable, "-m", "tools.grading", FIRST, "--course-dir", str(root),
         "--cell-timeout", CELL_TIMEOUT, "--no-feedback", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, **(env or {})},
    )


def finished(proc, timeout=900) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out[-4000:]
    return out


def report(path) -> dict:
    with open(path, newline="") as fh:
        return {row["student"]: row for row in csv.DictReader(fh)}


def cell_grades(db_url: str) -> dict:
    """{(student, notebook, grade id): auto score} of the first session."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        return {
            (sub.student.id, nb.name, grade.name): grade.auto_score
            for sub in gb.find_assignment(FIRST).submissions
            for nb in sub.notebooks
            for grade in nb.grades
        }


def spy_output(root) -> str:
    nb = json.loads((root / "autograded" / "student-06" / FIRST / "exit-test.ipynb").read_text())
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            text = output.get("text", "")
            text = "".join(text) if isinstance(text, list) else text
            if SPY in text:
                return text.strip()
    return ""


@pytest.fixture(scope="module")
def graded(postgres, dask_cluster, tmp_path_factory):
    base = tmp_path_factory.mktemp("cluster-class")
    source = course_copy(base / "source")
    made = {m.student: m for m in classroom.simulate(source, STUDENTS, [FIRST], seed=7, kinds=KINDS)}
    spy_nb = source / "submitted" / "student-06" / FIRST / "exit-test.ipynb"
    full = json.loads((source / "submitted" / "student-01" / FIRST / "exit-test.ipynb").read_text())
    full["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None,
                          "outputs": [], "source": spy_cell(postgres["port"], postgres["password"])})
    for name in ("exit-test.ipynb", "exercises.ipynb"):
        shutil.copy(source / "submitted" / "student-01" / FIRST / name,
                    source / "submitted" / "student-06" / FIRST / name)
    spy_nb.write_text(json.dumps(full, indent=1))
    made["student-06"] = made["student-01"]  # full answers: full marks
    runs, times = {}, {}

    # 1. the reference: SQLite, one local worker
    root = course_copy(base / "reference", source / "submitted")
    started = time.monotonic()
    out = finished(grade(root, "--jobs", "1", "--db-url", f"sqlite:///{root / 'gradebook.db'}"))
    times["reference"] = time.monotonic() - started
    runs["reference"] = {"root": root, "out": out, "db": f"sqlite:///{root / 'gradebook.db'}",
                         "report": report(root / "autograded" / "grading-report.csv")}

    # 2. two graders at once on PostgreSQL, each with half of the class
    root = course_copy(base / "pair", source / "submitted")
    url = postgres["url"]("pair")
    halves = {"a": ["student-01", "student-03", "student-05"],
              "b": ["student-02", "student-04", "student-06"]}
    started = time.monotonic()
    procs = {
        side: grade(root, "--jobs", "1", "--db-url", url,
                    *[arg for s in students for arg in ("--student", s)],
                    "--csv", str(root / f"grades-{side}.csv"),
                    "--report", str(root / f"report-{side}.csv"))
        for side, students in halves.items()
    }
    outs = {side: finished(proc) for side, proc in procs.items()}
    times["pair"] = time.monotonic() - started
    runs["pair"] = {"root": root, "out": outs["a"] + outs["b"], "db": url,
                    "report": {**report(root / "report-a.csv"), **report(root / "report-b.csv")}}

    # 3. the two-worker cluster, on PostgreSQL (the URL given as the workers have it)
    root = course_copy(base / "cluster", source / "submitted")
    url = postgres["url"]("cluster")
    started = time.monotonic()
    out = finished(grade(root, "--scheduler", dask_cluster["address"], "--db-url", url))
    times["cluster"] = time.monotonic() - started
    runs["cluster"] = {"root": root, "out": out, "db": url,
                       "report": report(root / "autograded" / "grading-report.csv")}
    print("\n" + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()))
    return {"made": made, "runs": runs, "cluster": dask_cluster, "postgres": postgres}


def test_the_reference_grades_are_what_the_class_earned(graded):
    rows = graded["runs"]["reference"]["report"]
    assert set(rows) == {f"student-{i:02d}" for i in range(1, STUDENTS + 1)}
    assert rows["student-04"]["status"] == "repaired", rows["student-04"]
    assert rows["student-05"]["status"] == "rejected", rows["student-05"]
    for student, made in graded["made"].items():
        assert float(rows[student]["score"]) == made.expected, (student, rows[student])


@pytest.mark.parametrize("run", ["pair", "cluster"])
def test_postgresql_and_the_cluster_grade_as_sqlite_does(graded, run):
    reference = cell_grades(graded["runs"]["reference"]["db"])
    found = cell_grades(graded["runs"][run]["db"])
    assert len(reference) > 20 and found == reference
    statuses = {s: r["status"] for s, r in graded["runs"][run]["report"].items()}
    assert statuses == {s: r["status"] for s, r in graded["runs"]["reference"]["report"].items()}
    scores = {s: r["score"] for s, r in graded["runs"][run]["report"].items()}
    assert scores == {s: r["score"] for s, r in graded["runs"]["reference"]["report"].items()}


def test_the_two_graders_left_each_other_alone(graded):
    out = graded["runs"]["pair"]["out"]
    assert "changed by something other than the grader" not in out, out[-3000:]
    assert out.count("graded on 1 worker(s)") == 2


def test_the_cluster_spread_the_class_over_its_two_workers(graded):
    out = graded["runs"]["cluster"]["out"]
    line = next(line for line in out.splitlines() if line.startswith("graded on "))
    assert line.startswith("graded on 2 worker(s)"), line
    assert all(worker in line for worker in graded["cluster"]["workers"]), line


@pytest.mark.parametrize("run", ["reference", "pair", "cluster"])
def test_no_kernel_sees_the_gradebook(graded, run):
    assert spy_output(graded["runs"][run]["root"]) == f"{SPY} [] unreachable"


def test_a_remote_cluster_refuses_an_sqlite_gradebook(tmp_path):
    root = course_copy(tmp_path / "course")
    result = subprocess.run(
        [sys.executable, "-m", "tools.grading", FIRST, "--course-dir", str(root),
         "--scheduler", "tcp://127.0.0.1:9", "--db-url", f"sqlite:///{root / 'gradebook.db'}"],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=120,
    )
    assert result.returncode == 2
    assert "an SQLite file" in result.stderr and "PostgreSQL" in result.stderr, result.stderr
    assert not (root / "gradebook.db").exists()


def test_on_a_server_the_guard_compares_only_the_graders_own_submissions(graded):
    """Another grader's rows change during a run: the guard of this grader leaves them."""
    from nbgrader.api import Gradebook

    url = graded["runs"]["pair"]["db"]
    ledger = gradebook_guard.snapshot(url)
    mine = {(FIRST, "student-01"), (FIRST, "student-03"), (FIRST, "student-05")}

    def set_manual(student, value):
        with Gradebook(url) as gb:
            for nb in gb.find_submission(FIRST, student).notebooks:
                for grade in nb.grades:
                    grade.manual_score = value
            gb.db.commit()

    set_manual("student-01", 1000)  # one of mine
    set_manual("student-02", 1000)  # one of the other grader's
    try:
        problems = gradebook_guard.check_and_restore(url, ledger, gradebook.guarded(url, mine))
        assert problems and all(" student-01 " in p for p in problems), problems[:3]
        after = gradebook_guard.snapshot(url)
        assert all(after[k] == ledger[k] for k in after if k[1] == "student-01")
        assert any(v[1] == 1000 for k, v in after.items() if k[1] == "student-02")
    finally:
        set_manual("student-02", None)
    assert gradebook.guarded("sqlite:///x.db", mine) is None


def test_batches_cover_the_class_once_and_keep_every_worker_busy():
    for n, workers in [(1, 2), (5, 2), (16, 2), (160, 2), (61, 3), (7, 1)]:
        items = list(range(n))
        parts = cluster.batches(items, workers)
        assert sorted(i for part in parts for i in part) == items
        assert all(parts)
        assert max(len(p) for p in parts) <= cluster.MAX_BATCH
        assert len(parts) >= min(n, workers)
        assert max(len(p) for p in parts) - min(len(p) for p in parts) <= 1


def test_gradebook_urls_are_told_apart_and_their_password_hidden():
    url = "postgresql+psycopg2://memcourse:s3cret@db.example:5432/memcourse"
    assert gradebook.scheme(url) == "postgresql" and gradebook.is_server(url)
    assert gradebook.is_sqlite("sqlite:////tmp/gradebook.db?timeout=60")
    assert not gradebook.is_server("sqlite:////tmp/gradebook.db")
    assert "s3cret" not in gradebook.hidden(url) and "memcourse:***@db" in gradebook.hidden(url)
    assert cluster.sqlite_refused("sqlite:///g.db", None) is None
    assert cluster.sqlite_refused(url, "tcp://host:8786") is None
    assert "SQLite" in cluster.sqlite_refused("sqlite:///g.db", "tcp://host:8786")
