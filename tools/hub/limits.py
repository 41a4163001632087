"""Limits per user on the local hub: processes, memory and CPU (cgroups), a home of its own size.

Each user's single-user server, and everything it starts (kernels, terminals, whatever
a terminal leaves running), lives in a cgroup of that user's: ``memcourse/<user>`` under
each controller, made by the hub (root) before the server starts and entered by the
server's own process before it becomes the user (``LimitedSpawner.make_preexec_fn``: the
first thing the forked child does, so nothing of the user's runs outside it).

=============  ======================================================================
cgroup v2      one hierarchy (``/sys/fs/cgroup`` with ``memory pids cpu`` in
               ``cgroup.controllers``): ``memory.max``, ``memory.swap.max`` 0,
               ``pids.max``, ``cpu.max`` (``cpus`` cores), ``cpu.weight`` 100 each
cgroup v1      where only v1 controllers are mounted (found in /proc/self/mountinfo):
               ``memory.limit_in_bytes`` (and ``memsw`` where swap is accounted),
               ``pids.max``, ``cpu.cfs_quota_us`` (``cpus`` cores), ``cpu.shares`` 1024
``memcourse``  the parent of every user's group: all users together at most
               ``total_memory_mb`` and ``total_pids`` (the hub, its database and the
               system keep the rest)
rlimits        ``RLIMIT_NPROC`` (per Unix user, the backstop should the cgroup be
               missing) and ``RLIMIT_DATA`` at 75 % of the user's memory: one process
               that asks for more gets ``MemoryError`` in its own cell before the
               group's out-of-memory killer ends a kernel
=============  ======================================================================

Equal weights mean that under contention every user with work to run gets the same share
of the CPU, whatever the number of processes each runs; ``cpus`` caps one user below the
machine. A student past the memory limit sees ``MemoryError`` (one allocation) or
JupyterLab's *kernel died, restarting* (the kernel ended by the group's OOM killer); past
the process limit, ``BlockingIOError: [Errno 11] Resource temporarily unavailable`` at
``fork``; the others' groups are untouched.

``mount_home`` gives a student's home a size of its own: an ext4 image (sparse, in the
hub's state folder) loop-mounted on the home (``nosuid,nodev``). This Linux has no quota
tools and a home filled to the disk would stop the hub's database and every other home;
a file system per home bounds it whatever the file system under /home is, and needs
nothing but ``mkfs.ext4`` and a loop device. Past it the student's writes fail with
``No space left on device`` (``[Errno 28]``), in their own home only.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

PARENT = "memcourse"
CONTROLLERS = ("memory", "pids", "cpu")
CFS_PERIOD = 100_000  # µs
HOME_OPTIONS = "loop,nosuid,nodev"


@dataclass
class Limits:
    """One user's limits (``make hub``'s defaults: a 2-core, 24 GiB machine, a class of 30,
    of whom a few are busy at once; the instructor's grading gets more)."""

    memory_mb: int = 2048        # one student's server and all it starts
    pids: int = 256              # processes and threads of one student's server
    cpus: float = 1.0            # cores one student's server may use at most
    nproc: int = 1024            # RLIMIT_NPROC: processes of one Unix user, anywhere
    home_mb: int = 1024          # a student's home (0: no file system of its own)
    instructor_memory_mb: int = 8192
    instructor_pids: int = 4096  # `make grade` runs a cluster of boxed kernels
    total_memory_mb: int = 20480  # every user together (24 GiB less the hub's and system's)
    total_pids: int = 16384       # every user together (the machine's pid_max is 32768)

    def of(self, instructor: bool) -> tuple[int, int]:
        """(memory MB, processes) of one user's group."""
        return ((self.instructor_memory_mb, self.instructor_pids) if instructor
                else (self.memory_mb, self.pids))

    def to_env(self) -> str:
        return ",".join(f"{k}={v}" for k, v in asdict(self).items())

    @classmethod
    def from_env(cls, text: str) -> Limits:
        """The limits ``to_env`` wrote (the hub reads them from its environment)."""
        known = {k: type(v) for k, v in asdict(cls()).items()}
        values = {}
        for item in filter(None, text.split(",")):
            key, _, value = item.partition("=")
            if key not in known:
                raise ValueError(f"unknown limit {key!r} (known: {', '.join(known)})")
            values[key] = known[key](value)
        return cls(**values)


# -- the cgroups --------------------------------------------------------------------
def hierarchy() -> tuple[int, dict[str, Path]]:
    """(version, {controller: mount point}): v2 when one cgroup2 mount has memory, pids
    and cpu; else v1, each controller's own mount. Raises RuntimeError when neither is."""
    v1, v2 = {}, []
    with open("/proc/self/mountinfo") as table:
        for line in table:
            before, _, after = line.partition(" - ")
            point, (fstype, _source, options) = before.split()[4], after.split()[:3]
            if fstype == "cgroup2":
                v2.append(Path(point))
            elif fstype == "cgroup":
                for name in options.split(","):
                    if name in CONTROLLERS:
                        v1[name] = Path(point)
    for point in v2:
        try:
            enabled = (point / "cgroup.controllers").read_text().split()
        except OSError:
            continue
        if set(CONTROLLERS) <= set(enabled):
            return 2, {name: point for name in CONTROLLERS}
    if set(CONTROLLERS) <= set(v1):
        return 1, v1
    raise RuntimeError("no cgroup hierarchy with the memory, pids and cpu controllers is "
                       "mounted (/proc/self/mountinfo): the hub cannot limit its users")


def _write(path: Path, value) -> None:
    path.write_text(f"{value}\n")


def _v2_enable(folder: Path) -> None:
    """Let ``folder``'s children use the three controllers (cgroup v2)."""
    have = set((folder / "cgroup.subtree_control").read_text().split())
    for name in CONTROLLERS:
        if name not in have:
            _write(folder / "cgroup.subtree_control", f"+{name}")


def prepare(limits: Limits) -> None:
    """The parent group of every user, with the class's totals (as root)."""
    version, points = hierarchy()
    if version == 2:
        root = points["memory"]
        _v2_enable(root)
        (root / PARENT).mkdir(exist_ok=True)
        _v2_enable(root / PARENT)
        _write(root / PARENT / "memory.max", limits.total_memory_mb << 20)
        _write(root / PARENT / "pids.max", limits.total_pids)
        return
    for name in CONTROLLERS:
        (points[name] / PARENT).mkdir(exist_ok=True)
    _write(points["memory"] / PARENT / "memory.limit_in_bytes", limits.total_memory_mb << 20)
    _write(points["pids"] / PARENT / "pids.max", limits.total_pids)


def groups(user: str) -> list[Path]:
    """The folders of ``user``'s group, one per mounted hierarchy holding a controller."""
    _, points = hierarchy()
    return sorted({points[name] / PARENT / user for name in CONTROLLERS})


def make_group(user: str, limits: Limits, instructor: bool = False) -> list[Path]:
    """``user``'s group with its limits (made, or set again); returns its ``cgroup.procs``
    files, which the server's process writes itself into."""
    prepare(limits)
    version, points = hierarchy()
    memory, pids = limits.of(instructor)
    cpus = os.cpu_count() if instructor else limits.cpus
    for folder in groups(user):
        folder.mkdir(exist_ok=True)
    if version == 2:
        folder = points["memory"] / PARENT / user
        _write(folder / "memory.max", memory << 20)
        if (folder / "memory.swap.max").exists():
            _write(folder / "memory.swap.max", 0)
        _write(folder / "pids.max", pids)
        _write(folder / "cpu.max", f"{int(cpus * CFS_PERIOD)} {CFS_PERIOD}")
        _write(folder / "cpu.weight", 100)
    else:
        mem = points["memory"] / PARENT / user
        _write(mem / "memory.limit_in_bytes", memory << 20)
        if (mem / "memory.memsw.limit_in_bytes").exists():  # swap counted with memory
            _write(mem / "memory.memsw.limit_in_bytes", memory << 20)
        _write(points["pids"] / PARENT / user / "pids.max", pids)
        cpu = points["cpu"] / PARENT / user
        _write(cpu / "cpu.cfs_period_us", CFS_PERIOD)
        _write(cpu / "cpu.cfs_quota_us", int(cpus * CFS_PERIOD))
        _write(cpu / "cpu.shares", 1024)
    return [folder / "cgroup.procs" for folder in groups(user)]


def enter(procs: list[Path]) -> None:
    """Move the calling process into the groups (before it forks anything: its children
    are born there). Safe after fork: plain system calls only."""
    pid = str(os.getpid()).encode()
    for path in procs:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, pid)
        finally:
            os.close(fd)


def set_rlimits(limits: Limits, instructor: bool = False) -> None:
    """The calling process's RLIMIT_NPROC and RLIMIT_DATA (inherited by what it starts)."""
    memory, _ = limits.of(instructor)
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.nproc, limits.nproc))
    data = (memory << 20) * 3 // 4
    resource.setrlimit(resource.RLIMIT_DATA, (data, data))


def members(user: str) -> list[int]:
    """PIDs in ``user``'s group (its first hierarchy's ``cgroup.procs``)."""
    try:
        text = (groups(user)[0] / "cgroup.procs").read_text()
    except (OSError, RuntimeError):
        return []
    return [int(p) for p in text.split()]


def usage(user: str) -> dict[str, int]:
    """What ``user``'s group uses now: memory bytes, its peak, processes."""
    version, points = hierarchy()
    base = {name: points[name] / PARENT / user for name in CONTROLLERS}
    if version == 2:
        peak = base["memory"] / "memory.peak"
        return {"memory": int((base["memory"] / "memory.current").read_text()),
                "memory_peak": int(peak.read_text()) if peak.exists() else 0,
                "pids": int((base["pids"] / "pids.current").read_text())}
    return {"memory": int((base["memory"] / "memory.usage_in_bytes").read_text()),
            "memory_peak": int((base["memory"] / "memory.max_usage_in_bytes").read_text()),
            "pids": int((base["pids"] / "pids.current").read_text())}


def remove_group(user: str, timeout: float = 10) -> bool:
    """End every process left in ``user``'s group (SIGKILL, until none) and remove the
    group; whether it is gone."""
    deadline = time.monotonic() + timeout
    while (left := members(user)) and time.monotonic() < deadline:
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    try:
        folders = groups(user)
    except RuntimeError:  # no cgroups here: none was made
        return True
    gone = True
    for folder in folders:
        try:
            folder.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            gone = False
    return gone


def release(user: str, home: Path) -> list[str]:
    """What the hub's stop does for each user once their processes are ended: the group
    removed, the home unmounted; returns what could not be done."""
    problems = [] if remove_group(user) else [f"the cgroup of {user} is still in use"]
    if not unmount_home(home):
        problems.append(f"the home of {user} is still mounted (in use?)")
    return problems


# -- a home of its own size -----------------------------------------------------------
def mounted(path: Path) -> bool:
    target = os.path.realpath(path)
    with open("/proc/self/mountinfo") as table:
        return any(line.split()[4] == target for line in table)


def mount_home(home: Path, image: Path, megabytes: int, uid: int, gid: int) -> str:
    """``home`` on an ext4 image of ``megabytes`` (made once, what the home held copied
    into it), loop-mounted ``nosuid,nodev``; says what was done."""
    if mounted(home):
        return f"{home}: mounted already"
    made = ""
    if not image.exists():
        image.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(image.parent, 0o700)
        with open(image, "wb") as f:
            f.truncate(megabytes << 20)
        os.chmod(image, 0o600)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", str(image)], check=True,
                       capture_output=True)
        with tempfile.TemporaryDirectory(prefix="memcourse-home-") as staging:
            _mount(image, Path(staging))
            try:  # what useradd put there (and what an earlier hub left)
                shutil.rmtree(Path(staging) / "lost+found")
                subprocess.run(["cp", "-a", "--no-dereference", f"{home}/.", staging],
                               check=True)
                os.chown(staging, uid, gid)
                os.chmod(staging, 0o700)
            finally:
                subprocess.run(["umount", staging], check=True)
        made = f"made {image} ({megabytes} MB), "
    _mount(image, home)
    return f"{made}{home} mounted ({megabytes} MB)"


def _mount(image: Path, where: Path) -> None:
    done = subprocess.run(["mount", "-o", HOME_OPTIONS, str(image), str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"could not mount {image} at {where}: {done.stderr.strip()}\n"
                         "A home of its own size needs a loop device (root, or a container "
                         "run with them); or run the hub with --home-size 0.")


def unmount_home(home: Path) -> bool:
    """Unmount a home's file system if one is mounted there; whether none is left."""
    if mounted(home):
        subprocess.run(["umount", str(home)], capture_output=True, check=False)
    return not mounted(home)
