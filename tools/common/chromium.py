"""Debian's chromium as every browser of the course launches it: the book's pages, the
lab and the hub driven by Playwright in the tests and in ``make bench`` (never
``playwright install``: the browser is the system's, ``make system-deps``)."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
# no sandbox as root, and no background traffic of Chromium's own (updates, sync, QUIC
# probes) on a machine without internet; Playwright gives each launch an empty profile
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def launch_browser(playwright):
    """Debian's chromium, headless, from a started ``sync_playwright()``; a clear error
    when it is missing."""
    if not CHROMIUM.exists():
        raise RuntimeError("Debian's chromium is missing: run `make system-deps` (as root) first")
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                      args=CHROMIUM_FLAGS)
