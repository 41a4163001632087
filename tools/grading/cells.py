"""Notebook cells as data: the helpers every stage of grading reads notebooks with.

Stage: none (the bottom layer).
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

TRUNCATED = "... Output truncated ..."


def cell_text(cell: dict) -> str:
    """A cell's source as one string (a list of strings joined; anything else is no text)."""
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def new_cell(cell_type: str, source: str, metadata: dict, cell_id: str):
    if cell_type == "code":
        cell = nbformat.v4.new_code_cell(source, metadata=metadata)
    elif cell_type == "markdown":
        cell = nbformat.v4.new_markdown_cell(source, metadata=metadata)
    else:
        cell = nbformat.v4.new_raw_cell(source, metadata=metadata)
    cell["id"] = cell_id
    return cell


def read_nb(path: Path) -> dict:
    return json.loads(Path(path).read_text())
