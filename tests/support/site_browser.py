"""The built HTML book in a real browser: opened, settled, and a page's first load weighed.

Used by the browser tests (``tests/book/``: ``test_browser``, ``test_screens``,
``test_accessibility``) and by ``make bench`` (``benchmarks/book_weight.py``). The site is
the one ``tools.book.serve.Host(folder, compress=False)`` serves on a free port of
127.0.0.1 (nothing compressed, so a page weighs what its files weigh); the browser is the
one ``tools.common.chromium`` launches.

A page's *first load* is every byte it fetches from opening until the network is quiet
(and, on the search page, MathJax has typeset it), the window at the top of the page, less the frames of the
live figures (``_figures/<id>/*.webp``), which a figure fetches as it comes into view and
as the reader moves it. The heaviest page's first load is held to ``FIRST_LOAD_LIMIT``.
"""

from __future__ import annotations

import time
import urllib.parse

#: the heaviest page's first load, at most
FIRST_LOAD_LIMIT = 2_000_000
FRAMES = "/_figures/"
MB = 1_000_000

SETTLED = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  return true;
}"""


class Traffic:
    """What a page fetches from now on: the body size of each response by URL (``sizes``),
    and whether a request is still in flight (Playwright's own "networkidle" is not reached
    again when a page that is reused navigates to a page it has shown before)."""

    def __init__(self, page) -> None:
        self.page = page
        self.sizes: dict[str, int] = {}
        self._open: set[int] = set()
        self._last = time.monotonic()
        page.on("request", self._started)
        page.on("requestfinished", self._finished)
        page.on("requestfailed", self._ended)

    def _started(self, request) -> None:
        self._open.add(id(request))
        self._last = time.monotonic()

    def _ended(self, request) -> None:
        self._open.discard(id(request))
        self._last = time.monotonic()

    def _finished(self, request) -> None:
        self.sizes[request.url] = request.sizes()["responseBodySize"]
        self._ended(request)

    def wait_quiet(self, quiet: float = 0.5, timeout: float = 30.0) -> None:
        """Until no request has been in flight for ``quiet`` seconds."""
        deadline = time.monotonic() + timeout
        while self._open or time.monotonic() - self._last < quiet:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.page.url}: requests still in flight after {timeout} s")
            self.page.wait_for_timeout(50)

    def first_load_bytes(self) -> int:
        """The bytes seen, less the frames of the live figures."""
        return sum(size for url, size in self.sizes.items() if not is_frame(url))


def is_frame(url: str) -> bool:
    """A frame of a live figure (not its player, ``_figures/player.js``)."""
    path = urllib.parse.urlsplit(url).path
    return FRAMES in path and path.endswith(".webp")


def settle(page, traffic: Traffic) -> None:
    """Wait until ``page`` has loaded, MathJax has typeset it and the network is quiet."""
    page.wait_for_load_state("load")
    page.evaluate(SETTLED)
    traffic.wait_quiet()


def first_load(browser, url: str, viewport: tuple[int, int] = (1280, 900)) -> dict[str, int]:
    """Open ``url`` in a fresh context (an empty cache): the body size of each response of
    its first load, frames of live figures included (:func:`is_frame` tells them)."""
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    try:
        page = context.new_page()
        traffic = Traffic(page)
        page.goto(url, wait_until="load")
        settle(page, traffic)
        return dict(traffic.sizes)
    finally:
        context.close()
