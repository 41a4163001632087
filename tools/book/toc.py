"""The book's table of contents (_toc.yml), read in one place.

    from tools.book.toc import toc_files, toc_captions
    toc_files()      # ["book/index", "book/prologue", ...]: every page, in reading order
    toc_captions()   # ["Start here", "Session 1 · Matrices", ...]: the parts
    toc_parts()      # [("Start here", ["book/prologue", ...]), ...]: each part's pages
"""

from __future__ import annotations

from pathlib import Path

import yaml
from tools import ROOT



def _toc(root: Path) -> dict:
    return yaml.safe_load((Path(root) / "_toc.yml").read_text())


def toc_files(root: Path = ROOT) -> list[str]:
    """The pages of _toc.yml in reading order, the root first (names without ``.md``)."""
    toc = _toc(root)
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            files.append(chapter["file"])
            files.extend(section["file"] for section in chapter.get("sections", []))
    return files


def toc_parts(root: Path = ROOT) -> list[tuple[str, list[str]]]:
    """Each captioned part of the toc and its chapters' pages, in order."""
    return [(part["caption"], [c["file"] for c in part.get("chapters", [])])
            for part in _toc(root).get("parts", []) if part.get("caption")]


def toc_captions(root: Path = ROOT) -> list[str]:
    """The captions of the toc's parts (the sessions, the front and back matter)."""
    return [part["caption"] for part in _toc(root).get("parts", []) if part.get("caption")]
