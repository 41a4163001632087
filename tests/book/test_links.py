"""No relative link of the book or of an assignment notebook leads nowhere.

Checked: Markdown links ``[text](target)`` (relative ones: no scheme, not a bare
``#anchor``) in ``book/*.md`` and in the Markdown cells of the notebooks under
``solutions/`` and ``exercises/``; ``{doc}`` targets; and ``{ref}`` / ``{numref}``
labels, which must be defined as ``(label)=`` somewhere in ``book/``. A link to a page of
the book must also point to a page the table of contents lists, since the book builds
only those (``only_build_toc_files``).
"""

import json
import pathlib
import re

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"

LINK = re.compile(r"(?<!\!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*([^)\s]+)[^)]*\)")
ROLE = re.compile(r"\{(doc|ref|numref)\}`([^`]*)`")
LABEL = re.compile(r"^\((?P<label>[^()\s]+)\)=\s*$", re.M)
FENCE = re.compile(r"^(`{3,}|~{3,})[ \t]*(.*?)[ \t]*$")
INLINE_CODE = re.compile(r"`[^`\n]*`")


def markdown_sources():
    """(path, text) of every Markdown source checked: chapters and notebook cells."""
    for path in sorted(BOOK.glob("*.md")):
        yield path, path.read_text()
    for folder in ("solutions", "exercises"):
        for path in sorted((ROOT / folder).rglob("*.ipynb")):
            if ".ipynb_checkpoints" in path.parts:  # JupyterLab's copies of a save
                continue
            nb = json.loads(path.read_text())
            cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "markdown"]
            text = "\n\n".join(
                "".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells
            )
            yield path, text


SOURCES = list(markdown_sources())


def defined_labels():
    return {m.group("label") for path in BOOK.glob("*.md") for m in LABEL.finditer(path.read_text())}


def toc_pages():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = {toc["root"]}
    for part in toc.get("parts", []):
        for chapter in part["chapters"]:
            pages.add(chapter["file"])
            pages.update(section["file"] for section in chapter.get("sections", []))
    return {(ROOT / p).with_suffix("").resolve() for p in pages}


def without_code(text):
    """The text with its code blocks and code cells blanked, line for line.

    A fence opens code when its info string is a language, nothing, or ``{code-cell}``;
    a directive's fence (``{admonition}``, ``{glossary}`` ...) holds prose, which stays.
    The fences are followed in order, so the bare fence that closes a box is not taken
    for the opening of a code block (a regular expression over the whole text would
    swallow the prose between that fence and the next one)."""
    out, open_fences = [], []  # (marker, holds code) of each fence still open
    for line in text.splitlines(keepends=True):
        fence = FENCE.match(line)
        if fence:
            marker, info = fence.groups()
            if open_fences and not info and marker.startswith(open_fences[-1][0]):
                open_fences.pop()
                out.append("\n")
                continue
            if not (open_fences and open_fences[-1][1]):
                is_code = not info.startswith("{") or info.startswith("{code-cell}")
                open_fences.append((marker, is_code))
                out.append("\n")
                continue
        out.append("\n" if any(code for _, code in open_fences) else line)
    return "".join(out)


def _prose(text):
    """The text without code: fenced blocks and code cells, but roles stay (they are checked)."""
    text = without_code(text)
    roles = ROLE.findall(text)
    return text, roles


def is_relative(target):
    return not re.match(r"^[a-zA-Z][\w+.-]*:", target) and not target.startswith(("#", "//"))


def role_target(role_text):
    explicit = re.search(r"<([^<>]*)>\s*$", role_text)
    return (explicit.group(1) if explicit else role_text).strip()


def broken_links(path, text, labels, pages):
    """Every link of one source that leads nowhere, as readable strings."""
    text, roles = _prose(text)
    without_code = INLINE_CODE.sub(" ", text)
    found = []
    targets = LINK.findall(without_code) + IMAGE.findall(without_code)
    for target in targets:
        if not is_relative(target):
            continue
        file_part = target.split("#", 1)[0].split("?", 1)[0]
        if not file_part:
            continue
        resolved = (path.parent / file_part).resolve()
        if not resolved.exists():
            found.append(f"link {target}: no such file")
        elif resolved.suffix == ".md" and resolved.is_relative_to(BOOK.resolve()):
            if resolved.with_suffix("") not in pages:
                found.append(f"link {target}: a page the table of contents does not list")
    for kind, role_text in roles:
        target = role_target(role_text)
        if kind == "doc":
            base = ROOT if target.startswith("/") else path.parent
            resolved = (base / target.lstrip("/")).resolve()
            candidates = [resolved] if resolved.suffix else [resolved.with_suffix(s) for s in (".md", ".ipynb")]
            if not any(c.exists() for c in candidates):
                found.append(f"{{doc}} {target}: no such page")
            elif resolved.with_suffix("") not in pages:
                found.append(f"{{doc}} {target}: a page the table of contents does not list")
        elif target not in labels:
            found.append(f"{{{kind}}} {target}: no label ({target})= in book/")
    return found


@pytest.mark.parametrize(
    "path, text", SOURCES, ids=[p.relative_to(ROOT).as_posix() for p, _ in SOURCES]
)
def test_no_relative_link_leads_nowhere(path, text):
    broken = broken_links(path, text, defined_labels(), toc_pages())
    assert not broken, f"{path.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_checker_finds_each_kind_of_broken_link(tmp_path):
    page = BOOK / "a-page.md"   # a pretend page of the book (never written)
    text = (
        "[ok](ch03-outer-product-memory.md#section) [gone](ch99-missing.md) "
        "[web](https://example.org/x.md) [anchor](#here) "
        "{ref}`Chapter 3 <ch03>` {ref}`nowhere <no-such-label>` {doc}`ch04-careful-writes` "
        "{doc}`ch98-missing` `[in code](not-a-link.md)`\n\n"
        "```python\n[in a block](not-a-link-either.md)\n```\n"
    )
    broken = broken_links(page, text, defined_labels(), toc_pages())
    assert broken == [
        "link ch99-missing.md: no such file",
        "{ref} no-such-label: no label (no-such-label)= in book/",
        "{doc} ch98-missing: no such page",
    ]


def test_the_checker_finds_a_page_left_out_of_the_toc(tmp_path):
    stray = BOOK / "ch03-outer-product-memory.md"
    pages = toc_pages() - {stray.with_suffix("").resolve()}
    broken = broken_links(BOOK / "x.md", "[three](ch03-outer-product-memory.md)", defined_labels(), pages)
    assert broken == ["link ch03-outer-product-memory.md: a page the table of contents does not list"]


def test_every_notebook_and_chapter_is_checked():
    names = {p.relative_to(ROOT).as_posix() for p, _ in SOURCES}
    assert "book/ch17-exercises.md" in names and "solutions/session-9/exit-test.ipynb" in names
    assert any(n.startswith("exercises/session-9/") for n in names)


# ----------------------------------------------------------------- cited claims
#: the badge of a claim taken from a source (Chapter 0); it must name its source
CITED = "{bdg-info-line}`cited`"
#: the badge named rather than attached to a claim: in the legend of the tags ("cited: ...",
#: "cited (taken from ...)") or spoken of as a tag ("tagged cited", "every cited tag")
LEGEND = re.compile(r"(?:\btagged|\bevery)\s+" + re.escape(CITED)
                    + "|" + re.escape(CITED) + r"(?=\s*[:(]|\s+tags?\b)")
BADGE = re.compile(r"\{bdg-[a-z-]+\}`[^`]*`")
#: where a claim ends: a blank line, a new list item or table row, a fence
UNIT_BREAK = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*|]\s|\d+\.\s|```|:::))")
READING_LINK = re.compile(r"\{ref\}`[^`]*<(fr-[\w-]+)>`")


def reading_list_labels():
    text = (BOOK / "further-reading.md").read_text()
    return {label for label in LABEL.findall(text) if label.startswith("fr-")} - {"fr-not-opened"}


def unlinked_cited_claims(text, entries):
    """Each cited badge of a page whose claim (the rest of its paragraph, list item or table
    row, up to the next badge) has no {ref} to an entry of the reading list, as the first
    words of the claim."""
    text = without_code(text)
    found = []
    for unit in UNIT_BREAK.split(text):
        unit = LEGEND.sub(" ", unit)
        for start in [m.end() for m in re.finditer(re.escape(CITED), unit)]:
            following = BADGE.search(unit, start)
            claim = unit[start:following.start() if following else len(unit)]
            if not set(READING_LINK.findall(claim)) & entries:
                found.append(" ".join(claim.split())[:70])
    return found


@pytest.mark.parametrize("path", sorted(BOOK.glob("*.md")), ids=lambda p: p.name)
def test_every_cited_claim_links_to_its_reading_list_entry(path):
    unlinked = unlinked_cited_claims(path.read_text(), reading_list_labels())
    assert not unlinked, f"{path.name}: cited without a link to the reading list: {unlinked}"


def test_the_cited_checker_finds_a_claim_without_its_source():
    entries = {"fr-vaswani", "fr-olsson"}
    text = (
        "- {bdg-info-line}`cited`: the legend of the tags, not a claim.\n\n"
        "Claims tagged {bdg-info-line}`cited` in the legend's prose are not claims either.\n\n"
        "{bdg-info-line}`cited` {ref}`Vaswani et al. <fr-vaswani>` scale the logits.\n\n"
        "{bdg-info-line}`cited` Olsson et al. define induction heads.\n\n"
        "The link comes one paragraph too late: {ref}`Olsson et al. <fr-olsson>`.\n\n"
        "{bdg-info-line}`cited` A claim linked only to {ref}`a chapter <ch03>`.\n\n"
        "{bdg-info-line}`cited` A recalled source {ref}`elsewhere <fr-not-opened>`.\n\n"
        "{bdg-info-line}`cited` Olsson et al. say so. {bdg-success-line}`derived` Then "
        "{ref}`a link after another badge <fr-olsson>` belongs to that badge.\n\n"
        "| row | {bdg-info-line}`cited` a table row without it |\n"
        "| next row | {ref}`Olsson et al. <fr-olsson>` |\n\n"
        "```{code-cell} ipython3\nprint('{bdg-info-line}`cited` in code is no claim')\n```\n"
    )
    assert unlinked_cited_claims(text, entries) == [
        "Olsson et al. define induction heads.",
        "A claim linked only to {ref}`a chapter <ch03>`.",
        "A recalled source {ref}`elsewhere <fr-not-opened>`.",
        "Olsson et al. say so.",
        "a table row without it |",
    ]


def test_code_is_blanked_and_the_prose_between_boxes_kept():
    text = ("```{admonition} Goal\n:class: goal\nprose in a box\n```\n\nprose between\n\n"
            "```{code-cell} ipython3\nhidden = 1\n```\n\n````{admonition} Outer\n"
            "```python\nhidden_too = 2\n```\nprose after a nested block\n````\nlast words\n")
    kept = without_code(text)
    assert kept.count("\n") == text.count("\n")
    for prose in ["prose in a box", "prose between", "prose after a nested block", "last words"]:
        assert prose in kept
    assert "hidden" not in kept
