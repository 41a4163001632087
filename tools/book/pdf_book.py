"""Sphinx extension: the PDF as a printed book, with the course's own numbering.

The HTML book keeps the order of the curriculum (an appendix is read in the session
that needs it); the LaTeX builder gets the shape of a printed book instead:

* the sessions are unnumbered parts, the Prologue, the session worksheets and the
  reading list are unnumbered chapters, and Chapters 0-17 carry their own numbers
  (the number is taken off the title, where LaTeX prints it once);
* the appendices move to the back matter, after ``\\appendix``, lettered A-E in order;
* every glossary term is indexed where it is defined (Sphinx does that) and where a
  chapter first uses it; cross-references get page numbers (``latex_show_pagerefs``);
* a list of the figures (id, chapter, the one-line reading of the default state, page)
  and of the derivations D1-D20 follows the contents;
* an appendix whose headings carry their own numbers (Appendix D's "D6. Softmax
  Jacobian ...") has unnumbered sections, so that each heading shows one number.

And it sets what a printed page needs: each figure cell in a float placed [htbp] (a picture
that does not fit at the foot of a page moves on while the text fills the page), a box
(Check, Keep ...) begun only where its title and first lines fit (``\\Needspace``), the
characters the fonts lack mapped (``ᵀ``, a superscript T), the index in the text font
(Sphinx sets its entries in typewriter type), long lines of code and output broken
without the red continuation marks (the continuation is indented instead), a narrow table
column (a symbol, a short name) never squeezed under its own width, and the math font
chosen in the preamble, not at ``\\begin{document}`` (unicode-math then turns Greek
letters into "other" characters after the ``.aux`` file is read, so that a heading with a
β never matched its label from the run before and the log asked for a rerun forever).

The paper is US Letter, or A4 with ``make pdf PAPER=a4`` (the environment's
``MEMCOURSE_PAPER``: ``letter`` or ``a4``; anything else stops the build with the choices).

Nothing here touches the HTML build: the transform runs for the LaTeX builder only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from tools.book.toc import toc_files
from tools import ROOT

CHAPTER = re.compile(r"^book/ch(\d\d)-")
APPENDIX = re.compile(r"^book/appendix-([a-e])-")
NUMBERED_TITLE = re.compile(r"^(?:\d+|Appendix [A-E])\.\s+")
FIGURE_CALL = re.compile(r'figures\.get\(\s*"([a-z0-9-]+)"\s*\)')
DERIVATION = re.compile(r"^\((d\d+)\)=\n## (D\d+\. .+)$", re.MULTILINE)
BACK_MATTER = "Back matter"
#: a heading that carries its own number in an appendix: "D6. Softmax Jacobian ..."
OWN_NUMBER = re.compile(r"^[A-E]\d+\.\s")
#: code and output lines too long for the page break, indented, without Sphinx's red hooks
VERBATIM = r"verbatimcontinued={\makebox[2\fontcharwd\font`\x]{}}, verbatimvisiblespace={\ }"
SECNUMDEPTH = 2  # sections (3.1) and subsections (3.1.1) are numbered within a chapter
#: lines a box (an admonition: Check, Keep, Goal ...) needs left on the page to start there:
#: its title and the first lines of its body, so that a title never ends a page alone
BOX_NEEDS = 6

PREAMBLE = rf"""
% the course's numbering, index, code lines, tables, math font, boxes and floats (tools/book/pdf_book.py)
\newcommand{{\memnumbered}}{{\setcounter{{secnumdepth}}{{{SECNUMDEPTH}}}}}
\newcommand{{\memunnumbered}}{{\setcounter{{secnumdepth}}{{-1}}}}
\newcommand{{\memunnumberedpart}}{{\setcounter{{secnumdepth}}{{-2}}}}
\newcommand{{\memunnumberedsections}}{{\setcounter{{secnumdepth}}{{0}}}}
\renewcommand{{\sphinxstyleindexentry}}[1]{{#1}}
\setlength{{\tymin}}{{0.25\linewidth}}
\setmathfont{{Latin Modern Math}}
\usepackage{{newunicodechar}}\newunicodechar{{ᵀ}}{{\textsuperscript{{T}}}}
\newcommand{{\memfirstuse}}[1]{{#1}}
\AddToHook{{env/sphinxadmonition/before}}{{\Needspace{{{BOX_NEEDS}\baselineskip}}}}
\renewcommand{{\topfraction}}{{0.9}}\renewcommand{{\bottomfraction}}{{0.8}}
\renewcommand{{\textfraction}}{{0.07}}\renewcommand{{\floatpagefraction}}{{0.8}}
\newcommand{{\memanswerbox}}[1]{{\par\noindent\fbox{{\begin{{minipage}}[t][#1][t]{{\dimexpr\linewidth-2\fboxsep-2\fboxrule}}\footnotesize\textit{{Your answer}}\end{{minipage}}}}\par\medskip}}
"""


def _latex(text: str) -> str:
    """Plain text as LaTeX (the readings hold _, ^, %, # ...; ᵀ is the preamble's)."""
    specials = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "_": r"\_", "^": r"\^{}",
                "%": r"\%", "#": r"\#", "&": r"\&", "$": r"\$", "~": r"\textasciitilde{}"}
    return "".join(specials.get(char, char) for char in text)


def figure_list(root: Path = ROOT) -> list[tuple[str, str, str]]:
    """(id, chapter title, reading of the default state) of every figure cell, in order."""
    from memkit import figures

    found = []
    for name in toc_files(root):
        source = (root / f"{name}.md").read_text()
        title = re.search(r"^# (.+)$", source, re.MULTILINE)
        for figure_id in FIGURE_CALL.findall(source):
            found.append((figure_id, title.group(1) if title else name,
                          figures.get(figure_id).caption))
    return found


def derivation_list(root: Path = ROOT) -> list[tuple[str, str]]:
    """(label, title) of D1-D20, as Appendix D heads them."""
    return DERIVATION.findall((root / "book" / "appendix-d-derivations.md").read_text())


def lists_latex(root: Path = ROOT) -> str:
    """The list of figures and the list of derivations, with page references."""
    lines = [r"\chapter*{List of figures}\addcontentsline{toc}{chapter}{List of figures}",
             r"\begin{description}"]
    for figure_id, chapter, reading in figure_list(root):
        lines.append(
            rf"\item[{_latex(figure_id)}] {_latex(chapter)}, page \pageref{{memfig:{figure_id}}}."
            rf"\\ \textit{{{_latex(reading)}}}"
        )
    lines += [r"\end{description}",
              r"\chapter*{List of derivations}\addcontentsline{toc}{chapter}{List of derivations}",
              r"\begin{description}"]
    for label, title in derivation_list(root):
        name, _, rest = title.partition(". ")
        target = rf"\detokenize{{book/appendix-d-derivations:{label}}}"
        lines.append(rf"\item[{name}] {_latex(rest)}, page \pageref{{{target}}}.")
    lines.append(r"\end{description}")
    return "\n".join(lines)


class first_use(nodes.Inline, nodes.Element):  # noqa: N801 (a docutils node)
    """The index entry of a term's first use in a chapter.

    Sphinx writes a glossary term's own entry inside a macro argument, where TeX turns
    ``\\sphinxhyphen{}`` into ``\\sphinxhyphen {}``; written bare, the entry of a first use
    of "cross-entropy loss" would sort as another term. Wrapping it in an argument too
    gives both the same key.
    """


def visit_first_use(self, node) -> None:
    self.body.append(r"\memfirstuse{")


def depart_first_use(self, node) -> None:
    self.body.append("}")


def _raw(text: str) -> nodes.raw:
    return nodes.raw("", text + "\n", format="latex")


def _docname(node) -> str:
    return str(node.get("docname", ""))


class PrintedBook(SphinxPostTransform):
    """Renumber, move the appendices, index first uses, float and label figures (LaTeX only)."""

    default_priority = 800  # after sphinx-jupyterbook-latex has made the parts (700)
    builders = ("latex",)

    def run(self, **kwargs) -> None:
        files = [sof for sof in self.document.findall(addnodes.start_of_file)]
        docs = {_docname(sof): sof for sof in files if _docname(sof).startswith("book/")}
        if not docs:
            return
        parts = [sof for sof in files if not _docname(sof).startswith("book/")]
        for part in parts:  # a session's caption: an unnumbered \part
            section = next(iter(part.findall(nodes.section)), None)
            if section is not None and section.children:
                section.insert(0, _raw(r"\memunnumberedpart"))
                section.insert(2, _raw(r"\memnumbered"))
        terms = self._glossary_terms()
        for name, sof in docs.items():
            chapter, appendix = CHAPTER.match(name), APPENDIX.match(name)
            title = next(iter(sof.findall(nodes.title)), None)
            if chapter or appendix:
                if title is not None:
                    self._strip_number(title)
                if appendix:
                    self._unnumber_own_numbers(sof)
                if chapter:
                    sof.insert(0, _raw(rf"\setcounter{{chapter}}{{{int(chapter.group(1)) - 1}}}"))
            else:
                sof.insert(0, _raw(r"\memunnumbered"))
                sof.append(_raw(r"\memnumbered"))
            self._index_first_uses(sof, terms)
            self._float_figures(sof)
        self._move_appendices(docs, parts)

    @staticmethod
    def _strip_number(title: nodes.title) -> None:
        for child in title.children:
            if isinstance(child, nodes.Text):
                stripped = NUMBERED_TITLE.sub("", str(child), count=1)
                title.replace(child, nodes.Text(stripped))
                return

    @staticmethod
    def _unnumber_own_numbers(sof) -> None:
        """Sections unnumbered in an appendix whose headings number themselves (D6. ...)."""
        chapter = next(iter(sof.findall(nodes.section)), None)
        headings = [s[0].astext() for s in chapter.findall(nodes.section) if s is not chapter
                    and s.children and isinstance(s[0], nodes.title)] if chapter else []
        if not any(OWN_NUMBER.match(heading) for heading in headings):
            return
        chapter.insert(1, _raw(r"\memunnumberedsections"))
        sof.append(_raw(r"\memnumbered"))

    def _glossary_terms(self) -> dict[str, str]:
        """Glossary term id -> the term as the glossary writes it."""
        found = {}
        for term in self.document.findall(nodes.term):
            text = "".join(t.astext() for t in term.findall(nodes.Text)
                           if not isinstance(t.parent, addnodes.index))
            for node_id in term.get("ids", []):
                found[node_id] = text.strip()
        return found

    @staticmethod
    def _index_first_uses(sof, terms: dict[str, str]) -> None:
        seen = set()
        for ref in list(sof.findall(nodes.reference)):
            target = str(ref.get("refid") or ref.get("refuri") or "")
            node_id = re.split(r"[#:]", target)[-1]
            term = terms.get(node_id)
            if term is None or term in seen or not any(
                "std-term" in child.get("classes", []) for child in ref.findall(nodes.inline)
            ):
                continue
            seen.add(term)
            index = addnodes.index(entries=[("single", term, "", "", None)], inline=True)
            ref.parent.insert(ref.parent.index(ref), first_use("", index))

    @staticmethod
    def _float_figures(sof) -> None:
        """Each figure cell (its ``figures.get`` line and its picture) in a float, [htbp],
        labelled for the list of figures: a picture too tall for the rest of the page moves
        to the top of the next one while the text goes on filling this one."""
        for block in list(sof.findall(nodes.literal_block)):
            ids = FIGURE_CALL.findall(block.astext())
            cell = block.parent
            while cell is not None and "cell" not in cell.get("classes", []):
                cell = cell.parent
            if not ids or cell is None:
                continue
            labels = "".join(rf"\label{{memfig:{figure_id}}}" for figure_id in ids)
            holder = cell.parent
            holder.insert(holder.index(cell) + 1, _raw(r"\end{figure}"))
            holder.insert(holder.index(cell),
                          _raw(r"\begin{figure}[htbp]\phantomsection" + labels))

    @staticmethod
    def _move_appendices(docs: dict, parts: list) -> None:
        """Appendices A-E, in letter order, open the back matter after \\appendix."""
        appendices = [sof for name, sof in sorted(docs.items()) if APPENDIX.match(name)]
        back = next((p for p in parts if _docname(p) == BACK_MATTER), None)
        if not appendices or back is None:
            return
        anchor = next(iter(back.findall(addnodes.start_of_file, include_self=False)), None)
        if anchor is None:
            return
        holder, position = anchor.parent, anchor.parent.index(anchor)
        for sof in appendices:
            sof.parent.remove(sof)
        for offset, sof in enumerate(appendices):
            holder.insert(position + offset, sof)
        appendices[0].insert(0, _raw(r"\appendix"))


PAPERS = {"letter": "letterpaper", "a4": "a4paper"}  # make pdf PAPER=... -> LaTeX's class option
PAPER_ENV = "MEMCOURSE_PAPER"


def paper_size() -> str:
    """LaTeX's paper option for the paper ``MEMCOURSE_PAPER`` names (``letter`` when unset)."""
    paper = os.environ.get(PAPER_ENV, "").strip().lower() or "letter"
    if paper not in PAPERS:
        raise ValueError(f"{PAPER_ENV}={paper!r}: the PDF's paper is one of {', '.join(PAPERS)} "
                         "(make pdf PAPER=a4)")
    return PAPERS[paper]


def configure(app) -> None:
    """LaTeX settings: the paper, the numbering commands, page references, the two lists."""
    if app.builder.name != "latex":
        return
    # the paper: the LaTeX theme reads it from latex_elements when the document is written
    app.config.latex_elements = {**app.config.latex_elements, "papersize": paper_size()}
    context = app.builder.context  # latex_elements, as the builder has read them
    context["preamble"] = context.get("preamble", "") + PREAMBLE
    context["sphinxsetup"] = ", ".join(filter(None, [context.get("sphinxsetup"), VERBATIM]))
    context["tableofcontents"] = (
        context.get("tableofcontents", r"\sphinxtableofcontents") + "\n" + lists_latex()
    )
    app.config.latex_show_pagerefs = True


def setup(app):
    app.connect("builder-inited", configure)
    app.add_node(first_use, latex=(visit_first_use, depart_first_use))
    app.add_post_transform(PrintedBook)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
