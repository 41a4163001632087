"""The hub's limits per user (tools/hub/limits.py) on this machine's real cgroups, as root.

Two Unix users stand for two students. Each attack runs as ``student1`` in the groups the
hub's spawner puts a server in (``make_group`` + ``enter`` + ``set_rlimits``, then the
user's uid, as ``LimitedSpawner`` does), with small limits so that it ends in seconds and
by itself; meanwhile ``student2``'s "cell" (a process in its own group that computes a
little and answers) is timed. The measured times are printed (``-s``). Also: a home of
its own size, the limits as the hub reads them, and what a student left in /tmp and
/dev/shm removed by ``make hub-stop`` (``tools.hub.processes.remove_files_of``).
"""

from __future__ import annotations

import os
import pwd
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tools.hub import limits, processes

PYTHON = "/usr/bin/python3"  # the attack's interpreter: readable by any user
USERS = ["mcl-student1", "mcl-student2"]
SMALL = limits.Limits(memory_mb=300, pids=64, cpus=1.0, nproc=4096,
                      total_memory_mb=2048, total_pids=4096)
CELL = "import time; t = time.perf_counter(); sum(i * i for i in range(300_000)); print('ok')"


@pytest.fixture(scope="module")
def students():
    assert os.geteuid() == 0, "the limits test makes cgroups and Unix users: run it as root"
    try:
        limits.hierarchy()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    for user in USERS:
        subprocess.run(["userdel", "--remove", user], capture_output=True, check=False)
        subprocess.run(["useradd", "--create-home", user], check=True)
    yield [pwd.getpwnam(u) for u in USERS]
    for user in USERS:
        limits.remove_group(user)
        limits.unmount_home(Path(pwd.getpwnam(user).pw_dir))
        subprocess.run(["userdel", "--remove", user], capture_output=True, check=False)


def start(entry, code: str, limit: limits.Limits = SMALL) -> subprocess.Popen:
    """``code`` run as that user in its group, as the spawner starts a server."""
    procs = limits.make_group(entry.pw_name, limit)

    def become():
        limits.enter(procs)
        limits.set_rlimits(limit)
        os.setgroups([])
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)

    return subprocess.Popen([PYTHON, "-c", code], preexec_fn=become, cwd=entry.pw_dir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"PATH": "/usr/bin:/bin", "HOME": entry.pw_dir})


def classmate(entry) -> float:
    """Seconds until the classmate's cell (a new process in its group) has answered."""
    began = time.perf_counter()
    cell = start(entry, CELL)
    out, err = cell.communicate(timeout=60)
    assert cell.returncode == 0 and out.strip() == "ok", err
    return time.perf_counter() - began


def answers_quickly(times: list[float]) -> None:
    """The classmate's cells answered at once as a rule and within seconds at worst (the
    worst allows for other work on the machine: the test suite runs on every core)."""
    assert times and statistics.median(times) < 1 and max(times) < 10, times


def times_while(attack: subprocess.Popen, entry, seconds: float) -> list[float]:
    """The classmate's answer times, one cell after another, while the attack runs."""
    times, end = [], time.monotonic() + seconds
    while time.monotonic() < end and attack.poll() is None:
        times.append(classmate(entry))
    return times


# each process forks until the group refuses, then spins until the deadline: bounded
FORK_BOMB = """
import os, time
end = time.time() + 12
refused = 0
while time.time() < end:
    try:
        if os.fork() == 0:
            continue  # the child forks too
    except OSError as exc:
        refused += 1
        if refused == 1:
            print(type(exc).__name__, exc.errno, flush=True)
os._exit(0)
"""


def test_a_fork_bomb_stops_at_the_students_process_limit_and_the_classmate_answers(students):
    one, two = students
    quiet = classmate(two)
    bomb = start(one, FORK_BOMB)
    time.sleep(2)  # the bomb at its limit
    peak = limits.usage(one.pw_name)["pids"]
    times = times_while(bomb, two, 8)
    out, _ = bomb.communicate(timeout=60)
    limits.remove_group(one.pw_name)
    print(f"\nfork bomb: {peak} processes of student1 (limit {SMALL.pids}); classmate's cell "
          f"{quiet:.2f} s before, median {statistics.median(times):.2f} s, worst "
          f"{max(times):.2f} s of {len(times)} during")
    assert peak <= SMALL.pids and peak >= SMALL.pids // 2, peak
    assert "BlockingIOError 11" in out, out[:300]
    answers_quickly(times)


MEMORY_HOG = """
blocks = []
try:
    while True:
        blocks.append(bytearray(32 << 20))  # touched: counted as the group's memory
except MemoryError:
    print("MemoryError", sum(map(len, blocks)) >> 20, flush=True)
"""

# two processes that each stay under RLIMIT_DATA but together pass the group's memory
TWO_HOGS = """
import os, time
pid = os.fork()
blocks = []
for _ in range(6):  # 192 MB each: under RLIMIT_DATA (225 MB), together past 300
    blocks.append(bytearray(32 << 20))
    time.sleep(0.05)
time.sleep(5)
if pid:
    _, status = os.waitpid(pid, 0)
    print("child", os.WTERMSIG(status) if os.WIFSIGNALED(status) else "exited", flush=True)
"""


def test_a_memory_hog_gets_a_memory_error_in_its_own_cell_and_the_classmate_answers(students):
    one, two = students
    hog = start(one, MEMORY_HOG)
    times = times_while(hog, two, 10)
    out, err = hog.communicate(timeout=60)
    assert hog.returncode == 0 and out.startswith("MemoryError"), (out, err[-500:])
    got = int(out.split()[1])
    print(f"\nmemory hog: MemoryError at {got} MB (limit {SMALL.memory_mb} MB); classmate's "
          f"cell worst {max(times, default=0):.2f} s of {len(times)}")
    assert got <= SMALL.memory_mb, got
    answers_quickly(times)
    # past the group's limit with processes each under RLIMIT_DATA: the kernel ends one
    both = start(one, TWO_HOGS)
    times = times_while(both, two, 10)
    out, err = both.communicate(timeout=60)
    killed = both.returncode == -9 or "child 9" in out
    print(f"two hogs: {out.strip() or err.strip()[-200:]!r}, return {both.returncode}; "
          f"classmate's cell worst {max(times, default=0):.2f} s")
    assert killed, (both.returncode, out, err[-500:])
    answers_quickly(times)
    limits.remove_group(one.pw_name)


def test_a_full_home_stops_its_student_only(students):
    one, two = students
    with tempfile.TemporaryDirectory() as images:
        for entry in students:
            said = limits.mount_home(Path(entry.pw_dir), Path(images) / f"{entry.pw_name}.img",
                                     32, entry.pw_uid, entry.pw_gid)
            assert "mounted" in said
        try:
            assert (Path(one.pw_dir) / ".bashrc").exists()  # what useradd put there, kept
            assert os.stat(one.pw_dir).st_uid == one.pw_uid
            fill = start(one, "open('big', 'wb').write(b'x' * (64 << 20))",
                         limits.Limits(memory_mb=512, pids=64))
            _, err = fill.communicate(timeout=60)
            assert fill.returncode != 0 and "No space left on device" in err, err[-300:]
            write = start(two, "open('notes.txt', 'w').write('mine'); print('ok')")
            out, err = write.communicate(timeout=60)
            assert out.strip() == "ok", err
            print("\nhome filled: student1 'No space left on device' at 32 MB; student2 writes")
        finally:
            for entry in students:
                assert limits.unmount_home(Path(entry.pw_dir))


def test_limits_read_from_the_hubs_environment_refuse_an_unknown_name():
    chosen = limits.Limits(memory_mb=512, cpus=0.5, home_mb=0)
    assert limits.Limits.from_env(chosen.to_env()) == chosen
    assert limits.Limits.from_env("pids=99").pids == 99
    with pytest.raises(ValueError, match="unknown limit 'memory'"):
        limits.Limits.from_env("memory=512")


def test_what_a_student_left_in_the_shared_folders_is_removed_and_nothing_else(students):
    one, _ = students
    keep = Path(tempfile.mkdtemp(prefix="memcourse-keep-"))  # root's, world-writable inside
    os.chmod(keep, 0o1777)
    target = keep / "roots-file"
    target.write_text("root's")
    left = [Path(f"/tmp/{one.pw_name}-dir"), Path(f"/dev/shm/{one.pw_name}-shm"),
            keep / "nested", keep / "link"]
    planted = start(one, f"""
import os
os.makedirs({str(left[0] / 'a' / 'b')!r})
open({str(left[1])!r}, 'w').write('x')
open({str(left[2])!r}, 'w').write('x')
os.symlink({str(target)!r}, {str(left[3])!r})
""")
    _, err = planted.communicate(timeout=60)
    assert planted.returncode == 0, err
    try:
        removed = processes.remove_files_of({one.pw_uid})
        assert {str(p) for p in left} <= set(removed), removed
        assert not any(os.path.lexists(p) for p in left)
        assert target.read_text() == "root's"  # the link removed, not what it named
    finally:
        shutil.rmtree(keep, ignore_errors=True)
