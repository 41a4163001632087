"""The formulas of the HTML book typeset at build time (tools/book/typeset_maths.py).

Every page of the built book holds its formulas as SVG, with the MathML a screen reader
reads, the outline of every character they draw, and no MathJax script (the search page
alone loads MathJax, for its snippets). The typesetter keeps what Node typeset: a second
run over the same formulas asks Node for nothing, a new formula for itself only. These
tests read the built book (the build also vendors MathJax's entry for Node).
"""

from __future__ import annotations

import html
import re

from tools.book import typeset_maths
from tools.book.toc import toc_files
from tools.book.typeset_maths import GLYPHS_ID, Typesetter, errors_in, formulas_of, svg_config

CONFIG = svg_config({"loader": {"load": ["input/tex", "output/chtml", "a11y/assistive-mml"]},
                     "tex": {"macros": {"R": "\\mathbb{R}"}}})
WRAPPED = re.compile(r'<(span|div) class="math notranslate nohighlight"([^>]*)>(.*?)</\1>', re.S)
CONTAINER = re.compile(r"<mjx-container\b.*?</mjx-container>", re.S)


def pages(built_book):
    return {name: (built_book / f"{name}.html").read_text() for name in toc_files()}


def test_pages_hold_svg_maths_and_no_mathjax(built_book):
    with_maths = 0
    for name, page in pages(built_book).items():
        assert "mathjax/startup.js" not in page and "window.MathJax" not in page, name
        assert formulas_of(page) == [], f"{name}: TeX left for a browser to typeset"
        wrapped = WRAPPED.findall(page)
        for tag, attributes, inside in wrapped:
            # the TeX kept, with its delimiters, for the search page's snippets
            tex = re.search(r'data-tex="([^"]*)"', attributes).group(1)
            assert html.unescape(tex)[:2] == ("\\[" if tag == "div" else "\\("), tex
            assert '<mjx-container class="MathJax" jax="SVG"' in inside, (name, inside[:200])
            assert "<svg" in inside and "\\(" not in inside and "\\[" not in inside
        if wrapped:
            with_maths += 1
            # every character drawn has its outline once in the page's hidden cache
            used = set(re.findall(r'xlink:href="#(MJX-TEX-[^"]+)"', page))
            cache = re.search(rf'<svg id="{GLYPHS_ID}"[^>]*><defs>(.*?)</defs></svg>', page).group(1)
            held = re.findall(r'<path id="([^"]+)"', cache)
            assert used == set(held) and len(held) == len(set(held)), name
    assert with_maths >= 20
    search = (built_book / "search.html").read_text()
    assert "mathjax/startup.js" in search and "window.MathJax" in search


def test_a_formula_carries_its_accessible_text(built_book):
    """In a page, each drawing is hidden from assistive technology and the formula is there
    as MathML; ``\\(\\beta\\)`` of Chapter 6 reads as the Greek letter."""
    page = (built_book / "book" / "ch06-soft-dictionary.html").read_text()
    containers = CONTAINER.findall(page)
    assert len(containers) >= 300
    for container in containers:
        assert re.search(r'<svg [^>]*aria-hidden="true"', container), container[:300]
        assert container.count("<mjx-assistive-mml") == 1 and "<math " in container
    assert any(re.search(r"<math [^>]*><mi>β</mi></math>", c) for c in containers)


def test_the_typesetter_keeps_the_books_macros_and_flags_errors(built_book, tmp_path):
    typesetter = Typesetter(tmp_path / "cache.json", CONFIG)
    formulas = [("x \\in \\R^d", False), ("\\frac{1}{2}", True), ("\\nosuchmacro", False)]
    typesetter.fill(formulas)
    inline, display, wrong = (typesetter.svg(*f) for f in formulas)
    assert '<mi mathvariant="double-struck">R</mi>' in inline and not errors_in(inline)
    assert 'display="true"' in display and "<mfrac>" in display
    assert errors_in(wrong)


def test_the_typesetter_caches_by_tex_source(built_book, tmp_path, monkeypatch):
    cache = tmp_path / "cache.json"
    first = Typesetter(cache, CONFIG)
    formulas = [("a_i^\\top q", False), ("\\sum_i v_i", True), ("a_i^\\top q", False)]
    first.fill(formulas)
    assert first.typeset_now == 2 and cache.exists()

    asked = []

    def typeset(missing, config):
        asked.append(missing)
        return ["<mjx-container>new</mjx-container>"] * len(missing), {}

    monkeypatch.setattr(typeset_maths, "typeset", typeset)
    again = Typesetter(cache, CONFIG)
    again.fill(formulas)
    assert again.typeset_now == 0
    assert again.svg("a_i^\\top q", False) == first.svg("a_i^\\top q", False)
    # the same TeX displayed, or with another configuration, is another formula
    again.fill([("a_i^\\top q", True), ("\\sum_i v_i", True)])
    other = Typesetter(cache, svg_config({}))
    other.fill([("\\sum_i v_i", True)])
    assert asked == [[("a_i^\\top q", True)], [("\\sum_i v_i", True)]]

