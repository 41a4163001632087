"""Sphinx extension: Font Awesome's fonts cut down to the icons the pages use.

The theme draws its icons with Font Awesome. It loads Font Awesome's script on every page
(1.5 MB, every icon of the set as SVG), which ``_templates/layout.html`` leaves out; the
theme's style sheet then draws each icon as a glyph of Font Awesome's font (the solid font
alone is 156 kB). After an HTML build this extension finds the icons the site can show:

* the icon classes (``fa-magnifying-glass`` ...) written in its pages and scripts, mapped
  to their characters by the theme's style sheet, and
* every character a style sheet writes as content outside those icon classes (the theme's
  admonition and link icons, the course's box icons of ``memcourse.css``),

and writes each of Font Awesome's three fonts with those glyphs only (a few kB, WOFF) into
``_static/icons/``, where ``memcourse.css`` declares them after the theme's fonts, so that
the browser loads these.

The course's own scripts (``_static/*.js``, which Jupyter Book adds to every page) are
loaded with ``defer``: each starts once the page is parsed anyway, and none keeps the
browser from drawing the page meanwhile. The pages load no MathJax (``typeset_maths.py`` typesets their
formulas at build time); the search page loads the components its snippets use, no more
(``mathjax_path`` and ``mathjax3_config`` in ``_config.yml``). The LaTeX build is untouched.
"""

from __future__ import annotations

import re
from pathlib import Path

from fontTools import subset

FONTS = Path("_static") / "vendor" / "fontawesome" / "webfonts"
ICONS = Path("_static") / "icons"
#: the theme's fonts (TrueType: fontTools reads it without a Brotli decoder), one per style
FACES = ("fa-solid-900", "fa-regular-400", "fa-brands-400")
#: a rule of Font Awesome's icon classes: ``.fa-search:before,.fa-magnifying-glass:before{content:"\f002"}``
ICON_RULE = re.compile(r'((?:\.fa-[\w-]+::?(?:before|after),?)+)\{content:"(\\[0-9a-fA-F]+|[^"\\])"\}')
ICON_CLASS = re.compile(r"\bfa-[a-z0-9]+(?:-[a-z0-9]+)*")
#: a character written as content elsewhere: escaped ("\f140") or, in the private use area
#: where the icon fonts keep their glyphs, as itself
CONTENT = re.compile(r'"\\([0-9a-fA-F]{2,6})"|([\ue000-\uf8ff])')


def _character(text: str) -> int:
    return int(text[1:], 16) if text.startswith("\\") else ord(text)


def icon_characters(css: str) -> dict[str, int]:
    """Icon class (``fa-search``) -> its character, from Font Awesome's rules in ``css``."""
    found = {}
    for selectors, code in ICON_RULE.findall(css):
        for name in re.findall(r"\.(fa-[\w-]+)::?", selectors):
            found[name] = _character(code)
    return found


def used_characters(site: Path) -> set[int]:
    """The characters of Font Awesome that the built site at ``site`` can show."""
    static = site / "_static"
    sheets = {path: path.read_text(errors="replace") for path in static.rglob("*.css")}
    icons = {}
    for text in sheets.values():
        icons.update(icon_characters(text))
    wanted = set()
    for text in sheets.values():  # content written outside the icon classes
        for code, char in CONTENT.findall(ICON_RULE.sub("", text)):
            wanted.add(int(code, 16) if code else ord(char))
    pages = list(site.rglob("*.html")) + [p for p in static.rglob("*.js")
                                           if p.name != "fontawesome.js"]
    for path in pages:
        for name in set(ICON_CLASS.findall(path.read_text(errors="replace"))):
            if name in icons:
                wanted.add(icons[name])
    return wanted


def write_subsets(site: Path, characters: set[int]) -> dict[str, int]:
    """Each face of Font Awesome with ``characters`` only, as WOFF; name -> bytes written."""
    options = subset.Options()
    options.flavor = "woff"
    options.layout_features = []  # icons are single characters: no ligatures, no kerning
    options.notdef_outline = True
    target = site / ICONS
    target.mkdir(parents=True, exist_ok=True)
    written = {}
    for face in FACES:
        font = subset.load_font(str(site / FONTS / f"{face}.ttf"), options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=characters)
        subsetter.subset(font)
        out = target / f"{face}.woff"
        subset.save_font(font, str(out), options)
        written[out.name] = out.stat().st_size
    return written


def cut_icon_fonts(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    site = Path(app.outdir)
    if not (site / FONTS).is_dir():  # another theme: nothing of Font Awesome to cut
        return
    write_subsets(site, used_characters(site))


def deferred_scripts(app, config) -> None:
    """The scripts of the course's ``_static/`` in ``html_js_files`` loaded with ``defer``."""
    own = {path.name for path in (Path(app.confdir) / "_static").glob("*.js")}
    config.html_js_files = [
        (name, {**attrs, "defer": "defer"}) if name in own and "async" not in attrs else (name, attrs)
        for name, attrs in config.html_js_files]


def setup(app):
    # after Sphinx has made every entry of html_js_files a (name, attributes) pair (800)
    app.connect("config-inited", deferred_scripts, priority=900)
    app.connect("build-finished", cut_icon_fonts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

