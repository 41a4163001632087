"""Sphinx extension: every picture of the HTML pages has its size written, so that the page's
layout does not move when it arrives.

A cell's output picture (``<img src="../_images/...png">``) is written by Sphinx without a
size; the browser knows its height only once the file has come, and moves the text below
it then (a layout shift, which a reader on a slow phone sees and Lighthouse counts). Once
the pages are written (``build-finished``), each ``<img>`` of the site's own ``_images/``
without ``width`` and ``height`` gets its file's size in pixels; ``memcourse.css`` draws it
at most as wide as its column with ``height: auto``, so the browser keeps the picture's
room, at its proportions, from the start. A page whose pictures have their sizes already
is left as it is.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

from PIL import Image

IMG = re.compile(r"<img\b[^>]*>")
SRC = re.compile(r'\ssrc="([^"]+)"')


def sized(tag: str, page: Path, out: Path) -> str:
    """The ``<img>`` tag with its picture's ``width`` and ``height``, when it names a file of
    ``out/_images`` and has neither; otherwise the tag as it is."""
    source = SRC.search(tag)
    if source is None or re.search(r"\s(width|height)=", tag):
        return tag
    path = (page.parent / urllib.parse.unquote(source.group(1))).resolve()
    if path.parent != (out / "_images").resolve() or not path.is_file():
        return tag
    with Image.open(path) as picture:
        width, height = picture.size
    head, slash = (tag[:-2].rstrip(), " />") if tag.endswith("/>") else (tag[:-1], ">")
    return f'{head} width="{width}" height="{height}"{slash}'


def size_pictures(app, exception) -> None:
    """Every page of the output folder, its pictures' sizes written (see above)."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        if page.relative_to(out).parts[0] in {"_static", "_sources", "mathjax", "_images"}:
            continue
        text = page.read_text(encoding="utf-8")
        if "_images/" not in text:
            continue
        new = IMG.sub(lambda match: sized(match.group(0), page, out), text)
        if new != text:
            page.write_text(new, encoding="utf-8")


def setup(app):
    app.connect("build-finished", size_pictures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
