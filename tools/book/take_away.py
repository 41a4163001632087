"""Sphinx extension: what a reader takes away from the HTML book, and where the course is.

* **Where the course is.** ``repository.url`` of ``_config.yml`` (the theme's
  ``repository_url``) is the one place the course's address is written; the pages name it
  through two MyST substitutions set here: ``{{ repository_url }}`` (a link) and
  ``{{ clone_command }}`` (``git clone <url>``).
* **The whole PDF.** When ``make pdf`` has built ``_build/latex/memcourse.pdf``, the site
  gets a copy (``memcourse.pdf`` at its root) and every page's download menu a link to it,
  next to the page's notebook (``.ipynb``, which the theme offers on a chapter's page when
  a launch button is configured) and its source; the theme's "print this page" entry says
  that it prints the page, not the book.

Depends on: ``tools`` (the course's root).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tools import ROOT

PDF = ROOT / "_build" / "latex" / "memcourse.pdf"
PDF_NAME = "memcourse.pdf"


def substitutions(app, config) -> None:
    """``repository_url`` and ``clone_command`` from the theme's ``repository_url``."""
    url = str((config.html_theme_options or {}).get("repository_url") or "").strip()
    shown = url or "the address your instructor gives"
    config.myst_substitutions = {
        **(config.myst_substitutions or {}),
        "repository_url": f"[{url}]({url})" if url else shown,
        "clone_command": f"`git clone {url}`" if url else "`git clone <the course's address>`",
    }


def copy_pdf(app) -> None:
    """The PDF ``make pdf`` built, into the site (when there is one)."""
    if app.builder.format == "html" and PDF.is_file():
        Path(app.outdir).mkdir(parents=True, exist_ok=True)
        shutil.copy2(PDF, Path(app.outdir) / PDF_NAME)


def download_menu(app, pagename, templatename, context, doctree) -> None:
    """The page's download menu: the print entry named for what it does, the whole PDF."""
    for group in context.get("header_buttons") or []:
        if group.get("label") != "download-buttons":
            continue
        for button in group.get("buttons", []):
            if button.get("label") == "download-pdf-button":
                button["text"] = "print page"
                button["tooltip"] = "Print this page (or save it as PDF)"
        if (Path(app.outdir) / PDF_NAME).is_file():
            group["buttons"].append({
                "type": "link",
                "url": context["pathto"](PDF_NAME, 1),
                "text": "whole book .pdf",
                "tooltip": "The whole book as one PDF",
                "icon": "fas fa-book",
                "label": "download-book-pdf-button",
            })


def setup(app):
    app.connect("config-inited", substitutions)
    app.connect("builder-inited", copy_pdf)
    # after the theme's header buttons (priority 501)
    app.connect("html-page-context", download_menu, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
