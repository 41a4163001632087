"""The kernels of a graded notebook, each started in a box of its own (``tools.grading.box``).

``SandboxKernelManager`` starts the course's Python kernel inside the sandbox, over ipc
sockets in its private folder, and removes the box when the kernel ends;
``SandboxKernelClient`` is its client; ``SpareKernelManager`` keeps one kernel started
ahead for the next notebook.

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

Stage: the kernels of nbgrader and of the probe (``tools.grading.repair``), loaded by
name.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Instance, Type, default

from tools.grading.box import (BASE_UID, UIDS, Sandbox, command, fill_box, make_box, privileged,
                               remove_box)


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
    """A kernel manager that starts the Python kernel inside the sandbox (ipc transport),
    with the settings of ``sandbox`` (``c.Sandbox`` of its configuration, made with it)."""

    client_class = DottedObjectName("tools.grading.kernels.SandboxKernelClient")
    client_factory = Type(klass=SandboxKernelClient)
    sandbox = Instance(Sandbox)

    @default("sandbox")
    def _sandbox_default(self) -> Sandbox:
        return Sandbox(parent=self)

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
        self._box = make_box(source, self._uid_value, self.sandbox)
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
        return command(self._box, inner, self.sandbox, self._uid_value)

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
    km = SandboxKernelManager(config=like.config, sandbox=like.sandbox)
    cmd, kw = await km._async_pre_start_kernel(extra_arguments=list(extra_arguments))
    await km._async_launch_kernel(cmd, **kw)
    _spare = _Spare(km, list(extra_arguments))


@atexit.register
def _discard_spare() -> None:
    global _spare
    if _spare is not None:
        _spare.discard()
        _spare = None
