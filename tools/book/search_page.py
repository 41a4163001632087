"""Sphinx extension: the search page shows a result's formulas typeset, not as LaTeX.

Sphinx's search writes each result's snippet from the text of the page it found, where
``_static/search_snippets.js`` makes each formula its source again (``\\(k_i\\)``, kept in
its wrapper's ``data-tex`` by ``typeset_maths.py``, which typesets the pages' formulas at
build time). The search page alone loads MathJax: this extension gives it the book's
(its configuration and ``mathjax_path``, as Sphinx would give a chapter), and
``search_snippets.js`` typesets each snippet as it arrives, after closing or dropping a
formula the snippet's 240 characters cut in two.
"""

from __future__ import annotations

import json


def maths_on_search_page(app, pagename, templatename, context, doctree) -> None:
    """The book's MathJax on the search page."""
    if pagename != "search" or app.builder.format != "html" or not app.config.mathjax_path:
        return
    if app.config.mathjax3_config:
        app.builder.add_js_file("", body=f"window.MathJax = {json.dumps(app.config.mathjax3_config)}")
    app.builder.add_js_file(app.config.mathjax_path, defer="defer")


def setup(app):
    app.connect("html-page-context", maths_on_search_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
