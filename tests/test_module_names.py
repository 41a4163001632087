"""No two modules of different roles share a name: ``scores`` is memkit's, the lab's page
is ``scores_page``; one name, one meaning, whichever package a reader starts from.

A role is memkit, one package of tools/ (book, common, grading, hub, lab, release), or the
tests' and benchmarks' support (tests/support: ``simulate``, ``site_browser``, ...);
inside one role, two modules may share a stem (a package's ``report`` beside the stage
``report``), since their package says which is which.
"""

from __future__ import annotations

import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def role(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).parts
    return parts[0] if parts[0] == "memkit" else ".".join(parts[:2])


def shared_stems(paths) -> dict[str, list[str]]:
    """{stem: its files} for every stem found in more than one role."""
    found = collections.defaultdict(set)
    for path in paths:
        if path.stem not in ("__init__", "__main__"):
            found[path.stem].add(path)
    return {stem: sorted(str(p.relative_to(ROOT)) for p in where)
            for stem, where in found.items() if len({role(p) for p in where}) > 1}


def test_the_finder_tells_roles_apart():
    lab, kit = ROOT / "tools" / "lab" / "scores.py", ROOT / "memkit" / "scores.py"
    assert shared_stems([lab, kit]) == {"scores": ["memkit/scores.py", "tools/lab/scores.py"]}
    inner = ROOT / "tools" / "grading" / "calibration" / "report.py"
    assert shared_stems([inner, ROOT / "tools" / "grading" / "report.py"]) == {}


def test_no_two_modules_of_different_roles_share_a_stem():
    paths = [p for base in ("memkit", "tools", "tests/support") for p in (ROOT / base).rglob("*.py")
             if "__pycache__" not in p.parts]
    assert len({role(p) for p in paths}) >= 8 and "tests.support" in {role(p) for p in paths}
    assert shared_stems(paths) == {}
