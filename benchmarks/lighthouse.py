"""Lighthouse's mobile audit of the start page and the three heaviest chapters of the HTML book.

    python benchmarks/lighthouse.py [--pages book/ch06-soft-dictionary ...]   (make bench)

Lighthouse, pinned in benchmarks/lighthouse/package.json and its lockfile, is installed
from the npm registry with ``npm ci`` into _build/lighthouse (once; again when the lockfile
changes). Two packages a dependency of Lighthouse asks for as "latest" are pinned there
too (``overrides``), or ``npm ci`` fails once a newer one is published. _build/html is served gzip-compressed, as a web host would, by
``tools/book/serve.py``, a process of its own on a free port of 127.0.0.1, stopped by its
PID at the end. Each page is audited with Lighthouse's default preset, a phone (Moto G
Power's screen, a mid-range phone's CPU, slow 4G, simulated throttling), in Debian's
chromium (tools/common/chromium.py), for performance and accessibility. The heaviest
chapters are the three whose page weighs most as sent (gzip-compressed HTML, the formulas'
SVG included), found anew at each run: Chapters 6, 5 and 4 today.

Prints per page the performance score, total blocking time (TBT), cumulative layout shift
(CLS), largest contentful paint (LCP) and the accessibility score, and the load average
before and after (the simulated times come from the trace of a real load, so a busy
machine shows in them); each report is kept as _build/lighthouse/<page>.json. Exits 1 when
a page misses a target: performance at least 90, TBT under 200 ms, CLS under 0.1,
accessibility 100.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import ROOT, npm  # noqa: E402
from tools.book.serve import LEVEL, Host  # noqa: E402
from tools.common.chromium import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402

SITE = ROOT / "_build" / "html"
PINNED = Path(__file__).resolve().parent / "lighthouse"
INSTALLED = ROOT / "_build" / "lighthouse"
CLI = INSTALLED / "node_modules" / "lighthouse" / "cli" / "index.js"
START = "book/index"
# (what a page must reach, its name in the report, as printed)
TARGETS = {"performance": 90, "tbt": 200, "cls": 0.1, "accessibility": 100}


def heaviest_chapters(site: Path, count: int = 3) -> list[str]:
    """The ``count`` chapters (``book/chNN-*``) whose HTML weighs most as served (gzip)."""
    weight = {page: len(gzip.compress(page.read_bytes(), compresslevel=LEVEL))
              for page in site.glob("book/ch[0-9]*.html")}
    return [page.relative_to(site).with_suffix("").as_posix()
            for page in sorted(weight, key=weight.get, reverse=True)[:count]]


def install() -> Path:
    """Lighthouse's command line, installed as the lockfile pins it."""
    lock = (PINNED / "package-lock.json").read_text()
    stamp = INSTALLED / "package-lock.json"
    if not CLI.exists() or not stamp.exists() or stamp.read_text() != lock:
        shutil.rmtree(INSTALLED, ignore_errors=True)
        INSTALLED.mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(PINNED / name, INSTALLED / name)
        done = npm(["ci", "--ignore-scripts", "--no-audit", "--no-fund"], INSTALLED)
        if done.returncode != 0 or not CLI.exists():
            raise SystemExit(f"npm ci of Lighthouse failed:\n{done.stdout}{done.stderr}")
    return CLI


def audit(cli: Path, url: str, report: Path) -> dict:
    """Lighthouse's mobile preset on ``url``: the report kept, its figures returned."""
    flags = " ".join(["--headless=new", *CHROMIUM_FLAGS])
    done = subprocess.run(
        ["node", str(cli), url, "--quiet", "--output=json", f"--output-path={report}",
         "--only-categories=performance,accessibility", f"--chrome-flags={flags}"],
        env={**os.environ, "CHROME_PATH": str(CHROMIUM)}, capture_output=True, text=True,
        check=False)
    if done.returncode != 0 or not report.exists():
        raise SystemExit(f"Lighthouse failed on {url}:\n{done.stderr[-3000:]}")
    result = json.loads(report.read_text())
    if result.get("runtimeError"):
        raise SystemExit(f"Lighthouse on {url}: {result['runtimeError']}")
    audits, categories = result["audits"], result["categories"]
    return {
        "performance": round(categories["performance"]["score"] * 100),
        "tbt": audits["total-blocking-time"]["numericValue"],
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "lcp": audits["largest-contentful-paint"]["numericValue"],
        "accessibility": round(categories["accessibility"]["score"] * 100),
        "shifts": [item.get("node", {}).get("selector", "")
                   for item in (audits.get("layout-shifts", {}).get("details") or {}).get("items", [])],
    }


def missed(figures: dict) -> list[str]:
    """The targets a page's figures miss, as words."""
    misses = []
    if figures["performance"] < TARGETS["performance"]:
        misses.append(f"performance {figures['performance']} < {TARGETS['performance']}")
    if figures["tbt"] >= TARGETS["tbt"]:
        misses.append(f"TBT {figures['tbt']:.0f} ms >= {TARGETS['tbt']} ms")
    if figures["cls"] >= TARGETS["cls"]:
        misses.append(f"CLS {figures['cls']:.3f} >= {TARGETS['cls']} ({', '.join(figures['shifts'])})")
    if figures["accessibility"] < TARGETS["accessibility"]:
        misses.append(f"accessibility {figures['accessibility']} < {TARGETS['accessibility']}")
    return misses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", nargs="+", help="pages, as in _toc.yml (default: the start"
                        " page and the three heaviest chapters)")
    args = parser.parse_args()
    if not (SITE / "book" / "index.html").exists():
        raise SystemExit(f"no built book in {SITE}: run `make book` first")
    pages = args.pages or [START, *heaviest_chapters(SITE)]
    if not CHROMIUM.exists():
        raise SystemExit("Debian's chromium is missing: run `make system-deps` (as root) first")
    cli = install()
    print(f"load average {os.getloadavg()[0]:.2f} at the start")
    server = Host(SITE)
    failures = []
    try:
        print(f"{'page (Lighthouse, mobile)':34} {'perf':>4} {'TBT ms':>7} {'CLS':>6}"
              f" {'LCP s':>6} {'a11y':>4}")
        for page in pages:
            report = INSTALLED / f"{page.replace('/', '_')}.json"
            figures = audit(cli, f"{server.url}{page}.html", report)
            print(f"{page:34} {figures['performance']:4d} {figures['tbt']:7.0f}"
                  f" {figures['cls']:6.3f} {figures['lcp'] / 1000:6.2f} {figures['accessibility']:4d}")
            failures += [f"{page}: {miss}" for miss in missed(figures)]
    finally:
        server.stop()
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    for failure in failures:
        print(f"MISSED {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
