"""The sandbox a submission's kernel runs in while it is graded (bubblewrap).

Every kernel nbgrader (and the probe of ``tools.grading.repair``) starts for a submission
runs under ``bwrap`` (the kernel managers of ``tools.grading.kernels``) with

* its **own private folder** (a fresh temporary folder outside the course, holding a copy
  of the submission's regular files but no notebook: the notebook being graded reaches
  the kernel cell by cell), removed when the kernel stops; as root it is a tmpfs of
  ``Sandbox.disk_mb`` (512 MB), and the sandbox's ``/tmp`` is a tmpfs of that
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
  no group, no capability, ``no_new_privs``), at most ``Sandbox.nproc``
  processes and files of at most ``Sandbox.fsize_mb``; memory is limited by the
  address-space limit the grader sets on nbgrader (``--memory-limit``).

Without root, bwrap uses an unprivileged user namespace instead: the same folders,
environment, network and PID isolation, with the kernel running under the instructor's
uid inside its namespace (see docs/grading-safely.md).

``Sandbox`` holds the settings, traits of ``c.Sandbox`` (``nbgrader_config.py``,
``--Sandbox.disk_mb=256`` on nbgrader's command line), each defaulting to its
``MEMCOURSE_SANDBOX*`` environment variable; ``tools.grading`` sets ``MEMCOURSE_SANDBOX``,
``MEMCOURSE_SANDBOX_MEMKIT`` and ``MEMCOURSE_SANDBOX_TMP`` for nbgrader
(``tools.grading.settings.grader_env``) and gives ``--Sandbox.mode`` on its command line.
``configured`` is the settings a grading run in a course folder gets.

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

from traitlets import Enum, Integer, TraitError, Unicode, default
from traitlets.config import Configurable

from tools.common import safe_files as files
from tools.grading import student_files as limits

BASE_UID = 61000
UIDS = 2000
INSIDE_MEMKIT = "/opt/memcourse"
# the files of /etc a Python kernel needs (the loader's cache, time zone, name lookup)
ETC_FILES = ("ld.so.cache", "ld.so.conf", "localtime", "nsswitch.conf", "host.conf")


def _from_env(name: str, fallback: str) -> str:
    return os.environ.get(name) or fallback


def _whole_from_env(name: str, fallback: int) -> int:
    value = os.environ.get(name)
    if not value:
        return fallback
    try:
        return int(value)
    except ValueError:
        raise TraitError(f"{name}={value!r}: not a whole number") from None


class Sandbox(Configurable):
    """The sandbox's settings: traits of ``c.Sandbox``, as nbgrader's own are.

    Each is set, first match wins, on nbgrader's command line (``--Sandbox.disk_mb=256``),
    in ``nbgrader_config.py`` (``c.Sandbox.disk_mb = 256``; the lab's kernels:
    ``jupyter_server_config.py``), by its environment variable (``ENVIRONMENT``), or is
    its default. Every setting is read when the object is made: a size or count that is
    not a whole number of at least 1 raises ``TraitError`` then, naming the trait or the
    variable.
    """

    mode = Enum(
        ["bwrap", "off"],
        help="bwrap: every graded kernel runs in the sandbox; off: as the grader, with the "
        "grader's files, environment and network (unsafe). Default bwrap "
        "(environment: MEMCOURSE_SANDBOX).",
    ).tag(config=True)
    disk_mb = Integer(
        min=1,
        help="MB a kernel may write in its private folder, and apart in its /tmp (each a "
        "tmpfs of this size when the grader runs as root). Default 512 "
        "(environment: MEMCOURSE_SANDBOX_DISK_MB).",
    ).tag(config=True)
    nproc = Integer(
        min=1,
        help="processes the kernel's own user may run (when the grader runs as root). "
        "Default 256 (environment: MEMCOURSE_SANDBOX_NPROC).",
    ).tag(config=True)
    fsize_mb = Integer(
        min=1,
        help="largest file in MB the kernel may write (when the grader runs as root). "
        "Default 512 (environment: MEMCOURSE_SANDBOX_FSIZE_MB).",
    ).tag(config=True)
    memkit = Unicode(
        help="the memkit package folder, bound read-only at /opt/memcourse/memkit; empty: "
        "no memkit in the sandbox. Default empty (environment: MEMCOURSE_SANDBOX_MEMKIT).",
    ).tag(config=True)
    tmp = Unicode(
        help="the folder the private folders are made in; empty: the system's temporary "
        "folder. Default empty (environment: MEMCOURSE_SANDBOX_TMP).",
    ).tag(config=True)

    ENVIRONMENT = {
        "mode": "MEMCOURSE_SANDBOX",
        "disk_mb": "MEMCOURSE_SANDBOX_DISK_MB",
        "nproc": "MEMCOURSE_SANDBOX_NPROC",
        "fsize_mb": "MEMCOURSE_SANDBOX_FSIZE_MB",
        "memkit": "MEMCOURSE_SANDBOX_MEMKIT",
        "tmp": "MEMCOURSE_SANDBOX_TMP",
    }

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for name in self.ENVIRONMENT:
            getattr(self, name)  # a bad value is an error now, not at a kernel's start

    @default("mode")
    def _mode_default(self) -> str:
        return _from_env(self.ENVIRONMENT["mode"], "bwrap")

    @default("disk_mb")
    def _disk_mb_default(self) -> int:
        return _whole_from_env(self.ENVIRONMENT["disk_mb"], 512)

    @default("nproc")
    def _nproc_default(self) -> int:
        return _whole_from_env(self.ENVIRONMENT["nproc"], 256)

    @default("fsize_mb")
    def _fsize_mb_default(self) -> int:
        return _whole_from_env(self.ENVIRONMENT["fsize_mb"], 512)

    @default("memkit")
    def _memkit_default(self) -> str:
        return _from_env(self.ENVIRONMENT["memkit"], "")

    @default("tmp")
    def _tmp_default(self) -> str:
        return _from_env(self.ENVIRONMENT["tmp"], "")


def configured(root: Path, mode: str | None = None) -> Sandbox:
    """The settings a grading run in the course folder ``root`` gives nbgrader's kernels:
    ``c.Sandbox`` of ``root/nbgrader_config.py``, the environment for what it leaves unset,
    and ``mode`` (``make grade``'s ``--sandbox``, which nbgrader gets on its command line)
    over both. Raises ``TraitError`` for a bad value."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = Config()
    if (Path(root) / "nbgrader_config.py").is_file():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    if mode is not None:
        config.Sandbox.mode = mode
    return Sandbox(config=config)


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


def command(box: Path, inner: list[str], settings: Sandbox, uid: int | None = None) -> list[str]:
    """The bwrap command line running ``inner`` in the sandbox whose private folder is ``box``.

    ``box`` is bound at its own path (so that the ipc sockets and the connection file have
    the same name on both sides); the kernel's working folder is ``box/work``. ``settings``
    gives the memkit folder, the size of ``/tmp`` and, with ``uid`` (the grader as root),
    the kernel user's limits of processes and file size.
    """
    memkit = settings.memkit
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
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(settings.disk_mb << 20),
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
    nproc, fsize = settings.nproc, settings.fsize_mb << 20
    limits = ["prlimit", f"--nproc={nproc}:{nproc}", f"--fsize={fsize}:{fsize}"]
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


def make_box(source: Path | None, uid: int | None, settings: Sandbox) -> Path:
    """A private folder in ``settings.tmp``: ``work/`` (a copy of the files of ``source``,
    notebooks left out), ``home/`` and ``ipc/``; owned by the sandbox user, closed to
    everyone else; as root a tmpfs of ``settings.disk_mb``."""
    box = Path(tempfile.mkdtemp(prefix="mcbox-", dir=settings.tmp or None))
    if privileged():
        _mount_tmpfs(box, settings.disk_mb)
    for sub in ("work", "home", "ipc"):
        (box / sub).mkdir()
    if uid is not None:
        for path in [box, *box.iterdir()]:
            os.chown(path, uid, uid, follow_symlinks=False)
    box.chmod(0o700)
    fill_box(box, source, uid)
    return box


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
