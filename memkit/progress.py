"""A sign of life under any cell that runs longer than about two seconds.

Loaded by the course's kernel (``jupyter/kernels/python3/kernel.json`` passes
``--ext=memkit.progress``), so only in the course's JupyterLab: a cell still running
after ``DELAY`` seconds gets a line under it, a bar that sweeps and the seconds
elapsed, updated twice a second; when the cell ends the line is removed. Nothing is
printed by a cell that ends sooner, and the book's builds (which start their kernels
without the extension) never see it.
"""

from __future__ import annotations

import threading
import time

DELAY = 2.0
PERIOD = 0.5
WIDTH = 20


def bar(elapsed: float, width: int = WIDTH) -> str:
    """A sweeping text bar and the elapsed seconds, e.g. ``[   ■■■■     ] 3.5 s``."""
    if elapsed < 0:
        raise ValueError(f"elapsed must be >= 0 seconds, got {elapsed}")
    position = int(elapsed / PERIOD) % (2 * (width - 4))
    start = position if position < width - 4 else 2 * (width - 4) - position
    cells = [" "] * width
    for i in range(start, start + 4):
        cells[i] = "■"
    return f"running [{''.join(cells)}] {elapsed:4.1f} s"


class _Watch:
    def __init__(self, delay: float = DELAY):
        self.delay = delay
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._handle = None

    def start(self, *_args) -> None:
        self.stop()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(self._stop, time.monotonic()),
                                        daemon=True)
        self._thread.start()

    def _run(self, stop: threading.Event, started: float) -> None:
        from IPython.display import display

        if stop.wait(self.delay):
            return
        self._handle = display({"text/plain": bar(time.monotonic() - started)}, raw=True,
                               display_id=True)
        while not stop.wait(PERIOD):
            self._handle.update({"text/plain": bar(time.monotonic() - started)}, raw=True)

    def stop(self, *_args) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
            self._thread = None
        if self._handle is not None:
            self._handle.update({"text/plain": ""}, raw=True)
            self._handle = None


_watch = _Watch()


def load_ipython_extension(ipython) -> None:
    ipython.events.register("pre_run_cell", _watch.start)
    ipython.events.register("post_run_cell", _watch.stop)


def unload_ipython_extension(ipython) -> None:
    ipython.events.unregister("pre_run_cell", _watch.start)
    ipython.events.unregister("post_run_cell", _watch.stop)
    _watch.stop()
