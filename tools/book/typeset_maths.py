"""Sphinx extension: every formula of the HTML book typeset at build time, in SVG, and no
MathJax loaded by the pages.

Sphinx writes a formula into a page as its TeX source: ``<span class="math ...">\\(...\\)</span>``
inline, ``<div class="math ...">\\[...\\]</div>`` displayed (after its number, if it has one),
for MathJax to typeset in the reader's browser, a main thread busy for seconds on a phone.
Here, once the pages are written (``build-finished``), each formula of each page written
is replaced by what MathJax 3 makes of it in Node (``typeset_maths.js``, the book's own
MathJax, ``tools/book/vendor_mathjax.py``): an ``<mjx-container>`` holding the SVG drawn,
hidden from assistive technology, and the formula as MathML for a screen reader (the
``a11y/assistive-mml`` component). The wrapper keeps the TeX as Sphinx wrote it, with its
delimiters, in ``data-tex``: the search page's snippets are made from the pages' text, and
``_static/search_snippets.js`` reads the TeX there. The configuration is the book's (``mathjax3_config``:
macros, TeX packages), its output SVG. A formula draws each character as a ``<use>`` of the
character's outline, which the page holds once, in a hidden ``<svg id="MJX-SVG-global-cache">``
at the end of its body (MathJax's ``fontCache: "global"``, as in a browser): a page carries
each outline once, not once per formula. The wrapper Sphinx wrote (its class, id and
number) stays.

Every formula of the site is typeset by one Node process, and only those not typeset
before: each is cached by its TeX source, whether displayed, the configuration and
MathJax's version, with the outlines of its characters (``_build/.doctrees/typeset_maths.json``),
so a rebuild that rewrites a page costs Node nothing unless a formula is new. A page that
Sphinx did not write again holds SVG already, no TeX, and is left as it is. A formula
MathJax cannot typeset (an unknown macro) is a warning, with its page, and the strict
build fails on it.

The pages are written without MathJax's scripts (the configuration and
``mathjax_path``), except the search page, whose snippets arrive as TeX at run time
(``search_page.py``). The style of the SVG output, fixed by MathJax, is in
``_static/memcourse.css``.
"""

from __future__ import annotations

import hashlib
import html
import json
import posixpath
import re
import shutil
import subprocess
import time
from pathlib import Path

from sphinx.util import logging

from tools.book.vendor_mathjax import DEST, VERSION, node_entry

logger = logging.getLogger(__name__)

SCRIPT = Path(__file__).with_suffix(".js")
CACHE = "typeset_maths.json"
GLYPHS_ID = "MJX-SVG-global-cache"
USED_GLYPH = re.compile(r'xlink:href="#(MJX-TEX-[^"]+)"')
#: pages that typeset at run time what they show, and keep MathJax
RUNTIME_PAGES = {"search"}

# a formula as Sphinx's HTML writer (sphinx.ext.mathjax) leaves it: the TeX HTML-escaped
INLINE = re.compile(r'(<span class="math notranslate nohighlight">)(?P<tex>\\\(.*?\\\))(</span>)', re.S)
DISPLAY = re.compile(
    r'(<div class="math notranslate nohighlight"[^>]*>\s*(?:<span class="eqno">.*?</span>)?\s*)'
    r'(?P<tex>\\\[.*?\\\])(\s*</div>)', re.S)


def svg_config(config: dict) -> dict:
    """The book's MathJax configuration, drawing SVG where it drew CHTML (its loader's
    ``output/*`` replaced by ``output/svg``), each character's outline kept once (the
    global font cache), the MathML for a screen reader beside each formula."""
    config = json.loads(json.dumps(config))
    loader = config.setdefault("loader", {})
    loader["load"] = [c for c in loader.get("load", ["input/tex"]) if not c.startswith("output/")]
    loader["load"] += ["output/svg"]
    if "a11y/assistive-mml" not in loader["load"]:
        loader["load"].append("a11y/assistive-mml")
    config["svg"] = {**config.get("svg", {}), "fontCache": "global"}
    config.pop("options", None)  # which HTML classes the browser scans: nothing here
    return config


def formulas_of(page: str) -> list[tuple[str, bool]]:
    """The formulas of a page's HTML, as (TeX without its delimiters, displayed)."""
    found = [(m.start(), html.unescape(m["tex"])[2:-2].strip(), False) for m in INLINE.finditer(page)]
    found += [(m.start(), html.unescape(m["tex"])[2:-2].strip(), True) for m in DISPLAY.finditer(page)]
    return [(tex, display) for _, tex, display in sorted(found)]


def key(tex: str, display: bool, config: dict) -> str:
    text = json.dumps([VERSION, config, display, tex], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def typeset(formulas: list[tuple[str, bool]], config: dict,
            components: Path = DEST) -> tuple[list[str], dict[str, str]]:
    """Each formula as the HTML of its ``<mjx-container>``, in order, and the outline of
    each character they draw (``<path>`` by id), by one Node process."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is missing: run `make system-deps` (as root) first")
    request = {"entry": str(node_entry(components)), "components": str(components),
               "config": config, "formulas": [{"tex": t, "display": d} for t, d in formulas]}
    done = subprocess.run([node, str(SCRIPT)], input=json.dumps(request), capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"typeset_maths.js failed:\n{done.stderr[-3000:]}")
    answer = json.loads(done.stdout)
    if len(answer["formulas"]) != len(formulas):
        raise RuntimeError(f"typeset_maths.js answered {len(answer['formulas'])} of"
                           f" {len(formulas)} formulas")
    return answer["formulas"], answer["glyphs"]


class Typesetter:
    """Formulas to SVG through a cache kept in a JSON file: ``formulas`` (``key`` -> HTML)
    and ``glyphs`` (a character's id -> its ``<path>``)."""

    def __init__(self, cache: Path, config: dict) -> None:
        self.cache, self.config = cache, config
        try:
            kept = json.loads(cache.read_text())
            self.known, self.glyphs = dict(kept["formulas"]), dict(kept["glyphs"])
        except (OSError, ValueError, KeyError, TypeError):
            self.known, self.glyphs = {}, {}
        self.typeset_now = 0  # formulas Node typeset in this run (not in the cache)

    def fill(self, formulas: list[tuple[str, bool]]) -> None:
        """Typeset, in one batch, those of ``formulas`` the cache lacks, and keep them."""
        missing = list(dict.fromkeys(f for f in formulas if key(*f, self.config) not in self.known))
        if not missing:
            return
        svgs, glyphs = typeset(missing, self.config)
        for formula, svg in zip(missing, svgs):
            self.known[key(*formula, self.config)] = svg
        self.glyphs.update(glyphs)
        self.typeset_now += len(missing)
        self.cache.parent.mkdir(parents=True, exist_ok=True)
        self.cache.write_text(json.dumps({"formulas": self.known, "glyphs": self.glyphs}))

    def svg(self, tex: str, display: bool) -> str:
        return self.known[key(tex, display, self.config)]

    def glyphs_of(self, page: str) -> str:
        """The hidden ``<svg>`` of the outlines of the characters ``page`` draws."""
        used = sorted(set(USED_GLYPH.findall(page)))
        return (f'<svg id="{GLYPHS_ID}" style="display: none;" aria-hidden="true"'
                f' xmlns="http://www.w3.org/2000/svg"><defs>'
                + "".join(self.glyphs[g] for g in used) + "</defs></svg>")


def replace(page: str, typesetter: Typesetter) -> str:
    """The page's HTML with every formula replaced by its SVG (already in the cache), its
    TeX kept in the wrapper's ``data-tex``, and the outlines of the characters they draw at
    the end of its body."""
    def swap(display: bool):
        def one(match: re.Match) -> str:
            source = html.unescape(match["tex"])
            opening = match.group(1).replace(
                'class="math notranslate nohighlight"',
                f'class="math notranslate nohighlight" data-tex="{html.escape(source)}"', 1)
            return opening + typesetter.svg(source[2:-2].strip(), display) + match.group(3)
        return one
    page = DISPLAY.sub(swap(True), INLINE.sub(swap(False), page))
    end = page.rindex("</body>")
    return page[:end] + typesetter.glyphs_of(page) + "\n" + page[end:]


def errors_in(svg: str) -> bool:
    """Whether MathJax marked an error in a formula: TeX it could not parse (``merror``),
    or a macro it does not know, which TeX's ``noundefined`` package sets in red."""
    return 'data-mml-node="merror"' in svg or '<mtext mathcolor="red">\\' in svg


def typeset_site(app, exception) -> None:
    """Every page written under the output folder, its formulas typeset (see above)."""
    if exception is not None or app.builder.format != "html":
        return
    started = time.monotonic()
    out = Path(app.outdir)
    config = svg_config(app.config.mathjax3_config or {})
    typesetter = Typesetter(Path(app.doctreedir) / CACHE, config)
    pages = {}
    for path in sorted(out.rglob("*.html")):
        if path.relative_to(out).parts[0] in {"_static", "_sources", "mathjax"}:
            continue
        if path.relative_to(out).with_suffix("").as_posix() in RUNTIME_PAGES:
            continue
        text = path.read_text(encoding="utf-8")
        formulas = formulas_of(text)
        if formulas:
            pages[path] = (text, formulas)
    typesetter.fill([f for _, formulas in pages.values() for f in formulas])
    for path, (text, formulas) in pages.items():
        for tex, display in formulas:
            if errors_in(typesetter.svg(tex, display)):
                logger.warning("MathJax cannot typeset %r", tex,
                               location=path.relative_to(out).as_posix())
        path.write_text(replace(text, typesetter), encoding="utf-8")
    logger.info("typeset_maths: %d formulas on %d pages, %d of them typeset by Node, in %.1f s",
                sum(len(f) for _, f in pages.values()), len(pages), typesetter.typeset_now,
                time.monotonic() - started)


def without_mathjax(app, pagename, templatename, context, doctree) -> None:
    """The page's scripts without MathJax (its configuration and loader), but on the pages
    of ``RUNTIME_PAGES``."""
    if app.builder.format != "html" or pagename in RUNTIME_PAGES or "script_files" not in context:
        return
    loader = posixpath.join("_static", app.config.mathjax_path or "")

    def mathjax(js) -> bool:
        body = js.attributes.get("body", "") or ""
        return js.filename == loader or body.startswith(("window.MathJax", "MathJax.Hub"))

    context["script_files"][:] = [js for js in context["script_files"] if not mathjax(js)]


def setup(app):
    # after sphinx.ext.mathjax (500) has added its scripts to the page
    app.connect("html-page-context", without_mathjax, priority=900)
    app.connect("build-finished", typeset_site)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
