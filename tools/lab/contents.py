"""The course's JupyterLab reads a chapter as the book does, and saving it changes nothing.

Jupytext opens a chapter (``book/*.md``, a MyST notebook) as a notebook; JupyterLab's MyST
renderer (jupyterlab-myst) then draws its boxes and maths. Three things of the book it
cannot know, since they live in other files or in Sphinx extensions; this contents
manager supplies them when a chapter is *opened* and takes them out again when it is
*saved*:

* status badges ``{bdg-success-line}`derived``` become ``{span .bdg-success-line}`...```,
  which the renderer keeps as a styled span (``jupyter/custom/custom.css``);
* a cross-reference to another chapter, ``{ref}`Chapter 4 <ch04>```, becomes a link to
  that chapter's file (a click opens it in the lab, as a notebook);
* glossary terms ``{term}`key``` resolve within the notebook: a last cell, generated,
  lists the glossary's entries for the terms the chapter uses (hover or click a term);
* a passage written twice, ``{only} html`` for the screen and ``{only} latex`` for the
  printed book (what the picture of a figure's default state shows, where the screen says
  to drag), becomes a ``{div}`` of class ``memcourse-only-html`` or ``memcourse-only-latex``
  (the renderer has no ``only``); the lab's CSS hides the printed one;
* a substitution ``{{ name }}`` (the repository's address, a session's time) is filled in
  with what the book's extensions give it (``tools.book.take_away.address_texts`` from
  ``repository.url`` of the ``_config.yml`` beside ``book/``, ``tools.book.study_time.texts``
  counted from that course folder), and put back on saving.

A chapter is a ``.md`` file beside the book's glossary (``appendix-e-glossary.md``), and
its glossary and labels are that folder's: the course's ``book/``, or a student's own copy
of it on a hub (``~/book``), where the lab's files live elsewhere. A chapter is sent with
the ``language_info`` its kernel reports (ipykernel's), which JupyterLab would otherwise
add on opening (and the kernel again on starting), marking the chapter modified before
any edit; so is every other notebook (``start.md``, an assignment) whose ``language_info``
only abbreviates the kernel's.

Saving: the generated cell is dropped and every changed cell is put back as it was
written; when no cell's text differs from the file, the file is not written at all (a
run, an autosave, a kernel renamed ... change nothing). When the student did edit a
cell, the file is written by Jupytext and its front matter and layout are kept as they
were, so the diff holds only the student's edits.
"""

from __future__ import annotations

import copy
import functools
import os
import re
from pathlib import Path

import jupytext
import nbformat
from tools import ROOT

BOOK = ROOT / "book"
GLOSSARY_NAME = "appendix-e-glossary.md"
GLOSSARY = BOOK / GLOSSARY_NAME
MARK = "memcourse"  # cell metadata key of what this module adds

BADGE = re.compile(r"\{bdg-([a-z]+(?:-line)?)\}`")
BADGE_BACK = re.compile(r"\{span \.bdg-([a-z]+(?:-line)?)\}`")
# a number the book glues into the text from a code cell ({glue:text}`name:.2f`): the lab's
# MyST renderer has no glue, so the lab shows the value's name, marked as printed by a cell
GLUE = re.compile(r"\{glue:text\}`")
GLUE_BACK = re.compile(r"\{span \.memcourse-glue\}`")
# a passage for one builder (```{only} html): a div of its class in the lab, hidden by CSS
# when it is the printed book's
ONLY = re.compile(r"^(`{3,}|:{3,})\{only\} (html|latex)[ \t]*$", re.MULTILINE)
ONLY_BACK = re.compile(r"^(`{3,}|:{3,})\{div\}\n:class: memcourse-only-(html|latex)$", re.MULTILINE)
REF = re.compile(r"\{ref\}`(?:([^`<]*?)\s*<([^`<>]+)>|([^`<>]+))`")
LINK_TITLE = "opens in the lab"
REF_BACK = re.compile(r'\[([^\]]*)\]\(([\w.-]+\.md)#([\w-]+) "' + LINK_TITLE + r'"\)')
TERM = re.compile(r"\{term\}`(?:([^`<]*?)\s*<([^`<>]+)>|([^`<>]+))`")
LABEL = re.compile(r"^\(([\w-]+)\)=\s*$", re.MULTILINE)
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
SUBSTITUTION = re.compile(r"\{\{\s*([A-Za-z_][\w]*)\s*\}\}")


# -- what the book knows -----------------------------------------------------------
def labels(book: Path = BOOK) -> dict[str, str]:
    """label -> the file (name) of book/ that defines it."""
    found = {}
    for path in sorted(book.glob("*.md")):
        for label in LABEL.findall(path.read_text(encoding="utf-8")):
            found.setdefault(label, path.name)
    return found


def glossary(path: Path = GLOSSARY) -> dict[str, tuple[str, str]]:
    """lower-cased term -> (term as written, definition) from the book's Sphinx glossary."""
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    match = re.search(r"```\{glossary\}\n(.*?)\n```", text, re.DOTALL)
    if not match:
        return {}
    entries: dict[str, tuple[str, str]] = {}
    for terms, definition in _glossary_entries(match.group(1)):
        for term in terms:
            entries[term.lower()] = (term, definition)
    return entries


def _glossary_entries(body: str) -> list[tuple[list[str], str]]:
    """(terms, definition) pairs of a Sphinx glossary's body: term lines, then the
    indented definition (several term lines may share one definition)."""
    entries: list[tuple[list[str], str]] = []
    terms: list[str] = []
    lines: list[str] = []
    for line in body.splitlines() + ["END"]:
        if not line.strip() or line.startswith(":"):
            continue
        if line[0] not in " \t":
            if lines:
                entries.append((terms, " ".join(part.strip() for part in lines)))
                terms, lines = [], []
            terms.append(line.strip())
        else:
            lines.append(line)
    return entries


def substitutions(book: Path = BOOK) -> dict[str, str]:
    """name -> text of the book's MyST substitutions, for the course folder that holds
    ``book`` (its ``_config.yml``, ``_toc.yml``, chapters and release); {} where it has no
    ``_toc.yml`` (a folder of chapters alone)."""
    import yaml

    from tools.book import study_time, take_away

    root = Path(book).parent
    if not (root / "_toc.yml").is_file():
        return {}
    config = root / "_config.yml"
    settings = yaml.safe_load(config.read_text(encoding="utf-8")) if config.is_file() else {}
    url = str(((settings or {}).get("repository") or {}).get("url") or "")
    return {**take_away.address_texts(url), **study_time.texts(root)}


# -- the lab's view of a chapter ---------------------------------------------------
def _ref_to_link(match: re.Match, here: str, known: dict[str, str]) -> str:
    text, label = (match.group(1), match.group(2)) if match.group(2) else (None, match.group(3))
    target = known.get(label.strip())
    if target is None or target == here:
        return match.group(0)  # resolved in the notebook itself, or unknown: as written
    return f'[{text if text is not None else label}]({target}#{label} "{LINK_TITLE}")'


def _plain_terms(text: str) -> str:
    return TERM.sub(lambda m: m.group(1) if m.group(2) else m.group(3), text)


def to_lab(source: str, here: str, known: dict[str, str], values: dict[str, str] | None = None) -> str:
    """A markdown cell as the lab's MyST renderer can draw it (``values``: the
    substitutions' texts, :func:`substitutions`)."""
    if values:
        source = SUBSTITUTION.sub(lambda m: values.get(m.group(1), m.group(0)), source)
    source = BADGE.sub(r"{span .bdg-\1}`", source)
    source = GLUE.sub("{span .memcourse-glue}`", source)
    source = ONLY.sub(r"\1{div}\n:class: memcourse-only-\2", source)
    # a role's text broken over two lines is one line for the lab's MyST parser
    source = TERM.sub(lambda m: " ".join(m.group(0).split()) if "\n" in m.group(0) else m.group(0),
                      source)
    source = REF.sub(lambda m: _ref_to_link(m, here, known), source)
    if here == GLOSSARY_NAME:
        source = _glossary_for_myst(source)
    return source


def to_book(source: str, values: dict[str, str] | None = None) -> str:
    """The inverse of :func:`to_lab` for a cell the student edited (a substitution's text
    left whole becomes its ``{{ name }}`` again)."""
    source = BADGE_BACK.sub(r"{bdg-\1}`", source)
    source = GLUE_BACK.sub("{glue:text}`", source)
    source = ONLY_BACK.sub(r"\1{only} \2", source)
    source = REF_BACK.sub(lambda m: f"{{ref}}`{m.group(1)} <{m.group(3)}>`", source)
    for name, text in sorted((values or {}).items(), key=lambda item: -len(item[1])):
        if text:
            source = source.replace(text, f"{{{{ {name} }}}}")
    return source


def _glossary_for_myst(source: str) -> str:
    """Sphinx's glossary (term, indented definition) as MyST's definition list."""

    def convert(match: re.Match) -> str:
        out = []
        for terms, definition in _glossary_entries(match.group(1)):
            for term in terms:
                out += [term, ": " + definition, ""]
        return "```{glossary}\n" + "\n".join(out).rstrip() + "\n```"

    return re.sub(r"```\{glossary\}\n(.*?)\n```", convert, source, flags=re.DOTALL)


def terms_used(nb) -> list[str]:
    """The glossary targets the notebook's markdown links, in order of first use."""
    seen: dict[str, None] = {}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for m in TERM.finditer(cell.source):
                seen.setdefault((m.group(2) or m.group(3)).strip(), None)
    return list(seen)


def glossary_cell(nb, here: str, known: dict[str, str], book: Path = BOOK):
    """The generated last cell: the entries of ``book``'s glossary for the terms the chapter
    uses."""
    entries = glossary(book / GLOSSARY_NAME)
    lines = []
    for target in terms_used(nb):
        _, definition = entries.get(target.lower(), (target, "(not in the glossary yet)"))
        definition = REF.sub(lambda m: _ref_to_link(m, here, known), _plain_terms(definition))
        lines += [target, ": " + definition, ""]
    if not lines:
        return None
    text = (
        "**Terms used here**, from the "
        f'[glossary]({GLOSSARY_NAME} "{LINK_TITLE}") '
        "{span .memcourse-generated}`(added by the course's lab, not saved)`\n\n"
        "```{glossary}\n" + "\n".join(lines).rstrip() + "\n```"
    )
    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata[MARK] = "generated"
    cell.metadata["editable"] = False
    cell.metadata["deletable"] = False
    cell.pop("id", None)
    return cell


def is_chapter(path: str | os.PathLike, root: Path = ROOT) -> bool:
    """A MyST notebook of a book: a ``.md`` file beside the glossary (the only files this
    module touches)."""
    full = (root / path) if not os.path.isabs(path) else Path(path)
    return full.suffix == ".md" and (full.parent / GLOSSARY_NAME).is_file()


@functools.cache
def kernel_language_info() -> dict:
    """The ``language_info`` the course's kernel reports (ipykernel's, this Python's version)."""
    from ipykernel.ipkernel import IPythonKernel

    return copy.deepcopy(IPythonKernel.language_info)


def with_kernel_language_info(nb_json: dict) -> None:
    """The kernel's ``language_info`` in place of one it only abbreviates (missing, or
    ``{"name": "python"}`` as a release has it): what JupyterLab sets when the kernel
    starts, so an unedited notebook opens unmodified. One of another Python is kept."""
    meta = nb_json.setdefault("metadata", {})
    known, full = meta.get("language_info") or {}, kernel_language_info()
    if isinstance(known, dict) and all(full.get(k) == v for k, v in known.items()):
        meta["language_info"] = copy.deepcopy(full)


def _notebook(nb_json):
    nb = nbformat.from_dict(copy.deepcopy(nb_json))
    for cell in nb.cells:
        if isinstance(cell.source, list):
            cell.source = "".join(cell.source)
    return nb


def lab_view(nb_json: dict, path: str, book: Path = BOOK) -> dict:
    """The notebook JupyterLab is sent: badges, links and the glossary cell added (from the
    chapter's folder, ``book``), and the kernel's ``language_info``."""
    nb = _notebook(nb_json)
    here = Path(path).name
    known = labels(book)
    with_kernel_language_info(nb)
    values = _values_if_used(nb, book)
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        shown = to_lab(cell.source, here, known, values)
        if shown != cell.source:
            cell.metadata[MARK] = {"source": cell.source}
            cell.source = shown
    extra = glossary_cell(nb, here, known, book) if here != GLOSSARY_NAME else None
    if extra is not None:
        if nb.nbformat_minor >= 5:
            extra["id"] = "memcourse-terms"
        nb.cells.append(extra)
    nb.cells.insert(0, note_cell(nb.nbformat_minor >= 5))
    return nb


def _values_if_used(nb, book: Path) -> dict[str, str]:
    """The substitutions' texts for the names the markdown cells of ``nb`` use ({} when
    none): where the course folder cannot count one (a hub's copy has no ``_toc.yml``),
    a note that the HTML book's page gives it, one per name (so that saving puts it back)."""
    used = {m.group(1) for c in nb.cells if c.cell_type == "markdown"
            for m in SUBSTITUTION.finditer(c.source)}
    if not used:
        return {}
    known = substitutions(book)
    return {name: known.get(name) or f"*({name.replace('_', ' ')}: on this page of the HTML book)*"
            for name in sorted(used)}


def note_cell(with_id: bool):
    """The generated first cell: what this notebook is (and the chapter marker CSS uses)."""
    cell = nbformat.v4.new_markdown_cell(
        "{span .memcourse-chapter}`A chapter of the book, opened as a notebook: Run All to bring"
        " its figures to life. Saving keeps the chapter as the book has it, your edits aside.`"
    )
    cell.metadata[MARK] = "generated"
    cell.metadata["editable"] = False
    cell.metadata["deletable"] = False
    cell.pop("id", None)
    if with_id:
        cell["id"] = "memcourse-note"
    return cell


def book_view(nb_json: dict, path: str, book: Path = BOOK) -> dict:
    """The notebook as the book holds it: what :func:`lab_view` added taken out."""
    nb = _notebook(nb_json)
    here, known = Path(path).name, labels(book)
    originals = nbformat.from_dict({"cells": [
        nbformat.v4.new_markdown_cell(m["source"]) for c in nb.cells
        if isinstance(m := c.get("metadata", {}).get(MARK), dict) and "source" in m]})
    values = _values_if_used(originals, book)
    cells = []
    for cell in nb.cells:
        mark = cell.get("metadata", {}).pop(MARK, None)
        if mark == "generated":
            continue
        if isinstance(mark, dict) and cell.cell_type == "markdown":
            original = mark.get("source", "")
            unchanged = cell.source == to_lab(original, here, known, values)
            cell.source = original if unchanged else to_book(cell.source, values)
        elif cell.cell_type == "markdown":
            cell.source = to_book(cell.source, values)
        cells.append(cell)
    nb.cells = cells
    return nb


def same_text(a, b) -> bool:
    """Same cells (kind and text) in the same order: what the file stores of a chapter."""
    def key(nb):
        return [(c.cell_type, c.source.rstrip("\n"), tuple(c.get("metadata", {}).get("tags", [])))
                for c in nb.cells]
    return key(a) == key(b)


def keep_layout(written: str, original: str) -> str:
    """Jupytext's text of an edited chapter, with the file's own front matter and layout."""
    head = FRONT_MATTER.match(original)
    if head:
        written = FRONT_MATTER.sub(lambda _m: head.group(0), written, count=1)
    # Jupytext puts a blank line after a code cell's options; the book's files do not
    if not re.search(r"^```\{code-cell\}[^\n]*\n(?::[\w-]+:[^\n]*\n)+\n", original, re.MULTILINE):
        written = re.sub(r"(^```\{code-cell\}[^\n]*\n(?::[\w-]+:[^\n]*\n)+)\n(?=\S)", r"\1",
                         written, flags=re.MULTILINE)
    return written


# -- the contents manager ------------------------------------------------------------
def _manager_class():
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    from jupytext.async_contentsmanager import build_async_jupytext_contents_manager_class

    return build_async_jupytext_contents_manager_class(AsyncLargeFileManager)


class CourseContentsManager(_manager_class()):
    """Jupytext's contents manager, with the chapters shown and saved as described above."""

    def _file(self, path: str) -> Path:
        return Path(self.root_dir) / path.lstrip("/")

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        if not content or model.get("type") != "notebook":
            return model
        if is_chapter(self._file(path)):
            model["content"] = lab_view(model["content"], path, self._file(path).parent)
        else:
            with_kernel_language_info(model["content"])
        return model

    async def save(self, model, path=""):
        file = self._file(path)
        if model.get("type") != "notebook" or not model.get("content") or not is_chapter(file):
            return await super().save(model, path)
        nb = book_view(model["content"], path, file.parent)
        original = file.read_text(encoding="utf-8") if file.exists() else None
        if original is not None:
            on_disk = jupytext.reads(original, fmt="md:myst")
            if same_text(nb, on_disk):
                self.log.info("[memcourse] %s: no cell changed, the file is left as it is", path)
                return await self.get(path, content=False)
            nb.metadata = on_disk.metadata  # the front matter stays the file's own
        model = dict(model, content=nb)
        result = await super().save(model, path)
        if original is not None:
            written = file.read_text(encoding="utf-8")
            kept = keep_layout(written, original)
            if kept != written:
                file.write_text(kept, encoding="utf-8")
                result = await self.get(path, content=False)
        return result
