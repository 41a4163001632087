"""Sphinx extension: keep the HTML book from asking any other site for anything.

Jupyter Book 1 always loads sphinx-thebe, which puts on every page a script naming
thebe's address on a CDN, its loader, and a block of binder settings. The course has
no thebe button (the live figures run in JupyterLab), so this extension takes those
out of the pages, with its style sheet. MathJax is served by the book itself (see
tools/book/vendor_mathjax.py and ``mathjax_path`` in _config.yml).

It also drops the saved widget state that MyST-NB copies from each executed notebook
into its page: the page shows each figure as its picture and loads no widget manager
(``nb_ipywidgets_js`` is empty), so that state, base64 pictures included, is dead weight.
"""

from __future__ import annotations

from docutils import nodes

THEBE_MARKERS = ("THEBE_JS_URL", "text/x-thebe-config", "kernelName = ")
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _is_thebe_script(script) -> bool:
    filename = str(getattr(script, "filename", script) or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return filename.endswith("sphinx-thebe.js") or any(m in body for m in THEBE_MARKERS)


def _is_widget_state(script) -> bool:
    return str(getattr(script, "attributes", {}).get("type", "")) == WIDGET_STATE


def drop_thebe_assets(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if scripts:
        context["script_files"] = [
            s for s in scripts if not (_is_thebe_script(s) or _is_widget_state(s))
        ]
    styles = context.get("css_files")
    if styles:
        context["css_files"] = [
            s for s in styles if not str(getattr(s, "filename", s)).endswith("sphinx-thebe.css")
        ]


def drop_thebe_config(app, doctree, docname) -> None:
    for node in list(doctree.findall(nodes.raw)):
        if node.get("format") == "html" and any(m in node.astext() for m in THEBE_MARKERS):
            node.parent.remove(node)


def setup(app):
    # after sphinx-thebe's own doctree-resolved handler (priority 500)
    app.connect("doctree-resolved", drop_thebe_config, priority=900)
    app.connect("html-page-context", drop_thebe_assets, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
