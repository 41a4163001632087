"""The figures of the HTML book are live with no kernel: every state pre-rendered, played
by the book's own script, with the same pixels and readings as the Python figure.

The unit tests read the control declarations; the others read the built site
(tests/conftest.py builds it once) and open its pages in headless Chromium from
file:// with the network switched off, as a reader offline would.
"""

from __future__ import annotations

import html as html_module
import io
import json
import pathlib
import re

import ipywidgets as widgets
import numpy as np
import pytest
from PIL import Image

from memkit import figures, style
from memkit.figures import frames
from tools.common import chromium
from tools.book.toc import toc_files

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIGURE_CALL = re.compile(r'figures\.get\(\s*"([a-z0-9-]+)"\s*\)')
MB = 1024 * 1024
# frames drawn for 2x screens (frames.FRAME_SCALE) weigh about 2.3 times those of 1x, and
# each state has two, the wide and the narrow (a phone's column): Chapter 5's two figures
# (score-sharpness: 255 states) the most, 16.2 MB (wide 6.3, narrow 7.2); the site 38.3 MB
BUDGET_TOTAL, BUDGET_CHAPTER = 40 * MB, 17 * MB
# A frame and the Python figure's frame of the same state can differ by a few levels: a
# narrow (constrained) layout drawn in another process may move an antialiased pixel or
# ten by one level, and the 256-colour palette, chosen for the whole picture, then gives
# thousands of pixels a neighbouring colour (measured: at most 24 levels). A neighbouring
# state's frame is off by more than 48 levels on at least 76 pixels in every figure of the
# book (the first, middle and last state of each, in both layouts).
FAR = 48


def shown() -> dict[str, list[str]]:
    """Page (toc file) -> the figures it shows in their default state."""
    pages = {}
    for name in toc_files():
        ids = FIGURE_CALL.findall((ROOT / f"{name}.md").read_text())
        if ids:
            pages[name] = list(dict.fromkeys(ids))
    return pages


def decoded(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGBA"))


# -- the control space, from the declaration ----------------------------------------------
def test_control_values_follow_each_kind_of_control():
    assert frames.control_values(widgets.IntSlider(value=3, min=1, max=9, step=2)) == [1, 3, 5, 7, 9]
    assert frames.control_values(widgets.FloatSlider(value=0, min=-0.2, max=0.2, step=0.1)) == [
        -0.2, -0.1, 0.0, 0.1, 0.2]
    assert frames.control_values(widgets.ToggleButtons(options=["a", "b"])) == ["a", "b"]
    assert frames.control_values(widgets.Checkbox()) == [False, True]
    with pytest.raises(TypeError, match="no finite set of values"):
        frames.control_values(widgets.Text())


@pytest.mark.parametrize("figure_id", figures.ids())
def test_every_figure_declares_a_finite_control_space_with_its_default(figure_id):
    fig = figures.get(figure_id)
    spec = frames.describe(fig)
    keys = [key for key, _ in frames.states(fig)]
    assert len(keys) == np.prod([len(c["values"]) for c in spec["controls"]]) == len(set(keys))
    for control, (name, widget) in zip(spec["controls"], fig.controls.items()):
        assert control["name"] == name and control["label"] == (widget.description or name)
        assert frames.control_values(widget)[control["default"]] == widget.value


def test_frames_is_not_a_figure():
    assert "frames" not in figures.ids() and "base" not in figures.ids()


@pytest.mark.parametrize("figure_id", figures.ids())
def test_every_figure_says_what_it_shows_what_to_drag_and_its_units(figure_id):
    fig = figures.get(figure_id)
    spec = frames.describe(fig)
    # one sentence of what is drawn (the alt text), not the reading of a state
    alt = spec["alt"]
    assert alt == fig.alt_text and alt[:1].isupper() and alt.endswith(".") and 40 < len(alt) < 320
    assert alt.count(". ") == 0, f"{figure_id}: the alt text is one sentence"
    assert fig.caption not in alt
    # one line of what to drag (a control's verb) and what to watch
    prompt = spec["prompt"]
    assert prompt == fig.prompt and "\n" not in prompt and len(prompt) < 200
    assert prompt.split()[0] in {"Drag", "Pick", "Turn", "Switch"} and ":" in prompt, prompt
    # a unit only for a slider of the figure
    sliders = {c["name"] for c in spec["controls"] if c["kind"] == "slider"}
    assert set(fig.units) <= sliders, fig.units
    assert [c["unit"] for c in spec["controls"]] == [fig.units.get(c["name"], "")
                                                     for c in spec["controls"]]


# -- the built site ---------------------------------------------------------------------
def site_spec(built: pathlib.Path, figure_id: str) -> dict:
    return json.loads((built / "_figures" / figure_id / "spec.json").read_text())


def test_every_reachable_state_has_its_frame_within_budget(built_book):
    total, per_page = 0, {}
    for page, ids in shown().items():
        for figure_id in ids:
            folder = built_book / "_figures" / figure_id
            keys = [key for key, _ in frames.states(figures.get(figure_id))]
            spec = site_spec(built_book, figure_id)
            assert sorted(spec["frames"]) == sorted(keys), figure_id
            for layout in (folder, folder / "narrow"):  # the wide frames, the phone's
                missing = [k for k in keys if not (layout / (k.replace(",", "-") + ".webp")).exists()]
                assert not missing, f"{figure_id} {layout.name}: no frame for states {missing[:5]}"
            size = sum(p.stat().st_size for p in folder.rglob("*.webp"))
            per_page[page] = per_page.get(page, 0) + size
            total += size
    assert total <= BUDGET_TOTAL, f"{total / MB:.1f} MB of frames"
    assert max(per_page.values()) <= BUDGET_CHAPTER, {p: f"{s / MB:.1f} MB" for p, s in per_page.items()}


@pytest.mark.parametrize("layout", ["wide", "narrow"])
@pytest.mark.parametrize("figure_id", sorted({i for ids in shown().values() for i in ids}))
def test_frames_have_the_pixels_and_readings_of_the_python_figure(built_book, figure_id, layout):
    spec = site_spec(built_book, figure_id)
    folder = built_book / "_figures" / figure_id / ("narrow" if layout == "narrow" else "")
    states = frames.states(figures.get(figure_id))
    for key, state in [states[0], states[len(states) // 2], states[-1]]:
        fig = figures.get(figure_id, layout=layout, **state)
        frame = (folder / (key.replace(",", "-") + ".webp")).read_bytes()
        picture = fig.png(with_reading=False, scale=frames.FRAME_SCALE)
        # the Python figure's frame of that state: no pixel off by more than FAR
        off = np.abs(decoded(frame).astype(int) - decoded(frames.encode(picture)).astype(int))
        far = int((off[..., :3].max(-1) > FAR).sum())
        assert far == 0, (figure_id, state, f"{far} pixels off by more than {FAR}")
        # and the palette keeps the picture: small differences, on antialiased edges only
        error = np.abs(decoded(frame).astype(int) - decoded(picture).astype(int))[..., :3]
        assert error.mean() < 2.0 and np.percentile(error, 99.5) <= 16, (figure_id, error.mean())
        assert spec["frames"][key] == fig.caption
        # shown at the layout's size: the wide in the spec, the narrow in its entry
        shown_at = spec["narrow"] if layout == "narrow" else spec
        assert (shown_at["width"], shown_at["height"]) == tuple(
            round(side * style.DPI) for side in fig.size)
        assert decoded(frame).shape[:2] == tuple(
            round(side * style.DPI * frames.FRAME_SCALE) for side in reversed(fig.size))


def test_page_without_javascript_keeps_the_default_picture_and_its_reading(built_book):
    for page, ids in shown().items():
        html = (built_book / f"{page}.html").read_text()
        pictures = re.findall(r'<img alt="([^"]*)" loading="lazy" src="([^"]*)"', html)
        for figure_id in ids:
            spec = site_spec(built_book, figure_id)
            default = ",".join(str(c["default"]) for c in spec["controls"])
            alts = {html_module.unescape(alt) for alt, _ in pictures}
            # what the picture shows, then the reading drawn under it; loaded when near
            assert f"{spec['alt']} Shown: {spec['frames'][default]}" in alts, (page, figure_id)
            # a narrow window picks the narrow frame of the default state
            narrow = (f'<picture><source media="{spec["narrow"]["media"]}"'
                      f' srcset="{"../" * page.count("/")}_figures/'
                      f'{figure_id}/narrow/{default.replace(",", "-")}.webp"')
            assert narrow in html, (page, figure_id)
            assert f'data-figure="{figure_id}"' in html, (page, figure_id)
        # the cell figures.get("...") runs in the notebook; the page does not show it
        text = html_module.unescape(re.sub(r"<[^>]+>", "", html))
        assert "figures.get(" not in text, page


# -- in the browser, offline -------------------------------------------------------------
@pytest.fixture(scope="module")
def offline_page(built_book):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = chromium.launch_browser(playwright)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
        page = context.new_page()
        problems = []
        page.on("console", lambda m: m.type == "error" and problems.append(m.text))
        page.on("pageerror", lambda e: problems.append(str(e)))
        # a frame the browser dropped because the picture moved on to the next one
        # (net::ERR_ABORTED) is not a failure: each frame shown is checked to load below
        page.on("requestfailed", lambda r: None if (
            "/_figures/" in r.url and "ERR_ABORTED" in (r.failure or "")
        ) else problems.append(f"{r.url} ({r.failure})"))
        yield page, problems
        browser.close()


def state_of(page, figure_id: str) -> tuple[str, str, str]:
    live = page.locator(f'.memfig-live[data-figure="{figure_id}"]')
    cell = page.locator(f'.memfig-live[data-figure="{figure_id}"] >> xpath=preceding-sibling::*[1]')
    src = cell.locator(".memfig-picture").get_attribute("src")
    reading = cell.locator(".memfig-reading").text_content()
    return live.get_attribute("data-state"), src, reading


@pytest.mark.parametrize("page_name", sorted(shown()))
def test_every_control_of_every_figure_plays_offline(built_book, offline_page, page_name):
    page, problems = offline_page
    problems.clear()
    page.goto((built_book / f"{page_name}.html").as_uri())
    for figure_id in shown()[page_name]:
        spec = site_spec(built_book, figure_id)
        live = page.locator(f'.memfig-live[data-figure="{figure_id}"]')
        cell = page.locator(f'.memfig-live[data-figure="{figure_id}"] >> xpath=preceding-sibling::*[1]')
        cell.scroll_into_view_if_needed()
        page.wait_for_selector(f'.memfig-live[data-figure="{figure_id}"][data-ready="true"]',
                               state="attached")
        controls = cell.locator(".memfig-control")
        assert controls.count() == len(spec["controls"]), figure_id
        # for a screen reader: the picture says what it shows, the reading is a live region
        picture, reading = cell.locator(".memfig-picture"), cell.locator(".memfig-reading")
        assert picture.get_attribute("alt") == spec["alt"]
        assert reading.get_attribute("aria-live") == "polite"
        assert cell.locator(".memfig-prompt").text_content() == spec["prompt"]
        for i, control in enumerate(spec["controls"]):
            before = state_of(page, figure_id)
            row = controls.nth(i)
            assert row.locator(".memfig-label").text_content() == control["label"]
            if control["kind"] == "slider":
                slider = row.locator("input[type=range]")
                slider.focus()
                at_end = int(slider.input_value()) == len(control["values"]) - 1
                page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
                # its name, value and unit ("query t: 55 degrees")
                value = control["values"][int(slider.input_value())]
                spoken = f"{control['label'].rstrip('°')}: {value} {control['unit']}".strip()
                assert slider.get_attribute("aria-valuetext") == spoken
            else:  # buttons: Tab to the next one and press it, as a keyboard user would
                pressed = row.locator('[aria-pressed="true"]')
                pressed.focus()
                page.keyboard.press("Shift+Tab" if pressed.evaluate(
                    "b => !b.nextElementSibling") else "Tab")
                page.keyboard.press("Enter")
            page.wait_for_function(
                "([id, key]) => document.querySelector(`.memfig-live[data-figure='${id}']`)"
                ".dataset.state !== key", arg=[figure_id, before[0]])
            key, src, reading = state_of(page, figure_id)
            assert src != before[1] and reading != before[2], (figure_id, control["name"])
            assert reading == spec["frames"][key]
            assert src.endswith(f"{figure_id}/{key.replace(',', '-')}.webp")
            loaded = cell.locator(".memfig-picture").evaluate(
                "img => img.decode().then(() => img.naturalWidth)")
            assert loaded > 0, (figure_id, src)
            assert live.count() == 1
    assert not problems, problems
