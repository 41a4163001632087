"""Lighthouse on the HTML book as a phone opens it: the start page and the three heaviest chapters.

    python benchmarks/lighthouse.py [--pages book/index.html ...]   (make bench runs it, after make book)

Lighthouse (npm, pinned in benchmarks/lighthouse/package.json and its lockfile, installed
with ``npm ci`` into _build/lighthouse) runs Debian's chromium headless on the book served
from _build/html on 127.0.0.1, with its default settings: a mobile phone's screen and
simulated throttling (a slow 4G network, a CPU four times slower than this one). The
chapters are the three whose pages have the most HTML elements. For each page it prints
the performance score, total blocking time, largest contentful paint, cumulative layout
shift and the accessibility score, against the goals of the course (performance at least
90, blocking under 200 ms, layout shift under 0.1, accessibility 100), with the machine's
load average (simulated throttling scales what it measures here). The full reports are
kept in _build/lighthouse/reports/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import ROOT  # noqa: E402
from tools.book import browser as book_browser  # noqa: E402

SITE = ROOT / "_build" / "html"
PINNED = Path(__file__).resolve().parent / "lighthouse"
INSTALLED = ROOT / "_build" / "lighthouse"
GOALS = {"performance": (">=", 90), "tbt_ms": ("<", 200), "cls": ("<", 0.1),
         "accessibility": (">=", 100)}


def install() -> Path:
    """Lighthouse as the lockfile pins it (once; again when the lockfile changes)."""
    lock = (PINNED / "package-lock.json").read_text()
    command = INSTALLED / "node_modules" / ".bin" / "lighthouse"
    if not command.exists() or (INSTALLED / "package-lock.json").read_text() != lock:
        shutil.rmtree(INSTALLED / "node_modules", ignore_errors=True)
        INSTALLED.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(PINNED / name, INSTALLED / name)
        done = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
                              cwd=INSTALLED, capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not command.exists():
            raise SystemExit(f"npm ci of Lighthouse failed:\n{done.stdout}{done.stderr}")
    return command


def heaviest_chapters(count: int = 3) -> list[str]:
    """The chapters whose pages hold the most HTML elements (tags)."""
    tags = re.compile(rb"<[a-zA-Z]")
    sizes = {p: len(tags.findall(p.read_bytes())) for p in (SITE / "book").glob("ch*.html")}
    ranked = sorted(sizes, key=lambda p: -sizes[p])[:count]
    return [str(p.relative_to(SITE)) for p in ranked]


def audit(command: Path, url: str, report: Path) -> dict:
    """One Lighthouse run (mobile, simulated throttling); its figures."""
    flags = " ".join(["--headless=new"] + book_browser.CHROMIUM_FLAGS)
    done = subprocess.run(
        [str(command), url, "--quiet", "--output=json", f"--output-path={report}",
         "--only-categories=performance,accessibility", f"--chrome-flags={flags}"],
        env={**os.environ, "CHROME_PATH": str(book_browser.CHROMIUM)},
        capture_output=True, text=True, timeout=600,
    )
    if done.returncode != 0 or not report.exists():
        raise SystemExit(f"Lighthouse failed on {url}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    data = json.loads(report.read_text())
    audits, categories = data["audits"], data["categories"]
    return {
        "performance": round(100 * (categories["performance"]["score"] or 0)),
        "tbt_ms": audits["total-blocking-time"]["numericValue"],
        "lcp_s": audits["largest-contentful-paint"]["numericValue"] / 1000,
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "accessibility": round(100 * (categories["accessibility"]["score"] or 0)),
        "dom": (audits.get("dom-size", {}).get("numericValue") or 0),
    }


def met(name: str, value: float) -> bool:
    how, goal = GOALS[name]
    return value >= goal if how == ">=" else value < goal


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", nargs="*", help="pages of _build/html (default: the start "
                        "page and the three heaviest chapters)")
    args = parser.parse_args()
    if not (SITE / "book" / "index.html").exists():
        raise SystemExit(f"no built book in {SITE}: run `make book` first")
    if not book_browser.CHROMIUM.exists():
        raise SystemExit("Debian's chromium is missing: run `make system-deps` (as root) first")
    command = install()
    pages = args.pages or ["book/index.html"] + heaviest_chapters()
    reports = INSTALLED / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    server = book_browser.SiteServer(SITE)
    rows = {}
    try:
        for page in pages:
            load = os.getloadavg()[0]
            rows[page] = {**audit(command, server.url + page,
                                  reports / (Path(page).stem + ".json")), "load": load}
    finally:
        server.stop()
    print("Lighthouse (mobile, simulated throttling), Debian's chromium; goals: performance >= 90,"
          " TBT < 200 ms, CLS < 0.1, accessibility 100")
    print(f"{'page':36} {'perf':>5} {'TBT ms':>7} {'LCP s':>6} {'CLS':>6} {'a11y':>5} "
          f"{'DOM':>6} {'load':>5}")
    missed = 0
    for page, r in rows.items():
        marks = {k: "" if met(k, r[k]) else "!" for k in GOALS}
        missed += sum(bool(m) for m in marks.values())
        print(f"{page:36} {r['performance']:>4}{marks['performance']:1} "
              f"{r['tbt_ms']:>6.0f}{marks['tbt_ms']:1} {r['lcp_s']:>6.1f} "
              f"{r['cls']:>5.3f}{marks['cls']:1} {r['accessibility']:>4}{marks['accessibility']:1} "
              f"{r['dom']:>6.0f} {r['load']:>5.2f}")
    print(f"goals missed: {missed} (marked !); load: the 1-minute load average as each page "
          f"was measured, on {os.cpu_count()} cores; reports in {reports}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
