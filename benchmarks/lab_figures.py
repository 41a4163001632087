"""Key press to new picture, per figure, in the course's JupyterLab in a real browser.

    python benchmarks/lab_figures.py [--presses 15]     (make bench runs it)

Starts the course's lab (as `make lab` does, on a free port of 127.0.0.1), opens each
chapter that shows a figure with the Jupytext viewer, runs it, and presses each
figure's first control with the keyboard: the time from the key press to the new
picture decoded in the page (a round trip through the kernel) is printed as a median
per figure. Target: median < 60 ms on a 2-core machine that does nothing else. A
measurement, not a test: the browser, the lab server and the kernel share the cores, so
one key press takes from about 30 to 90 ms and a median moves by several ms from run to
run; the load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.common import chromium
from tests.support import lab_browser
from tests.support.lab_browser import FIGURES, OPEN_AND_RUN, ROOT, SAVE_AND_CLOSE


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=15)
    args = parser.parse_args()
    chapters = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "book").glob("*.md")
                      if "figures.get(" in p.read_text())
    from playwright.sync_api import sync_playwright

    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    server = lab_browser.LabServer("student")
    rows = []
    try:
        with sync_playwright() as playwright:
            browser = chromium.launch_browser(playwright)
            page = lab_browser.open_lab(browser, server)
            for chapter in chapters:
                opened = page.evaluate(OPEN_AND_RUN, [chapter, "Jupytext Notebook", True])
                for figure in page.evaluate(FIGURES, opened["id"]):
                    kind, position = lab_browser.figure_controls(page, opened["id"],
                                                                 figure["index"])[0]
                    times = []
                    for _ in range(args.presses):
                        seen = lab_browser.press_control(page, opened["id"], figure["index"],
                                                         kind, position)
                        if seen["ms"] is not None:
                            times.append(seen["ms"])
                    rows.append((figure["last"], times))
                page.evaluate(SAVE_AND_CLOSE, opened["id"])
            browser.close()
    finally:
        server.stop()
    print(f"{'figure (in the lab, key press to new picture)':48} {'median':>8} {'max':>7}")
    for name, times in rows:
        if times:
            print(f"{name:48} {statistics.median(times):6.0f}ms {max(times):5.0f}ms")
        else:
            print(f"{name:48}   no new picture seen")
    slow = [n for n, t in rows if not t or statistics.median(t) >= 60]
    print("target (median < 60 ms): " + ("met by every figure" if not slow else
                                         "missed by " + ", ".join(slow))
          + f"; load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
