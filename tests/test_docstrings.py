"""Module docstrings (memkit, tools and the tests' and benchmarks' support, tests/support)
say what the code does now: no dependency lists ("Depends on", which
the import graph says and tests/test_import_graph.py checks), no issue numbers, no CI
runs. History lives in CHANGELOG.md and git log.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HISTORY = re.compile(r"Depends on|\b[Ii]ssues? \d+|(?<![\w&/])#\d+\b|\bCI runs?\b")
BASES = ("memkit", "tools", "tests/support")
MODULES = sorted(p for base in BASES for p in (ROOT / base).rglob("*.py")
                 if "__pycache__" not in p.parts)


def history_in(source: str) -> list[str]:
    """What the module docstring of ``source`` says of history or dependencies."""
    doc = ast.get_docstring(ast.parse(source), clean=False) or ""
    return [m.group(0) for m in HISTORY.finditer(doc)]


@pytest.mark.parametrize("doc,found", [
    ('"""Screening (issue 16)."""', ["issue 16"]),
    ('"""Fixed in #123, the CI run of May."""', ["#123", "CI run"]),
    ('"""Stage: none. Depends on: tools.grading.cells."""', ["Depends on"]),
    ('"""A colour #fff, an anchor page.html#intro, ``&#39;``, 3 issues raised."""', []),
    ('"""What the draw depends on: its parts."""', []),
    ('x = 1\n"""Issue 5: not the module docstring."""', []),
])
def test_the_pattern_finds_history_only(doc, found):
    assert history_in(doc) == found


def test_every_module_of_memkit_tools_and_the_support_is_checked():
    assert len(MODULES) > 100
    assert {p.relative_to(ROOT).parts[0] for p in MODULES} == {"memkit", "tools", "tests"}
    assert ROOT / "tests" / "support" / "simulate" / "classroom.py" in MODULES


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_docstrings_carry_no_history_or_dependency_list(path):
    assert history_in(path.read_text()) == []
