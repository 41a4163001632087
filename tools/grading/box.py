"""The sandbox a submission's kernel runs in while it is graded (bubblewrap).

Every kernel nbgrader (and the probe of ``tools.grading.repair``) starts for a submission
runs under ``bwrap`` (the kernel managers of ``tools.grading.kernels``) with

* its **own private folder** (a fresh temporary folder outside the course, holding a copy
  of the submission's regular files but no notebook: the notebook being graded reaches
  the kernel cell by cell), removed when the kernel stops; as root it is a tmpfs of
  ``MEMCOURSE_SANDBOX_DISK_MB`` (512 MB), and the sandbox's ``/tmp`` is a tmpfs of that
  size too (mode 1777, as a system's ``/tmp``: the student's code may write there), so
  that no kernel can fill the machine's disk;
* the course environment **read-only**: the system (``/usr``), the Python installation and
  its virtual environment, and ``memkit`` (bound at ``/opt/memcourse/memkit``). Nothing
  else of the machine is there: not the course root (solutions, gradebook, other
  students' work, nbgrader_config.py), not ``/root`` or ``/home``, not ``/etc`` beyond
  the few files the dynamic loader needs;
* **no environment** but a handful of variables set here (no ``MEMCOURSE_DB_URL``, no
  token, no proxy);
* **no network**: a network namespace of its own (no interface but an unconfigured
  loopback); the grader talks to the kernel over unix (ipc) sockets in the private folder;
* a **PID namespace**: the kernel is PID 2 of its own namespace; when it stops (or the
  grader kills it) the namespace ends and the kernel sets every process started inside
  it, double-forked daemons included, to SIGKILL;
* when the grader runs as root, an **unprivileged user** of its own (uid 61000 and up,
  no group, no capability, ``no_new_privs``), at most ``MEMCOURSE_SANDBOX_NPROC``
  processes and files of at most ``MEMCOURSE_SANDBOX_FSIZE_MB``; memory is limited by the
  address-space limit the grader sets on nbgrader (``--memory-limit``).

Without root, bwrap uses an unprivileged user namespace instead: the same folders,
environment, network and PID isolation, with the kernel running under the instructor's
uid inside its namespace (see the README).

The sandbox is configured through environment variables that ``tools.grading`` sets
for nbgrader (``tools.grading.settings.grader_env``): ``MEMCOURSE_SANDBOX`` (``bwrap``
or ``off``), ``MEMCOURSE_SANDBOX_MEMKIT`` (the memkit package folder),
and ``MEMCOURSE_SANDBOX_TMP`` (where the private folders go).

``command`` is the bwrap command line; ``make_box``, ``fill_box`` and ``remove_box`` the
private folder's life (``remove_boxes`` what a killed kernel left behind); ``unusable``
says why the sandbox cannot run here.

Stage: the box of nbgrader's and the probe's kernels.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.common import safe_files as files
from tools.grading import student_files as limits

BASE_UID = 61000
UIDS = 2000
INSIDE_MEMKIT = "/opt/memcourse"
# the files of /etc a Python kernel needs (the loader's cache, time zone, name lookup)
ETC_FILES = ("ld.so.cache", "ld.so.conf", "localtime", "nsswitch.conf", "host.conf")


def available() -> str | None:
    """The bwrap program, or None when it is not installed."""
    return shutil.which("bwrap")


def unusable() -> str | None:
    """Why the sandbox cannot run here (None when it can): bwrap missing or refused."""
    if not available():
        return (
            "the sandbox needs bubblewrap: install it (as root: apt-get install bubblewrap, "
            "or make system-deps), or grade with --sandbox off (unsafe, see the README)"
        )
    tools = ["prlimit", "setpriv"] if privileged() else []
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        return f"the sandbox needs {', '.join(missing)} (Debian package util-linux)"
    trial = subprocess.run(
        [available(), "--unshare-pid", "--unshare-net", "--die-with-parent"]
        + ([] if privileged() else ["--unshare-user"])
        + ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    if trial.returncode != 0:
        return (
            "bubblewrap cannot create its namespaces here "
            f"({trial.stderr.strip() or trial.returncode}); see the README"
        )
    return None


def privileged() -> bool:
    return os.geteuid() == 0


def _python_dirs() -> list[str]:
    """The folders of the Python installation and virtual environment (read-only binds)."""
    dirs = set()
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        dirs.add(os.path.realpath(p))
        dirs.add(os.path.abspath(p))
    exe = Path(sys.executable)
    dirs.add(str(exe.parent.parent))
    dirs.add(str(exe.resolve().parent.parent))
    # keep the top-most of nested folders
    kept = []
    for d in sorted(dirs, key=len):
        if d in ("/", "/usr") or any(d == k or d.startswith(k + "/") for k in kept):
            continue
        kept.append(d)
    return kept


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in ETC_FILES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def command(
    box: Path,
    inner: list[str],
    memkit: str | None,
    uid: int | None = None,
    nproc: int = 256,
    fsize_mb: int = 512,
) -> list[str]:
    """The bwrap command line running ``inner`` in the sandbox whose private folder is ``box``.

    ``box`` is bound at its own path (so that the ipc sockets and the connection file have
    the same name on both sides); the kernel's working folder is ``box/work``.
    """
    home = box / "home"
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "USER": "student",
        "LOGNAME": "student",
        "LANG": "C.UTF-8",
        "IPYTHONDIR": str(home / ".ipython"),
        "MPLCONFIGDIR": str(home / ".matplotlib"),
        "MPLBACKEND": "agg",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONPATH": INSIDE_MEMKIT if memkit else "",
        "TMPDIR": "/tmp",
    }
    args = [
        available() or "bwrap",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ]
    for key, value in env.items():
        args += ["--setenv", key, value]
    binds = [(d, d) for d in _python_dirs()]
    if memkit:
        binds.append((memkit, f"{INSIDE_MEMKIT}/memkit"))
    # the folders above the binds (and above the private folder), readable by the sandbox
    # user whatever the umask; the system's mount points keep their own modes
    system = {"/", "/tmp", "/usr", "/proc", "/dev", "/etc"}
    above = sorted(
        {
            str(p)
            for dest in [d for _, d in binds] + [str(box)]
            for p in Path(dest).parents
            if str(p) not in system
        },
        key=lambda p: p.count("/"),
    )
    args += _system_binds()
    # /tmp as everywhere: anyone may write there (sticky, 1777), the sandbox user included
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(disk_mb() << 20),
             "--perms", "1777", "--tmpfs", "/tmp"]
    for folder in above:
        args += ["--perms", "0755", "--dir", folder]
    for src, dest in binds:
        args += ["--ro-bind", src, dest]
    args += ["--bind", str(box), str(box), "--chdir", str(box / "work")]
    if uid is None:
        # without root: an unprivileged user namespace (bwrap's default when not root)
        args += ["--unshare-user", "--"] + inner
        return args
    args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--"]
    limits = ["prlimit", f"--nproc={nproc}:{nproc}", f"--fsize={fsize_mb << 20}:{fsize_mb << 20}"]
    drop = [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]
    return args + limits + ["--"] + drop + inner


def make_box(source: Path | None, uid: int | None, parent: str | None = None) -> Path:
    """A private folder: ``work/`` (a copy of the files of ``source``, notebooks left out),
    ``home/`` and ``ipc/``; owned by the sandbox user, closed to everyone else."""
    box = Path(tempfile.mkdtemp(prefix="mcbox-", dir=parent))
    if privileged():
        _mount_tmpfs(box, disk_mb())
    for sub in ("work", "home", "ipc"):
        (box / sub).mkdir()
    if uid is not None:
        for path in [box, *box.iterdir()]:
            os.chown(path, uid, uid, follow_symlinks=False)
    box.chmod(0o700)
    fill_box(box, source, uid)
    return box


def disk_mb() -> int:
    """MB a kernel may write in its private folder (and, apart, in its /tmp)."""
    return int(os.environ.get("MEMCOURSE_SANDBOX_DISK_MB", "512"))


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _mount_tmpfs(folder: Path, size_mb: int) -> None:
    """Mount a tmpfs of ``size_mb`` on ``folder`` (as root): a full box fills no disk."""
    import ctypes

    flags = 0x2 | 0x4  # MS_NOSUID | MS_NODEV
    options = f"size={size_mb}m,mode=0700".encode()
    if _libc().mount(b"tmpfs", str(folder).encode(), b"tmpfs", flags, options) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"cannot mount the private folder's tmpfs: {os.strerror(errno)}")


def remove_box(box: Path) -> None:
    """Remove a private folder (its tmpfs unmounted first, when it has one)."""
    if os.path.ismount(box):
        _libc().umount2(str(box).encode(), 2)  # MNT_DETACH: gone once nothing uses it
    shutil.rmtree(box, ignore_errors=True)


def remove_boxes(parent: Path) -> None:
    """Remove every private folder left in ``parent`` (a kernel killed before its clean-up
    leaves its box, and as root its tmpfs, behind)."""
    for name, _ in files.entries(parent):
        if name.startswith("mcbox-"):
            remove_box(parent / name)


def fill_box(box: Path, source: Path | None, uid: int | None) -> None:
    """Copy the files of ``source`` (notebooks left out) into ``box/work``, owned by ``uid``."""
    if not source or files.kind(Path(source)) != "dir":
        return
    total = 0
    for name, what in files.entries(Path(source))[: limits.MAX_FILES * 2]:
        if what != "file" or name.endswith(".ipynb"):
            continue  # a link or a special file is never followed into the box
        try:
            total += files.copy_bounded(Path(source) / name, box / "work" / name,
                                        min(limits.MAX_FILE, limits.MAX_FILES_TOTAL - total), uid)
        except OSError:
            continue
