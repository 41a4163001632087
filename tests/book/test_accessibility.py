"""Every page of the built book meets WCAG 2.1 A and AA, as axe-core audits it, light and dark.

axe-core, pinned in tests/axe/package.json and its lockfile, is installed from the npm
registry with `npm ci` into _build/axe and injected by Playwright into Debian's chromium
(tests/support/site_browser.py). Every page of the site is opened in light mode and in dark mode
(the theme's setting, as its colour-mode button stores it), one browser for all; on a page
with live figures each figure is brought into view and each of its controls used once
before the audit, so that the prompt, the controls and the reading are audited as a reader
meets them. A page fails on any violation of the rules tagged wcag2a, wcag2aa, wcag21a and
wcag21aa; no rule is switched off.

Then a phone (390 px wide): Chapter 6 and Chapter 12 do not run off the screen (a display
equation scrolls inside its own box, a figure's picture shrinks to the column), and
Chapter 6 is photographed in dark mode and at 390 px into _build/screenshots/.
"""

from __future__ import annotations

import json
import shutil

import pytest

from test_browser import PAGES, ROOT, SHOTS, refresh_target
from tools import npm
from support import site_browser as book_browser

AXE = ROOT / "tests" / "axe"
INSTALLED = ROOT / "_build" / "axe"
RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
MODES = ["light", "dark"]
PHONE = {"width": 390, "height": 844}
CHAPTER_6 = "book/ch06-soft-dictionary.html"
CHAPTER_12 = "book/ch12-unified-view.html"

# use every control of every live figure once, as a reader would: a slider one step, the
# first button not pressed, the next option of a picker, a toggle
USE_FIGURES = """async () => {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const roots = Array.from(document.querySelectorAll('.memfig-live'));
  for (const root of roots) {
    (root.previousElementSibling || root).scrollIntoView({block: 'center'});
    for (let i = 0; i < 100 && root.dataset.ready !== 'true'; i++) await sleep(50);
    const cell = root.previousElementSibling;
    for (const row of cell.querySelectorAll('.memfig-control')) {
      const slider = row.querySelector('input[type=range]');
      const select = row.querySelector('select');
      const box = row.querySelector('input[type=checkbox]');
      const button = row.querySelector('button[aria-pressed="false"]');
      if (slider) {
        slider.value = String(Number(slider.value) + (Number(slider.value) < Number(slider.max) ? 1 : -1));
        slider.dispatchEvent(new Event('input', {bubbles: true}));
      } else if (select) {
        select.selectedIndex = (select.selectedIndex + 1) % select.options.length;
        select.dispatchEvent(new Event('change', {bubbles: true}));
      } else if (box) box.click();
      else if (button) button.click();
    }
    const img = cell.querySelector('.memfig-picture');
    if (img) await img.decode().catch(() => null);
  }
  return roots.length;
}"""

AUDIT = """async (rules) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: rules}});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ': ' + n.failureSummary.split('\\n').slice(1, 2).join(''))
  }));
}"""


@pytest.fixture(scope="module")
def axe_script() -> str:
    """axe-core's script, installed as the lockfile pins it (once; again when it changes)."""
    lock = (AXE / "package-lock.json").read_text()
    script = INSTALLED / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists() or (INSTALLED / "package-lock.json").read_text() != lock:
        shutil.rmtree(INSTALLED, ignore_errors=True)
        INSTALLED.mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(AXE / name, INSTALLED / name)
        done = npm(["ci", "--ignore-scripts", "--no-audit", "--no-fund"], INSTALLED)
        assert done.returncode == 0 and script.exists(), done.stdout + done.stderr
    pinned = json.loads(lock)["packages"]["node_modules/axe-core"]["version"]
    installed = json.loads((INSTALLED / "node_modules/axe-core/package.json").read_text())
    assert installed["version"] == pinned
    return script.read_text()


def mode_context(browser, mode: str, viewport: dict):
    """A context whose pages open in the theme's ``mode`` (as its colour-mode button sets it)."""
    context = browser.new_context(viewport=viewport, color_scheme=mode)
    context.add_init_script(f"localStorage.setItem('mode', '{mode}');"
                            f"localStorage.setItem('theme', '{mode}');")
    return context


@pytest.fixture(scope="module")
def tabs(browser):
    """One page per colour mode, reused for every page of the book."""
    contexts = {mode: mode_context(browser, mode, {"width": 1280, "height": 900})
                for mode in MODES}
    pages = {mode: context.new_page() for mode, context in contexts.items()}
    yield {mode: (page, book_browser.Traffic(page)) for mode, page in pages.items()}
    for context in contexts.values():
        context.close()


AUDITED = [p for p in PAGES if p != "index.html"]  # index.html only redirects to book/index


def test_the_redirecting_index_is_the_landing_page(built_book):
    assert refresh_target(built_book / "index.html") == "book/index.html"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("page_path", AUDITED)
def test_page_meets_wcag_21_aa(site, tabs, axe_script, page_path, mode):
    page, traffic = tabs[mode]
    page.goto(site + page_path, wait_until="load")
    book_browser.settle(page, traffic)
    assert page.evaluate("document.documentElement.dataset.theme") == mode
    # one search field on the page (the theme drew a second one in a header bar)
    assert page.locator(".search-button-field:visible").count() == 1, page_path
    page.evaluate(USE_FIGURES)
    page.evaluate(axe_script)
    violations = page.evaluate(AUDIT, RULES)
    assert not violations, f"{page_path} ({mode}):\n" + "\n".join(
        f"  {v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"])
        for v in violations)


OVERFLOW = """() => ({
  page: document.documentElement.scrollWidth,
  window: window.innerWidth,
  wide: Array.from(document.querySelectorAll('mjx-container[display="true"], .memfig-scroll'))
    .filter(e => e.scrollWidth > e.clientWidth + 1)
    .map(e => ({box: e.getBoundingClientRect().right, focusable: e.tabIndex === 0})),
})"""


@pytest.mark.parametrize("page_path", [CHAPTER_6, CHAPTER_12])
def test_a_phone_scrolls_equations_and_figures_in_their_own_box(site, browser, page_path):
    context = mode_context(browser, "light", PHONE)
    try:
        page = context.new_page()
        traffic = book_browser.Traffic(page)
        page.goto(site + page_path, wait_until="load")
        book_browser.settle(page, traffic)
        page.evaluate(USE_FIGURES)
        page.wait_for_timeout(400)  # scroll_regions.js marks what scrolls, after a pause
        seen = page.evaluate(OVERFLOW)
        assert seen["page"] <= seen["window"], f"{page_path} runs off a phone's screen: {seen}"
        assert all(w["box"] <= seen["window"] for w in seen["wide"]), seen
        assert all(w["focusable"] for w in seen["wide"]), f"a scrolling box without a tab stop: {seen}"
        if page_path == CHAPTER_12:
            assert seen["wide"], "Chapter 12's wide equation should scroll in its box at 390 px"
    finally:
        context.close()


FIGURE_AT_PHONE = """() => {
  const img = document.querySelector('.memfig-live[data-figure="soft-dictionary"]')
      .previousElementSibling.querySelector('.memfig-picture');
  const label = img.closest('.cell_output').querySelector('.memfig-label');
  return {shown: img.getBoundingClientRect().width, natural: img.naturalWidth,
          label: label.getBoundingClientRect().height,
          line: parseFloat(getComputedStyle(label).lineHeight)};
}"""


def test_chapter_6_dark_and_on_a_phone_photographed(site, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    figure = '.memfig-live[data-figure="soft-dictionary"]'
    for name, mode, viewport in [("ch06-dark.png", "dark", {"width": 1280, "height": 900}),
                                 ("ch06-390px.png", "light", PHONE)]:
        context = mode_context(browser, mode, viewport)
        try:
            page = context.new_page()
            traffic = book_browser.Traffic(page)
            page.goto(site + CHAPTER_6, wait_until="load")
            book_browser.settle(page, traffic)
            page.locator(figure + " >> xpath=preceding-sibling::*[1]").scroll_into_view_if_needed()
            page.wait_for_selector(figure + '[data-ready="true"]', state="attached")
            page.locator(figure + " >> xpath=preceding-sibling::*[1]").evaluate(
                "cell => cell.scrollIntoView({block: 'start'})")
            page.evaluate("img => img && img.decode()", page.locator(
                figure + " >> xpath=preceding-sibling::*[1] >> .memfig-picture").element_handle())
            if mode == "light":  # on the phone: the whole picture, sharp; the label on one line
                seen = page.evaluate(FIGURE_AT_PHONE)
                assert seen["shown"] < PHONE["width"] and seen["natural"] >= 2 * seen["shown"], seen
                assert seen["label"] < 1.5 * seen["line"], f"the slider's label breaks: {seen}"
            page.screenshot(path=str(SHOTS / name))
        finally:
            context.close()
        assert (SHOTS / name).stat().st_size > 20_000
