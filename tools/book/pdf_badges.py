"""Sphinx extension: the status badges (derived, cited, recalled) as badges in the PDF.

sphinx-design writes a badge ({bdg-success-line}`derived` ...) into LaTeX as its bare
word, which then runs into the sentence it tags. This extension gives the LaTeX
builder a small framed, coloured label instead, in the badge's colour; the HTML
badges are left as sphinx-design draws them.
"""

from __future__ import annotations

from sphinx_design.badges_buttons import sd_badge

# sphinx-design's colour names, as LaTeX colours
COLOURS = {
    "primary": "0071BC",
    "secondary": "6C757D",
    "success": "28A745",
    "info": "17A2B8",
    "warning": "D9822B",
    "danger": "DC3545",
    "light": "6C757D",
    "dark": "212121",
    "muted": "6C757D",
}

PREAMBLE = "\n".join(
    [r"% status badges (tools/book/pdf_badges.py)"]
    + [rf"\definecolor{{sdbadge{name}}}{{HTML}}{{{hex_}}}" for name, hex_ in COLOURS.items()]
    + [
        (
            r"\newcommand{\sdbadge}[2]{{\setlength{\fboxsep}{1.2pt}\setlength{\fboxrule}{0.5pt}"
            r"\fcolorbox{sdbadge#1}{white}{\textcolor{sdbadge#1}{\sffamily\scriptsize #2}}}}"
        )
    ]
)


def _colour(node) -> str:
    for cls in node.get("classes", []):
        for prefix in ("sd-outline-", "sd-bg-", "sd-text-"):
            name = cls[len(prefix) :] if cls.startswith(prefix) else ""
            if name in COLOURS:
                return name
    return "secondary"


def visit_badge_latex(self, node) -> None:
    self.body.append(rf"\sdbadge{{{_colour(node)}}}{{")


def depart_badge_latex(self, node) -> None:
    self.body.append("}")


def add_preamble(app, config) -> None:
    elements = dict(config.latex_elements or {})
    elements["preamble"] = elements.get("preamble", "") + "\n" + PREAMBLE + "\n"
    config.latex_elements = elements


def setup(app):
    app.setup_extension("sphinx_design")
    app.add_node(sd_badge, override=True, latex=(visit_badge_latex, depart_badge_latex))
    app.connect("config-inited", add_preamble)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
