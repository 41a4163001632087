"""The first load of the heaviest page of the HTML book, before any frame of a live figure.

    python benchmarks/book_weight.py [--top 12]       (make bench runs it, after make book)

Serves _build/html on 127.0.0.1 (``tools.book.serve``, nothing compressed) and opens every
page of the site in Debian's chromium, each in a fresh context (an empty cache), as a
reader arriving at it: what the page fetches
until MathJax has typeset it and the network is quiet, the window at the top, less the
frames of the live figures (tests/support/site_browser.py). Prints the heaviest page's weight
against the first load's limit (2.0 MB, ``FIRST_LOAD_LIMIT``) and what it is made of, largest
first.
"""

from __future__ import annotations

import argparse
import sys
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import ROOT  # noqa: E402
from tests.support import site_browser as book_browser  # noqa: E402
from tools.common import chromium  # noqa: E402
from tests.support.site_browser import FIRST_LOAD_LIMIT, MB  # noqa: E402
from tools.book.serve import Host  # noqa: E402
from tools.book.toc import toc_files  # noqa: E402

SITE = ROOT / "_build" / "html"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=12, help="parts of the heaviest page listed")
    args = parser.parse_args()
    if not (SITE / "book" / "index.html").exists():
        raise SystemExit(f"no built book in {SITE}: run `make book` first")
    pages = ["genindex.html", "search.html"] + [f"{name}.html" for name in toc_files()]
    from playwright.sync_api import sync_playwright

    server = Host(SITE, compress=False)
    weights = {}
    try:
        with sync_playwright() as playwright:
            browser = chromium.launch_browser(playwright)
            for page in pages:
                weights[page] = book_browser.first_load(browser, server.url + page)
            browser.close()
    finally:
        server.stop()

    def total(sizes):
        return sum(s for url, s in sizes.items() if not book_browser.is_frame(url))

    heaviest = max(weights, key=lambda p: total(weights[p]))
    sizes = weights[heaviest]
    frames = sum(s for url, s in sizes.items() if book_browser.is_frame(url))
    print(f"{'page (first load, before any frame)':48} {'MB':>6}")
    for page in sorted(weights, key=lambda p: -total(weights[p]))[:5]:
        print(f"{page:48} {total(weights[page]) / MB:6.2f}")
    print(f"heaviest page {heaviest}: {total(sizes) / MB:.2f} MB in"
          f" {sum(not book_browser.is_frame(u) for u in sizes)} requests"
          f" (limit {FIRST_LOAD_LIMIT / MB:.1f} MB: "
          f"{'met' if total(sizes) <= FIRST_LOAD_LIMIT else 'MISSED'});"
          f" frames of the figures in view besides: {frames / 1e3:.0f} kB")
    parts = sorted(((s, u) for u, s in sizes.items() if not book_browser.is_frame(u)), reverse=True)
    for size, url in parts[:args.top]:
        print(f"  {size / 1e3:8.1f} kB  {urllib.parse.urlsplit(url).path.lstrip('/')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
