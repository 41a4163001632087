"""Every figure and formula of every page fits a phone's screen and a laptop's.

Each page of the built book is opened in Debian's chromium at 390 x 844 (a phone) and
1280 x 800 (a laptop), at 1 and 2 device pixels per CSS pixel. Every figure is brought
into view (its player sets it up and shows a frame) and must lie inside the window's
width, whole; every formula must be whole: inside the window, or in a box that scrolls
sideways (a wide display equation, a table, an inline formula set on its own line) and
that the keyboard reaches. On a 2x screen a figure's frame holds twice the pixels it is
shown at (sharp).
"""

from __future__ import annotations

import pytest

from tools.book.browser import SETTLED
from tools.book.toc import toc_files

PAGES = [f"{f}.html" for f in toc_files()]
SCREENS = [(390, 844, 1), (390, 844, 2), (1280, 800, 1), (1280, 800, 2)]

# every figure brought into view, its frame loaded; then what lies outside the window
MEASURE = """async () => {
  const width = document.documentElement.clientWidth;
  const out = [];
  const roots = Array.from(document.querySelectorAll('.memfig-live'));
  for (const root of roots) {
    const cell = root.previousElementSibling;
    const img = cell && cell.querySelector('.cell_output img');
    if (!img) { out.push('a live figure without its picture'); continue; }
    img.scrollIntoView({block: 'center'});
    for (let i = 0; i < 100 && root.dataset.ready !== 'true'; i++)
      await new Promise(r => setTimeout(r, 50));
    await img.decode().catch(() => null);
    const box = img.getBoundingClientRect();
    if (box.left < -0.5 || box.right > width + 0.5 || box.width < 50)
      out.push(`figure ${img.alt.slice(0, 40)}: ${box.left.toFixed(0)}..${box.right.toFixed(0)} in ${width}`);
    if (root.dataset.ready === 'true' && img.naturalWidth < box.width * devicePixelRatio - 1)
      out.push(`figure ${img.alt.slice(0, 40)}: ${img.naturalWidth} px shown at ${box.width.toFixed(0)} x ${devicePixelRatio}`);
  }
  await new Promise(r => setTimeout(r, 400));  // the scroll regions marked (200 ms)
  window.scrollTo(0, 0);
  for (const math of document.querySelectorAll('mjx-container')) {
    const box = math.getBoundingClientRect();
    if (box.width === 0) continue;  // in a closed fold
    let scroller = null;
    for (let node = math; node && node !== document.body; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (['auto', 'scroll'].includes(style.overflowX) && node.scrollWidth > node.clientWidth + 1) {
        scroller = node; break;
      }
    }
    if (scroller) {
      const frame = scroller.getBoundingClientRect();
      if (frame.left < -0.5 || frame.right > width + 0.5)
        out.push(`a scrolling box of maths runs off the window: ${frame.left.toFixed(0)}..${frame.right.toFixed(0)}`);
      if (!scroller.closest('.cell_output, pre') && scroller.tabIndex < 0 && scroller.tagName !== 'PRE')
        out.push(`a scrolling box of maths the keyboard cannot reach: ${math.textContent.slice(0, 40)}`);
    } else if (box.left < -0.5 || box.right > width + 0.5) {
      out.push(`formula cut at the edge: ${box.left.toFixed(0)}..${box.right.toFixed(0)} in ${width}: ${math.textContent.slice(0, 40)}`);
    }
  }
  return {figures: roots.length, problems: out};
}"""


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}@{s[2]}x")
def test_every_figure_and_formula_fits_the_screen(site, browser, screen):
    width, height, scale = screen
    context = browser.new_context(viewport={"width": width, "height": height},
                                  device_scale_factor=scale)
    page = context.new_page()
    problems, figures = {}, 0
    try:
        for name in PAGES:
            page.goto(site + name, wait_until="load")
            page.evaluate(SETTLED)
            found = page.evaluate(MEASURE)
            figures += found["figures"]
            if found["problems"]:
                problems[name] = found["problems"][:6]
    finally:
        context.close()
    assert figures > 20, f"only {figures} live figures found"
    assert not problems, problems
