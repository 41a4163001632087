"""Sphinx extension: what the HTML book needs for WCAG 2.1 AA beyond the theme's templates.

The theme's own buttons are named as they show in ``_templates/`` (the search field, the
colour-mode button); the colours of the badges, the figures and dark mode are in
``_static/memcourse.css``; ``_static/scroll_regions.js`` (on every page: Jupyter Book adds
every script of ``_static/``) gives a display equation or a figure's picture that scrolls
sideways on a phone a tab stop while it does, so that a keyboard reaches all of it
(WCAG 2.1.1), as the theme does for code.

This extension mends what none of those reach: MyST-NB draws a folded cell
(``hide-cell``, ``hide-input``) as a ``<summary>`` named "Toggle hidden content" around
the visible words "Show code cell content", and a name that leaves out what the reader
sees fails WCAG 2.5.3 (label in name). The summary is drawn without that name, so that
its words name it. The LaTeX build is untouched.
"""

from __future__ import annotations

from html import escape

from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput


def visit_hidden_cell(self, node) -> None:
    """MyST-NB's folded cell, its summary named by the words it shows."""
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n<summary>\n')
    self.body.append(f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n')
    self.body.append("</summary>\n")


def setup(app):
    app.setup_extension("myst_nb")
    app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell, depart_HideCellInput))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
