"""Every figure and formula of every page fits a phone's screen and a laptop's.

Each page of the built book is opened in Debian's chromium (one browser, one tab per
screen) at 390 x 844 (a phone) and 1280 x 800 (a laptop), at 1 and 2 device pixels per
CSS pixel. Every figure is brought into view (its player sets it up and shows a frame)
and must lie whole inside the window's width, no sideways scroll needed to see it; a live
figure's frame holds at least as many pixels as the screen shows it with (sharp on a 2x
screen). Every formula, display or inline, is whole: inside the window, or in a box that
scrolls sideways (a wide display equation, an inline formula wider than its line, a
table), that box inside the window and reached by the keyboard; none is cut off by a box
that does not scroll. The page itself never scrolls sideways, and its icon is served
(no request of the page fails). In dark mode a figure is a dark picture, not a bright
frame on the dark page.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from support.site_browser import SETTLED
from tools.book.toc import toc_files

PAGES = [f"{f}.html" for f in toc_files()]
SCREENS = {"390x844@1x": (390, 844, 1), "390x844@2x": (390, 844, 2),
           "1280x800@1x": (1280, 800, 1), "1280x800@2x": (1280, 800, 2)}
CHAPTER_6 = "book/ch06-soft-dictionary.html"

# every figure brought into view, its frame shown; then what lies outside the window or is
# cut off by a box that does not scroll
MEASURE = """async () => {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const width = document.documentElement.clientWidth;
  const out = [], layouts = [];
  const where = box => `${box.left.toFixed(0)}..${box.right.toFixed(0)} in ${width}`;
  const roots = Array.from(document.querySelectorAll('.memfig-live'));
  for (const root of roots) {
    const img = root.previousElementSibling && root.previousElementSibling.querySelector('.cell_output img');
    if (!img) { out.push(`live figure ${root.dataset.figure} without its picture`); continue; }
    img.scrollIntoView({block: 'center'});
    for (let i = 0; i < 100 && root.dataset.ready !== 'true'; i++) await sleep(50);
    if (root.dataset.ready !== 'true') { out.push(`live figure ${root.dataset.figure} never set up`); continue; }
    await img.decode().catch(() => null);
    const box = img.getBoundingClientRect();
    const data = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
    const shown = img.currentSrc.includes(`/_figures/${data.id}/narrow/`) ? 'narrow' : 'wide';
    layouts.push(shown);
    const size = shown === 'narrow' ? data.narrow : data;
    const declared = [img.getAttribute('width'), img.getAttribute('height')].map(Number);
    if (declared[0] !== size.width || declared[1] !== size.height)
      out.push(`figure ${root.dataset.figure}: its ${shown} frame declared ${declared.join(' x ')}, not ${size.width} x ${size.height}`);
    if (img.naturalWidth < box.width * devicePixelRatio - 1)
      out.push(`figure ${root.dataset.figure}: ${img.naturalWidth} px shown at ${box.width.toFixed(0)} x ${devicePixelRatio}`);
  }
  await sleep(400);  // scroll_regions.js and the theme mark what scrolls (200 and 300 ms)
  window.scrollTo(0, 0);
  for (const img of document.querySelectorAll('.bd-article img')) {
    const box = img.getBoundingClientRect();
    if (box.width === 0) continue;  // in a closed fold
    if (box.left < -0.5 || box.right > width + 0.5 || box.width < 50)
      out.push(`figure ${(img.closest('.cell') && img.closest('.cell').nextElementSibling
                          && img.closest('.cell').nextElementSibling.dataset.figure) || img.src.split('/').pop()}: ${where(box)}`);
  }
  const scrolls = node => ['auto', 'scroll'].includes(getComputedStyle(node).overflowX)
      && node.scrollWidth > node.clientWidth + 1;
  for (const math of document.querySelectorAll('.bd-article mjx-container')) {
    let box = math.getBoundingClientRect();
    if (box.width === 0) continue;  // in a closed fold
    const name = math.getAttribute('display') === 'true' ? 'display formula' : 'inline formula';
    const text = (math.querySelector('mjx-assistive-mml') || math).textContent.slice(0, 40);
    let cut = false;
    for (let node = math; node && node !== document.body; node = node.parentElement) {
      if (node !== math) {  // a box round the formula (or round its scrolling box) that clips
        if (getComputedStyle(node).overflowX === 'visible') continue;
        const frame = node.getBoundingClientRect();
        // (a formula as wide as its line may pass it by a fraction of a pixel: no glyph cut)
        if (box.left >= frame.left - 1.5 && box.right <= frame.right + 1.5) continue;
        if (!scrolls(node)) { out.push(`${name} cut off by a box that does not scroll: ${text}`); cut = true; break; }
        box = frame;
      } else if (!scrolls(node)) continue;
      if (node.tabIndex < 0) out.push(`${name} in a scrolling box the keyboard cannot reach: ${text}`);
      box = node.getBoundingClientRect();
    }
    if (!cut && (box.left < -1.5 || box.right > width + 1.5))
      out.push(`${name} runs off the window: ${where(box)}: ${text}`);
  }
  const page = document.documentElement.scrollWidth;
  if (page > width) out.push(`the page scrolls sideways: ${page} px in ${width}`);
  const icon = document.querySelector('link[rel~="icon"]');
  return {figures: roots.length, problems: out, icon: icon && icon.href, layouts};
}"""


@pytest.fixture(scope="module")
def tabs(browser):
    """One tab per screen, reused for every page; each records the requests that fail."""
    contexts, tabs = [], {}
    for name, (width, height, scale) in SCREENS.items():
        context = browser.new_context(viewport={"width": width, "height": height},
                                      device_scale_factor=scale)
        contexts.append(context)
        page = context.new_page()
        failed = []
        page.on("response", lambda r, failed=failed: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
        page.on("requestfailed", lambda r, failed=failed: failed.append(f"{r.failure} {r.url}"))
        tabs[name] = (page, failed)
    yield tabs
    for context in contexts:
        context.close()


@pytest.mark.parametrize("page_path", PAGES)
@pytest.mark.parametrize("screen", SCREENS)
def test_every_figure_and_formula_fits_the_screen(site, tabs, screen, page_path):
    page, failed = tabs[screen]
    failed.clear()
    page.goto(site + page_path, wait_until="load")
    page.evaluate(SETTLED)
    found = page.evaluate(MEASURE)
    assert not found["problems"], f"{page_path} at {screen}:\n  " + "\n  ".join(found["problems"][:12])
    # the tab's icon: named by the page, served (no /favicon.ico asked for and missing)
    assert found["icon"] and found["icon"].endswith("_static/favicon.svg"), found["icon"]
    icon = page.request.get(found["icon"])
    assert icon.status == 200 and "svg" in icon.headers["content-type"], icon.status
    assert b"<svg" in icon.body()
    # a frame the player dropped as it moved on (net::ERR_ABORTED) is no failure
    failed = [f for f in failed if not ("ERR_ABORTED" in f and "/_figures/" in f)]
    assert not failed, f"{page_path} at {screen}: {failed}"
    # a phone shows every figure's narrow frames (type of 11 CSS px or more), a laptop the wide
    assert set(found["layouts"]) <= ({"narrow"} if screen.startswith("390x") else {"wide"}), (
        page_path, screen, found["layouts"])
    if page_path == CHAPTER_6:
        assert found["figures"] == 4


FIGURE = '.memfig-live[data-figure="soft-dictionary"]'
SHOWN = """img => [img.currentSrc.split('/_figures/')[1], Number(img.getAttribute('width')),
                   Number(img.getAttribute('height')),
                   img.getBoundingClientRect().right, document.documentElement.clientWidth]"""


def test_a_figure_turns_with_the_phone(site, browser):
    """A phone turned from landscape (a wide column) to portrait: Chapter 6's figure moves
    from its wide frames to its narrow ones, at the narrow size, inside the window, and a
    control moved then keeps to the narrow frames."""
    context = browser.new_context(viewport={"width": 844, "height": 390}, device_scale_factor=2)
    try:
        page = context.new_page()
        page.goto(site + CHAPTER_6, wait_until="load")
        page.evaluate(SETTLED)
        cell = page.locator(FIGURE + " >> xpath=preceding-sibling::*[1]")
        cell.scroll_into_view_if_needed()
        page.wait_for_selector(FIGURE + '[data-ready="true"]', state="attached")
        picture = cell.locator(".memfig-picture")
        picture.evaluate("img => img.decode()")
        wide = picture.evaluate(SHOWN)
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_function("img => img.currentSrc.includes('/narrow/')",
                               arg=picture.element_handle())
        picture.evaluate("img => img.decode()")
        narrow = picture.evaluate(SHOWN)
        cell.locator("input[type=range]").focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("img => img.currentSrc.endsWith('/narrow/11.webp')",
                               arg=picture.element_handle())
    finally:
        context.close()
    assert wide[0] == "soft-dictionary/10.webp" and wide[1:3] == [608, 264], wide
    assert narrow[0] == "soft-dictionary/narrow/10.webp" and narrow[1] == 352, narrow
    assert narrow[3] <= narrow[4], f"the narrow frame runs off the window: {narrow}"
BACKGROUND = """() => getComputedStyle(document.body).backgroundColor.match(/\\d+/g).slice(0, 3).map(Number)"""


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_a_figure_follows_the_page_in_dark_mode(site, browser, mode):
    """Chapter 6's soft-dictionary picture on a 2x phone: the page's own background round
    dark lines and labels in dark mode (no bright frame), as drawn in light mode."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2,
                                  color_scheme=mode)
    context.add_init_script(f"localStorage.setItem('mode', '{mode}');"
                            f"localStorage.setItem('theme', '{mode}');")
    try:
        page = context.new_page()
        page.goto(site + CHAPTER_6, wait_until="load")
        page.evaluate(SETTLED)
        assert page.evaluate("document.documentElement.dataset.theme") == mode
        cell = page.locator(FIGURE + " >> xpath=preceding-sibling::*[1]")
        cell.scroll_into_view_if_needed()
        page.wait_for_selector(FIGURE + '[data-ready="true"]', state="attached")
        picture = cell.locator(".memfig-picture")
        picture.evaluate("img => img.decode()")
        shot = np.asarray(Image.open(io.BytesIO(picture.screenshot())).convert("L"), dtype=float)
        background = np.mean(page.evaluate(BACKGROUND))
    finally:
        context.close()
    corners = np.array([shot[2, 2], shot[2, -3], shot[-3, 2], shot[-3, -3]])
    # the picture's ground is the page's (within a few levels), whatever the mode
    assert np.abs(corners - background).max() <= 24, (mode, corners, background)
    if mode == "dark":
        assert shot.mean() < 80, f"a bright picture on the dark page: mean {shot.mean():.0f}"
        assert np.percentile(shot, 99.5) > 150, "no light lines or labels on the dark picture"
    else:
        assert shot.mean() > 200 and np.percentile(shot, 0.5) < 100


SEARCH_BOXES = """() => [...document.querySelectorAll('form.bd-search')].map(form => {
  const input = form.querySelector('input[name="q"]'), icon = form.querySelector('i, svg');
  const box = input.getBoundingClientRect();
  if (!box.width || !icon) return null;  // the dialog's box, closed
  return [box.left + parseFloat(getComputedStyle(input).paddingLeft), icon.getBoundingClientRect().right];
}).filter(Boolean)"""


@pytest.mark.parametrize("screen", ["390x844@1x", "1280x800@1x"])
def test_the_search_icon_leaves_the_query_in_view(site, tabs, screen):
    """The search page's box: the query's first letter starts right of the magnifying glass."""
    page, _ = tabs[screen]
    page.goto(site + "search.html?q=softmax", wait_until="load")
    boxes = page.evaluate(SEARCH_BOXES)
    assert boxes, "no search box shown"
    for text_starts, icon_ends in boxes:
        assert text_starts >= icon_ends + 4, (text_starts, icon_ends)


GLOSSARY_LINK = 'a[href*="appendix-e-glossary.html#term-Key"]'


@pytest.mark.parametrize("screen", ["390x844@1x", "1280x800@1x"])
def test_a_glossary_link_shows_its_definition(site, tabs, screen):
    """Chapter 3's link to "key": resting the pointer on it, or reaching it with the keyboard,
    shows the glossary's entry (its three terms, its definition typeset) inside the window;
    Escape closes it."""
    page, _ = tabs[screen]
    page.goto(site + "book/ch03-outer-product-memory.html", wait_until="load")
    page.evaluate(SETTLED)
    link, card = page.locator(GLOSSARY_LINK).first, page.locator("#memglossary-card")
    link.scroll_into_view_if_needed()
    link.hover()
    card.wait_for(state="visible", timeout=10_000)
    text = card.inner_text()
    assert text.startswith("Key, Value, Query") and "what an entry is found by" in text, text
    assert card.locator("mjx-container").count() > 0, "the definition's maths is not typeset"
    # every character its formulas draw has its outline in this page (typeset_maths.py)
    assert page.evaluate("""() => Array.from(document.querySelectorAll('#memglossary-card use'))
        .map(u => (u.getAttribute('xlink:href') || u.getAttribute('href')).slice(1))
        .filter(id => !(document.getElementById(id) instanceof SVGPathElement))""") == []
    box, width = card.bounding_box(), page.evaluate("document.documentElement.clientWidth")
    assert 0 <= box["x"] and box["x"] + box["width"] <= width, (box, width)
    assert link.get_attribute("aria-describedby") == "memglossary-card"
    page.keyboard.press("Escape")
    card.wait_for(state="hidden", timeout=5_000)
    assert link.get_attribute("aria-describedby") is None
    # from the keyboard
    page.mouse.move(0, 0)
    link.focus()
    card.wait_for(state="visible", timeout=10_000)
    page.keyboard.press("Escape")


def test_search_snippets_show_formulas_typeset(site, tabs):
    """A search's snippets (Sphinx writes them from the pages' text, LaTeX and all): every
    formula in them typeset, none left as \\( ... \\) source, a formula cut by the snippet's
    ends dropped."""
    page, _ = tabs["390x844@1x"]
    page.goto(site + "search.html?q=query+key+value", wait_until="load")
    page.wait_for_function("document.querySelectorAll('#search-results p.context').length >= 10", timeout=30_000)
    page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30_000)
    page.evaluate(SETTLED)
    page.wait_for_timeout(1000)  # the last snippets' typesetting
    texts = page.locator("#search-results p.context").all_inner_texts()
    assert not [t for t in texts if "\\(" in t or "\\)" in t], texts
    assert page.locator("#search-results p.context mjx-container").count() >= 5
    assert page.locator("#search-results p.context .highlighted").count() >= 5  # the words searched
