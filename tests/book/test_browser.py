"""Open every page of the built HTML book in a real browser, as a reader would.

The book is served from _build/html on localhost and each page is opened in headless
Chromium (Debian's /usr/bin/chromium, driven by Playwright; `make system-deps`
installs it; tests/support/site_browser.py). A page passes when nothing failed to load, nothing
was asked of another site, the console shows no error, its first load (before any frame
of a live figure) weighs at most 2.0 MB, every formula is typeset (at build time, in SVG:
no page but the search page loads MathJax), every image has pixels, and every link inside the book leads to a page and
anchor that exist. One chapter is photographed into _build/screenshots/.
"""

from __future__ import annotations

import functools
import pathlib
import re
import urllib.parse

import pytest

from support import site_browser as book_browser
from support.site_browser import FIRST_LOAD_LIMIT, MB
from tools.book.toc import toc_files

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOTS = ROOT / "_build" / "screenshots"
SCREENSHOT_CHAPTER = "book/ch02-matrix-matrix"


# every page Sphinx writes: the redirecting index, the toc's pages, the index and search
PAGES = ["index.html", "genindex.html", "search.html"] + [f"{f}.html" for f in toc_files()]


# -- what the HTML on disk says ------------------------------------------------------
def local_file(built: pathlib.Path, site: str, url: str) -> pathlib.Path | None:
    """The file under built that a URL of the local site names, or None."""
    path = urllib.parse.unquote(urllib.parse.urlsplit(url).path)
    relative = path[len(urllib.parse.urlsplit(site).path):]
    target = built / relative
    if target.is_dir():
        target = target / "index.html"
    return target if target.is_file() else None


@functools.cache
def anchors(path: pathlib.Path) -> frozenset[str]:
    text = path.read_text(errors="replace")
    return frozenset(re.findall(r'\b(?:id|name)="([^"]+)"', text))


def refresh_target(path: pathlib.Path) -> str | None:
    """Where a page that only redirects (<meta http-equiv="refresh">) sends the reader."""
    match = re.search(r'http-equiv="refresh"[^>]*content="[^"]*url=([^"]+)"', path.read_text(),
                      re.IGNORECASE)
    return match.group(1) if match else None


def math_nodes_in_source(path: pathlib.Path) -> int:
    """How many formulas Sphinx wrote into the page (each wrapper stays round its SVG)."""
    return len(re.findall(r'class="math notranslate nohighlight"', path.read_text()))


# -- in the page ---------------------------------------------------------------------
WAIT_FOR_MATHJAX = """async () => {
  if (!document.querySelector('script[src*="mathjax"]')) return false;
  for (let i = 0; i < 200 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
    await new Promise(r => setTimeout(r, 50));
  await MathJax.startup.promise;
  return true;
}"""

WAIT_FOR_IMAGES = """async () => {
  const images = Array.from(document.images);
  images.forEach(img => { img.loading = 'eager'; });
  await Promise.all(images.map(img => img.complete ? null :
      new Promise(r => { img.addEventListener('load', r); img.addEventListener('error', r); })));
  return images.map(img => ({src: img.currentSrc || img.src, complete: img.complete,
                             width: img.naturalWidth}));
}"""

# the text a reader sees, less code, scripts and what MathJax has typeset
VISIBLE_PROSE = """() => {
  const skip = 'pre, code, script, style, noscript, textarea, template, mjx-container, .MathJax';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const parts = [];
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const parent = node.parentElement;
    if (!parent || parent.closest(skip)) continue;
    if (parent.closest('[hidden]') || getComputedStyle(parent).display === 'none') continue;
    parts.push(node.textContent);
  }
  return parts.join(' ');
}"""

MATH_STATE = """() => ({
  typeset: document.querySelectorAll('mjx-container').length,
  errors: Array.from(document.querySelectorAll('mjx-merror, g[data-mml-node="merror"]'))
      .map(e => e.textContent),
  untypeset: Array.from(document.querySelectorAll('.math'))
      .filter(e => !e.querySelector('mjx-container') && /\\\\[(\\[]/.test(e.textContent))
      .map(e => e.textContent.slice(0, 80)),
})"""

RAW_MATH = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\$[^$\s][^$]*?\$")


def visit(browser, site: str, built_book: pathlib.Path, page_path: str,
          screenshot: pathlib.Path | None = None) -> dict:
    """Open one page and gather everything the assertions look at."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    seen = {"external": [], "failed": [], "bad_status": [], "console": [], "page_errors": []}

    def route(route):
        url = route.request.url
        if url.startswith((site, "data:", "blob:", "about:")):
            route.continue_()
        else:  # never let a request leave the machine; record it instead
            seen["external"].append(url)
            route.abort()

    page.route("**/*", route)
    page.on("requestfailed", lambda r: seen["failed"].append(f"{r.url} ({r.failure})"))
    page.on("response", lambda r: r.status >= 400 and seen["bad_status"].append(f"{r.status} {r.url}"))
    page.on("console", lambda m: m.type == "error" and seen["console"].append(m.text))
    page.on("pageerror", lambda e: seen["page_errors"].append(str(e)))
    traffic = book_browser.Traffic(page)
    try:
        page.goto(site + page_path, wait_until="load")
        redirect = refresh_target(built_book / page_path)
        if redirect is not None:  # the root index only sends the reader on
            page.wait_for_url(urllib.parse.urljoin(site + page_path, redirect))
            page.wait_for_load_state("load")
        seen["mathjax"] = page.evaluate(WAIT_FOR_MATHJAX)
        book_browser.settle(page, traffic)
        seen["first_load"] = traffic.first_load_bytes()  # before every image is asked for
        seen["images"] = page.evaluate(WAIT_FOR_IMAGES)
        page.wait_for_load_state("networkidle")
        seen["math"] = page.evaluate(MATH_STATE)
        seen["prose"] = page.evaluate(VISIBLE_PROSE)
        seen["links"] = page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)")
        seen["url"] = page.url
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot))
            figure = page.locator(".cell_output img").first
            if figure.count():
                figure.scroll_into_view_if_needed()
                page.screenshot(path=str(screenshot.with_name(screenshot.stem + "-figure.png")))
    finally:
        context.close()
    return seen


# -- the tests -----------------------------------------------------------------------
def test_every_page_of_the_toc_was_written(built_book):
    written = {
        p.relative_to(built_book).as_posix()
        for p in built_book.rglob("*.html")
        if p.relative_to(built_book).parts[0] not in {"_static", "_sources", "mathjax", "_images"}
    }
    # (a page on disk that the toc no longer lists is a leftover of an earlier build)
    assert set(PAGES) <= written, sorted(set(PAGES) - written)


@pytest.mark.parametrize("page_path", PAGES)
def test_page_in_a_real_browser(browser, site, built_book, page_path):
    shot = SHOTS / "ch02.png" if page_path == f"{SCREENSHOT_CHAPTER}.html" else None
    seen = visit(browser, site, built_book, page_path, screenshot=shot)

    assert not seen["external"], f"{page_path} asked another site for {seen['external']}"
    assert not seen["failed"], f"{page_path}: failed requests {seen['failed']}"
    assert not seen["bad_status"], f"{page_path}: {seen['bad_status']}"
    assert not seen["console"], f"{page_path}: console errors {seen['console']}"
    assert not seen["page_errors"], f"{page_path}: uncaught errors {seen['page_errors']}"
    assert seen["first_load"] <= FIRST_LOAD_LIMIT, (
        f"{page_path}: first load {seen['first_load'] / MB:.2f} MB, over"
        f" {FIRST_LOAD_LIMIT / MB:.1f} MB (make bench lists what it loads)")

    # math: typeset wherever the source has a formula, and no MathJax loaded but by the
    # search page, whose snippets arrive as TeX
    landed = local_file(built_book, site, seen["url"])
    assert landed is not None, f"{page_path} ended on {seen['url']}, which is not in the book"
    expected = math_nodes_in_source(landed)
    assert seen["mathjax"] == (page_path == "search.html"), (page_path, seen["mathjax"])
    if expected:
        assert seen["math"]["typeset"] >= expected, (page_path, seen["math"], expected)
    assert not seen["math"]["errors"], f"{page_path}: MathJax errors {seen['math']['errors']}"
    assert not seen["math"]["untypeset"], f"{page_path}: raw TeX left {seen['math']['untypeset']}"
    raw = RAW_MATH.findall(seen["prose"])
    assert not raw, f"{page_path}: TeX delimiters left in the visible text: {raw[:5]}"

    # images: every one loaded and has pixels
    broken = [i["src"] for i in seen["images"] if not i["complete"] or i["width"] == 0]
    assert not broken, f"{page_path}: images that did not load {broken}"

    # links: each link inside the book leads to a page that exists, and to its anchor
    dead = []
    for href in seen["links"]:
        if not href.startswith(site):
            continue  # other sites are linked, never loaded
        target = local_file(built_book, site, href)
        fragment = urllib.parse.unquote(urllib.parse.urlsplit(href).fragment)
        missing_anchor = (target is not None and fragment and target.suffix == ".html"
                          and fragment not in anchors(target))
        if target is None or missing_anchor:
            dead.append(href)
    assert not dead, f"{page_path}: links to nowhere {dead}"


def test_screenshot_of_a_chapter_was_taken(browser, site, built_book):
    if not (built_book / f"{SCREENSHOT_CHAPTER}.html").exists():
        pytest.skip(f"{SCREENSHOT_CHAPTER} is not in the book")
    shot = SHOTS / "ch02.png"
    if not shot.exists():
        visit(browser, site, built_book, f"{SCREENSHOT_CHAPTER}.html", screenshot=shot)
    assert shot.stat().st_size > 10_000
