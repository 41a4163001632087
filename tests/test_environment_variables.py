"""The registry of environment variables (``tools.common.environment``) and the repository
agree: every ``MEMCOURSE_*`` name that the course's own files read or set has an entry,
every entry's name is still in the code, and docs/maintainer.md shows the registry's table
exactly as ``table()`` renders it."""

import functools
import re

from support import ROOT
from tools.common import environment

NAME = re.compile(r"MEMCOURSE_[A-Z0-9_]+")
# the course's own files: those of the root, and of these folders
FOLDERS = ("tools", "memkit", "jupyter", "tests", "benchmarks", ".ci", "binder", "docs")
SKIPPED = {".venv", "_build", ".git", "__pycache__"}
REGISTRY = ROOT / "tools" / "common" / "environment.py"
GUIDE = ROOT / "docs" / "maintainer.md"
SECTION = "## Environment variables\n"


def text_of(path) -> str | None:
    """The file's text, or None for a binary file (a NUL byte in its first 8 KB)."""
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


@functools.cache
def names_by_file() -> dict:
    """{path: the ``MEMCOURSE_*`` names its text holds} for each text file that holds one."""
    paths = [p for p in ROOT.iterdir() if p.is_file()]
    for folder in FOLDERS:
        paths += [p for p in (ROOT / folder).rglob("*")
                  if p.is_file() and not SKIPPED & set(p.relative_to(ROOT).parts)]
    found = {}
    for path in sorted(paths):
        text = text_of(path)
        names = set(NAME.findall(text)) if text is not None else set()
        if names:
            found[path] = names
    return found


def is_code(path) -> bool:
    """Not documentation (docs/, a Markdown page) and not the registry itself."""
    return path != REGISTRY and path.suffix != ".md" and "docs" not in path.relative_to(ROOT).parts


def registered() -> set[str]:
    return {variable.name for variable in environment.VARIABLES}


def test_every_variable_the_repository_names_is_registered():
    missing = {}
    for path, names in names_by_file().items():
        for name in names - registered():
            missing.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert names_by_file(), "the scan found no MEMCOURSE_* name at all"
    assert not missing, f"not in tools/common/environment.py's VARIABLES: {missing}"


def test_every_registered_variable_is_still_in_the_code():
    in_code = set().union(*(names for path, names in names_by_file().items() if is_code(path)))
    stale = registered() - in_code
    assert not stale, f"registered, but read or set nowhere in the code any more: {stale}"


def test_the_registry_is_sorted_by_name_each_name_once():
    names = [variable.name for variable in environment.VARIABLES]
    assert names == sorted(set(names))


def test_the_maintainers_guide_shows_the_registrys_table():
    text = GUIDE.read_text()
    assert SECTION in text, f"{GUIDE.name} has no section {SECTION.strip()!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    shown = "\n".join(line for line in section.splitlines() if line.startswith("|"))
    assert shown == environment.table(), (
        "docs/maintainer.md's table differs from tools.common.environment.table(): paste "
        "the function's output there")
