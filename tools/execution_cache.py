"""Drop the book's execution cache when memkit has changed since it was filled.

Jupyter Book caches each chapter's outputs keyed on the chapter's own text, so a
change to memkit (a helper, a figure) would leave every cached chapter showing
outputs of the old code. Before a build this script hashes memkit's sources and,
if the hash differs from the one stored beside the cache, deletes the cache, so
that the next build executes every chapter again with the new code.

    python tools/execution_cache.py      # run by make book, make pdf and the tests
"""

from __future__ import annotations

import hashlib
import pathlib
import shutil

ROOT = pathlib.Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".jupyter_cache"
STAMP = ROOT / "_build" / ".jupyter_cache.memkit-sha256"


def memkit_hash() -> str:
    """SHA-256 over the paths and contents of every Python file of memkit."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "memkit").rglob("*.py")):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def main() -> None:
    current = memkit_hash()
    if STAMP.exists() and STAMP.read_text().strip() == current:
        return
    if CACHE.exists():
        shutil.rmtree(CACHE)
        print("memkit changed since the last build: execution cache cleared")
    STAMP.parent.mkdir(parents=True, exist_ok=True)
    STAMP.write_text(current + "\n")


if __name__ == "__main__":
    main()
