"""The sandbox a submission's kernel runs in while it is graded (bubblewrap).

nbgrader (and the probe of ``tools.grading.repair``) start every kernel through
``SandboxKernelManager``: the kernel runs under ``bwrap`` with

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

Speed. nbgrader runs one notebook after another, and the grader would wait for each
kernel: about a third of a second to start (the sandbox, Python, ipykernel), 0.2 s more
in jupyter_client for IOPub to fall quiet, steps of 0.1 s to see it end. So
``SandboxExecute`` starts each kernel one notebook ahead (``SpareKernelManager``): the
next kernel boots in an empty box of its own while the current notebook runs, and the
next notebook's start hands it the submission's files before its first cell. It is as
new as one started then: it has run nothing but its own start-up, and the notebook
running meanwhile cannot reach it (another box, user and set of namespaces). The client
is ready as soon as both channels are shown to work (``SandboxKernelClient``), a kernel
is killed once its notebook has run, and its end is seen within 10 ms.

The sandbox is configured through environment variables that ``tools.grading`` sets
for nbgrader (``tools.grading.settings.grader_env``): ``MEMCOURSE_SANDBOX`` (``bwrap``
or ``off``), ``MEMCOURSE_SANDBOX_MEMKIT`` (the memkit package folder),
and ``MEMCOURSE_SANDBOX_TMP`` (where the private folders go).

Stage: the kernels of nbgrader and of the probe (``tools.grading.repair``), loaded by
name. Depends on: ``tools.common.nbgrader_cells``, ``tools.grading.student_files`` and ``tools.common.safe_files`` (the submission's files copied into the
box without following a link).
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from nbgrader.preprocessors import ClearHiddenTests, Execute
from traitlets import DottedObjectName, Enum, Type

from tools.common import nbgrader_cells, safe_files as files
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


class SandboxKernelClient(AsyncKernelClient):
    """The client of a sandboxed kernel: ready as soon as both channels are shown to work.

    jupyter_client's ``wait_for_ready`` ends by reading IOPub until it has been quiet for
    0.2 s, a pause on every notebook graded. Here the kernel is ready when it has replied
    to ``kernel_info`` (the shell channel works) and its IOPub status ``idle`` for that
    request has arrived (IOPub is subscribed, and nothing of the start-up is left to come
    before it). A status missed while the subscription was joining means asking again.
    """

    async def _async_wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        asked: set[str] = set()
        while True:
            asked.add(self.kernel_info())
            if await self._replied_and_idle(asked, min(1.0, deadline - time.monotonic())):
                return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")

    async def _replied_and_idle(self, asked: set[str], wait: float) -> bool:
        until = time.monotonic() + max(wait, 0.05)
        reply = None
        while reply is None:
            try:
                msg = await self.shell_channel.get_msg(timeout=max(until - time.monotonic(), 0))
            except Empty:
                return False
            if msg["msg_type"] == "kernel_info_reply":
                reply = msg
        self._handle_kernel_info_reply(reply)
        while True:
            try:
                msg = await self.iopub_channel.get_msg(timeout=max(until - time.monotonic(), 0))
            except Empty:
                return False
            if (msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle"
                    and msg["parent_header"].get("msg_id") in asked):
                return True

    wait_for_ready = _async_wait_for_ready  # as AsyncKernelClient names its own


class SandboxKernelManager(AsyncKernelManager):
    """A kernel manager that starts the Python kernel inside the sandbox (ipc transport)."""

    client_class = DottedObjectName("tools.grading.sandbox.SandboxKernelClient")
    client_factory = Type(klass=SandboxKernelClient)

    def __init__(self, *args, **kwargs):
        kwargs.pop("kernel_name", None)
        super().__init__(*args, kernel_name="python3", **kwargs)
        self.transport = "ipc"
        self._box: Path | None = None
        self._uid_value: int | None = None

    @property
    def kernel_spec(self):  # the course's Python, interrupted by a message (no signal crosses)
        if self._kernel_spec is None:
            self._kernel_spec = KernelSpec(
                argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                display_name="Python 3 (memcourse sandbox)",
                language="python",
                interrupt_mode="message",
            )
        return self._kernel_spec

    def _uid(self) -> int | None:
        if not privileged():
            return None
        return BASE_UID + (os.getpid() * 7919 + int(time.monotonic() * 1000)) % UIDS

    async def _async_pre_start_kernel(self, **kw):
        if self._box is None:
            source = str(kw.get("cwd") or "")
            self._open_box(Path(source) if source else None, kw)
        kw["cwd"] = str(self._box)
        kw["env"] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        return await super()._async_pre_start_kernel(**kw)

    def _open_box(self, source: Path | None, kw: dict) -> None:
        """This kernel's private folder holding ``source``'s files, its user and sockets."""
        self._uid_value = self._uid()
        self._box = make_box(
            source, self._uid_value, os.environ.get("MEMCOURSE_SANDBOX_TMP") or None
        )
        self.ip = str(self._box / "ipc" / "k")
        self.connection_file = str(self._box / "ipc" / "kernel.json")

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        # a killed sandbox is gone within milliseconds: look every 10 ms, not every 100
        await super()._async_wait(pollinterval=min(pollinterval, 0.01))

    def write_connection_file(self, **kwargs):
        super().write_connection_file(**kwargs)
        if self._box is not None and self._uid_value is not None:
            os.chown(self.connection_file, self._uid_value, self._uid_value)
            for sub in ("ipc",):
                os.chown(self._box / sub, self._uid_value, self._uid_value)

    def format_kernel_cmd(self, extra_arguments=None):
        inner = super().format_kernel_cmd(extra_arguments)
        return command(
            self._box,
            inner,
            os.environ.get("MEMCOURSE_SANDBOX_MEMKIT") or None,
            self._uid_value,
            int(os.environ.get("MEMCOURSE_SANDBOX_NPROC", "256")),
            int(os.environ.get("MEMCOURSE_SANDBOX_FSIZE_MB", "512")),
        )

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if restart or self._box is None:
            return
        remove_box(self._box)
        self._box = None


class SpareKernelManager(SandboxKernelManager):
    """``SandboxKernelManager`` keeping one kernel started ahead for the next notebook.

    Each kernel is still new, in a box, a user and namespaces of its own: the spare has
    run no code but its own start-up, and receives the submission's files before the
    first cell. The spare left at the end is killed and its box removed (``atexit``).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._adopted: subprocess.Popen | None = None
        self._spare: _Spare | None = None  # the spare this kernel was, kept while it runs

    def _open_box(self, source: Path | None, kw: dict) -> None:
        spare = _take_spare(kw.get("extra_arguments"))
        if spare is None:
            super()._open_box(source, kw)
            return
        # a kernel already up in an empty box: give it the files, take its sockets
        self._box, self._uid_value = spare.km._box, spare.km._uid_value
        self._adopted, self._spare = spare.process, spare
        self.connection_file = spare.km.connection_file
        self.load_connection_file()  # its key, transport and sockets
        fill_box(self._box, source, self._uid_value)

    def write_connection_file(self, **kwargs):
        if self._adopted is None:  # a spare's file stays as it is: it may be reading it now
            super().write_connection_file(**kwargs)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        process, self._adopted = self._adopted, None
        if process is None:
            await super()._async_launch_kernel(kernel_cmd, **kw)
        else:  # the spare's process becomes this kernel's, as LocalProvisioner records one
            self.provisioner.process = process
            self.provisioner.pid = process.pid
            self.provisioner.pgid = os.getpgid(process.pid)

    async def _async_start_kernel(self, **kw):
        await super()._async_start_kernel(**kw)
        await _start_spare(self, kw.get("extra_arguments") or [])

    start_kernel = _async_start_kernel  # as AsyncKernelManager names its own


@dataclasses.dataclass
class _Spare:
    """A kernel started ahead by ``km`` (kept: dropping it would remove the connection file
    that the kernel may not have read yet)."""

    km: SandboxKernelManager
    extra_arguments: list[str]

    @property
    def process(self) -> subprocess.Popen:
        return self.km.provisioner.process

    def discard(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()
        remove_box(self.km._box)


_spare: _Spare | None = None


def _take_spare(extra_arguments: list[str] | None) -> _Spare | None:
    """The kernel started ahead, if it is still running and was started as this one would be."""
    global _spare
    spare, _spare = _spare, None
    if spare is None:
        return None
    if spare.process.poll() is not None or spare.extra_arguments != list(extra_arguments or []):
        spare.discard()
        return None
    return spare


async def _start_spare(like: SandboxKernelManager, extra_arguments: list[str]) -> None:
    global _spare
    if _spare is not None:
        _spare.discard()
    km = SandboxKernelManager(config=like.config)
    cmd, kw = await km._async_pre_start_kernel(extra_arguments=list(extra_arguments))
    await km._async_launch_kernel(cmd, **kw)
    _spare = _Spare(km, list(extra_arguments))


@atexit.register
def _discard_spare() -> None:
    global _spare
    if _spare is not None:
        _spare.discard()
        _spare = None


class SandboxExecute(Execute):
    """nbgrader's Execute, with every kernel started in the sandbox, one notebook ahead.

    A kernel is killed once its notebook has run (``shutdown_kernel``): nothing in its
    box outlives it, so there is nothing to wait for a graceful end.
    """

    shutdown_kernel = Enum(["graceful", "immediate"], default_value="immediate").tag(config=True)

    def __init__(self, *args, **kwargs):
        if os.environ.get("MEMCOURSE_SANDBOX", "bwrap") != "off":
            kwargs["kernel_manager_class"] = SpareKernelManager
        super().__init__(*args, **kwargs)


class VisibleTests(ClearHiddenTests):
    """nbgrader's ``ClearHiddenTests`` on the test cells only (a student's own cell that
    happens to hold the marker text is the student's, left as written)."""

    def preprocess_cell(self, cell, resources, cell_index):
        if nbgrader_cells.is_test(cell):
            return super().preprocess_cell(cell, resources, cell_index)
        return cell, resources


def sanitize_preprocessors() -> str:
    """The value of ``--Autograde.sanitize_preprocessors``: nbgrader's, with its own
    ``ClearHiddenTests`` (``VisibleTests``) after ``OverwriteCells`` (which puts the gradebook's test cells
    back, hidden tests in): the kernel runs the visible part of each test only, and the
    grader runs the whole cell in its own process (``tools.grading.recheck``)."""
    names = [
        "nbgrader.preprocessors.ClearOutput",
        "nbgrader.preprocessors.DeduplicateIds",
        "nbgrader.preprocessors.OverwriteKernelspec",
        "nbgrader.preprocessors.OverwriteCells",
        "tools.grading.sandbox.VisibleTests",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]
    return json.dumps(names)


def autograde_preprocessors() -> str:
    """The value of ``--Autograde.autograde_preprocessors``: nbgrader's, Execute sandboxed."""
    names = [
        "tools.grading.sandbox.SandboxExecute",
        "nbgrader.preprocessors.IgnorePattern",
        "nbconvert.preprocessors.ClearMetadataPreprocessor",
        "nbgrader.preprocessors.LimitOutput",
        "nbgrader.preprocessors.SaveAutoGrades",
        "nbgrader.preprocessors.AssignLatePenalties",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]
    return json.dumps(names)


