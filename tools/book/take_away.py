"""Sphinx extension: where the course is, and what a reader takes away from the HTML book.

* **Where the course is.** ``repository.url`` of ``_config.yml`` (the theme's
  ``repository_url``) is the one place the course's address is written. The pages name it
  through two MyST substitutions set here: ``{{ repository_url }}`` (a link) and
  ``{{ clone_command }}`` (``git clone <url>``, as code).
* **Each chapter as a notebook.** Every page that is a notebook (a chapter, a session
  page) gets ``.ipynb`` in its download menu, written next to the page's source in
  ``_sources/``: the page's cells as MyST-NB wrote them for the build
  (``_build/jupyter_execute/``) with the outputs of the build's execution merged in from
  the execution cache (jupyter-cache's ``merge_match_into_notebook``), so that it reads
  whole before it is run. A figure's output keeps its picture and drops its widget view,
  whose state only a running kernel has (run the cell for the live figure). The theme
  offers a notebook itself only when a launch button is configured; here it does not
  depend on one.
* **The whole book as a PDF.** When ``make pdf`` has built ``_build/latex/memcourse.pdf``
  before the HTML build, the site gets a copy (``memcourse.pdf`` at its root) and every
  page's download menu a link to it. Whether there is one (and which) is a setting of the
  HTML output (``take_away_pdf``), so every page is written again when it changes, not
  only the pages an incremental build would write. The theme's ".pdf" entry, which
  prints the page in the browser, is renamed for what it does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

PDF_NAME = "memcourse.pdf"
NO_ADDRESS = "`git clone <the course's address>`"


def substitutions(app, config) -> None:
    """``repository_url`` and ``clone_command`` from the theme's ``repository_url``; and
    ``take_away_pdf``: the whole PDF's size and time, or empty when there is none."""
    pdf = built_pdf(Path(app.outdir))
    config.take_away_pdf = (f"{pdf.stat().st_size} {pdf.stat().st_mtime_ns}"
                            if pdf.is_file() else "")
    url = str((config.html_theme_options or {}).get("repository_url") or "")
    config.myst_substitutions = {**(config.myst_substitutions or {}), **address_texts(url)}


def address_texts(url: str) -> dict[str, str]:
    """``repository_url`` (a link) and ``clone_command`` (as code) for the repository at
    ``url`` (``repository.url`` of ``_config.yml``; empty: none named); the lab fills them
    in too (``tools.lab.contents``)."""
    url = url.strip()
    return {"repository_url": f"[{url}]({url})" if url else "the address your instructor gives",
            "clone_command": f"`git clone {url}`" if url else NO_ADDRESS}


def built_pdf(outdir: Path) -> Path:
    """Where ``make pdf`` leaves the whole book, beside the HTML output (``_build/``)."""
    return Path(outdir).parent / "latex" / PDF_NAME


def copy_pdf(app) -> None:
    """The PDF ``make pdf`` built, into the site; a copy left by an earlier build is removed
    when there is none, so that no page links an old book."""
    if app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    target = outdir / PDF_NAME
    if built_pdf(outdir).is_file():
        outdir.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built_pdf(outdir), target)
    else:
        target.unlink(missing_ok=True)


def _executed(app, pagename) -> Path | None:
    """The notebook MyST-NB wrote for the page ``pagename`` (None: the page is no notebook)."""
    if "kernelspec" not in (app.env.metadata.get(pagename) or {}):
        return None
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    return executed if executed.is_file() else None


def offer_notebook(app, pagename, templatename, context, doctree) -> None:
    """The page's notebook in the download menu (before the theme builds the menu from
    ``ipynb_source``; the theme sets it too when a launch button is configured)."""
    if _executed(app, pagename) is not None:
        context["ipynb_source"] = f"{pagename}.ipynb"


def write_notebook(app, pagename, templatename, context, doctree) -> None:
    """The page's notebook with its outputs into ``_sources/`` (after the theme's launch
    buttons, which copy it there without them)."""
    executed = _executed(app, pagename)
    if executed is None:
        return
    copy = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    copy.parent.mkdir(parents=True, exist_ok=True)
    cache = getattr(app.config, "nb_execution_cache_path", "") or ""
    copy.write_text(with_outputs(executed, Path(app.srcdir) / cache if cache else None),
                    encoding="utf-8")


def with_outputs(executed: Path, cache: Path | None) -> str:
    """The notebook ``executed`` as text, with the outputs its cells have in the execution
    cache at ``cache`` (as it is when the cache holds none), figures as their pictures."""
    import nbformat

    notebook = nbformat.read(executed, as_version=4)
    if cache is not None and cache.is_dir():
        from jupyter_cache import get_cache

        try:
            _, notebook = get_cache(str(cache)).merge_match_into_notebook(notebook)
        except KeyError:  # not executed into the cache (a page without code, say)
            pass
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if WIDGET_VIEW in output.get("data", {}) and len(output["data"]) > 1:
                del output["data"][WIDGET_VIEW]
    return nbformat.writes(notebook)


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
    app.add_config_value("take_away_pdf", "", "html")
    app.connect("config-inited", substitutions)
    app.connect("builder-inited", copy_pdf)
    # before the theme's launch and header buttons (priority 501), then after them
    app.connect("html-page-context", offer_notebook, priority=500)
    app.connect("html-page-context", write_notebook, priority=550)
    app.connect("html-page-context", download_menu, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
