"""Drop the book's execution cache when memkit has changed since it was filled.

Jupyter Book caches each chapter's outputs keyed on the chapter's own text, so a
change to memkit (a helper, a figure) would leave every cached chapter showing
outputs of the old code. Before a build this script hashes memkit's sources and,
if the hash differs from the one stored beside the cache, deletes the cache, so
that the next build executes every chapter again with the new code.

It then executes, in parallel (one kernel per core, jupyter-cache's ``local-parallel``
executor), every chapter of _toc.yml whose outputs are not in the cache yet, reading
them with MyST-NB's own reader so that the build finds them there: Jupyter Book alone
executes one chapter after another.

The kernels it starts keep their own log to themselves (``_build/jupyter/kernels``, a
kernel spec of this Python's ipykernel with its log level at CRITICAL, and the kernel
process's own standard error appended to ``_build/jupyter/kernels.log``): each one
otherwise prints a warning about TCP without encryption, the interrupt jupyter_client sends
before every shutdown now and then lands in a message handler, which logs an alarming
"ERROR | KeyboardInterrupt caught in kernel" that no chapter caused, and two kernels
started at once in a loaded machine can race for a port, which prints the losing kernel's
heartbeat traceback (that chapter is then run again on its own, below). A chapter's own
errors and printed warnings reach the build through its outputs, as before.

    python tools/book/execution_cache.py      # run by make book, make pdf and the tests
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import shutil
import sys

from tools.book.toc import toc_files
from tools import ROOT

CACHE = ROOT / "_build" / ".jupyter_cache"
KERNELS = ROOT / "_build" / "jupyter"  # a Jupyter data folder: kernels/python3/kernel.json
STAMP = ROOT / "_build" / ".jupyter_cache.memkit-sha256"
DOCTREES = ROOT / "_build" / ".doctrees"
#: how MyST-NB reads a chapter (the cache matches notebooks by what this reader gives)
MYST_READER = {"type": "plugin", "name": "myst_nb_md"}
TIMEOUT = 300  # seconds per cell, as _config.yml's execute.timeout


def memkit_hash() -> str:
    """SHA-256 over the paths and contents of every Python file of memkit."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "memkit").rglob("*.py")):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def clear_if_memkit_changed() -> None:
    current = memkit_hash()
    if STAMP.exists() and STAMP.read_text().strip() == current:
        return
    if CACHE.exists():
        shutil.rmtree(CACHE)
        # Sphinx keeps each chapter's parsed outputs in its environment and reads a chapter
        # again only when its text changes: drop that too, or the old outputs come back
        shutil.rmtree(DOCTREES, ignore_errors=True)
        print("memkit changed since the last build: execution cache cleared")
    STAMP.parent.mkdir(parents=True, exist_ok=True)
    STAMP.write_text(current + "\n")


def chapters() -> list[pathlib.Path]:
    """The MyST notebooks of _toc.yml (every page of the book)."""
    return [ROOT / f"{name}.md" for name in toc_files(ROOT)]


def quiet_kernel(data: pathlib.Path = KERNELS) -> None:
    """Make the chapters' kernel ``python3`` (their front matter's) this Python's ipykernel
    with its own log quiet, for the kernels this process and its workers start."""
    log = data / "kernels.log"
    spec = {  # sh execs the kernel (same process, so jupyter_client's signals reach it)
        "argv": ["/bin/sh", "-c", 'exec "$0" -m ipykernel_launcher -f "$1" '
                 '--IPKernelApp.log_level=CRITICAL 2>>"$2"',
                 sys.executable, "{connection_file}", str(log)],
        "display_name": "Python 3",
        "language": "python",
    }
    folder = data / "kernels" / "python3"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        [str(data)] + [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p])


def one_per_hash(cache, records: list) -> list:
    """The first of the project records whose notebooks share jupyter-cache's hash key.

    The key covers a notebook's code cells only, so the pages without code (the start page,
    the session pages, the glossary) share one; executed at once, two of them would both
    create its folder in the cache (FileExistsError in jupyter-cache). Once one is cached,
    the cache answers for all of them.
    """
    first = {}
    for record in records:
        _, key = cache.create_hashed_notebook(cache.get_project_notebook(record.pk).nb)
        first.setdefault(key, record)
    return list(first.values())


def execute_in_parallel() -> None:
    """Execute the chapters missing from the cache, one kernel per core.

    A chapter that fails here is left out of the cache; the strict build then runs it
    again on its own and reports the error with its traceback.
    """
    from jupyter_cache import get_cache
    from jupyter_cache.executors import load_executor

    os.environ.setdefault("MPLBACKEND", "Agg")
    cache = get_cache(str(CACHE))
    records = [cache.add_nb_to_project(str(path), read_data=MYST_READER) for path in chapters()]
    stale = one_per_hash(cache, [r for r in records if cache.get_cached_project_nb(r.pk) is None])
    if not stale:
        return
    quiet_kernel()
    print(f"executing {len(stale)} chapter(s) in parallel ...", flush=True)
    result = load_executor("local-parallel", cache).run_and_cache(
        filter_pks=[r.pk for r in stale], timeout=TIMEOUT
    )
    failed = [r.pk for r in stale if r.uri in result.excepted + result.errored]
    if failed:  # two kernels starting at once can race for a port: once more, one at a time
        result = load_executor("local-serial", cache).run_and_cache(
            filter_pks=failed, timeout=TIMEOUT
        )
        for uri in result.excepted + result.errored:
            print(f"  failed (the build will show why): {os.path.relpath(uri, ROOT)}",
                  file=sys.stderr)


def main() -> None:
    clear_if_memkit_changed()
    execute_in_parallel()


if __name__ == "__main__":
    main()
