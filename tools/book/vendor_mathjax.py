"""Put MathJax 3 where the HTML book serves it from itself, not from a CDN.

The package comes from the npm registry (``npm pack``), at the version pinned
below, and lands in ``_build/offline/mathjax/``. ``_config.yml`` lists
``_build/offline`` in ``html_extra_path``, so Sphinx copies it to
``_build/html/mathjax/`` (outside ``_static/``, whose scripts Jupyter Book would add
to every page), and ``mathjax_path`` points the pages at it.

The package's entry for Node, ``es5/node-main.js``, lands beside it in
``_build/mathjax-node/``, outside what Sphinx copies: ``tools/book/typeset_maths.js`` runs
it at build time, with the components of ``_build/offline/mathjax/``, to typeset every
formula of the pages into SVG.

Run it before a build (``make book`` and the test fixture do); it does nothing when
the pinned version is already in place.

    python tools/book/vendor_mathjax.py [--dest _build/offline/mathjax]
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import sys
import tarfile
import tempfile
from tools import ROOT, npm

VERSION = "3.2.2"
DEST = ROOT / "_build" / "offline" / "mathjax"
ENTRY = "startup.js"
#: the entry for Node (``require``), kept out of ``DEST``: no page loads it
NODE_ENTRY = "node-main.js"
# es5/ holds a dozen combined bundles; the book loads none of them but ENTRY, the loader,
# which fetches the components _config.yml names (mathjax3_config) from the folders, and
# the TeX extensions and fonts a page needs. latest.js is left out too: it would look for
# a newer MathJax on a CDN. NODE_ENTRY is unpacked to node_entry(dest), not into dest.
SKIPPED_BUNDLES = {
    "tex-mml-chtml.js",
    "tex-chtml.js",
    "tex-chtml-full.js",
    "tex-chtml-full-speech.js",
    "tex-svg.js",
    "tex-svg-full.js",
    "tex-mml-svg.js",
    "mml-chtml.js",
    "mml-svg.js",
    NODE_ENTRY,
    "latest.js",
}


def stamp_text() -> str:
    """What VERSION holds: the version and what was left out, so a change refetches."""
    return f"{VERSION}\nwithout: {' '.join(sorted(SKIPPED_BUNDLES))}\n"


def node_entry(dest: pathlib.Path = DEST) -> pathlib.Path:
    """Where the entry for Node of the MathJax in ``dest`` is: ``<dest's _build>/mathjax-node``."""
    return dest.parent.parent / "mathjax-node" / NODE_ENTRY


def in_place(dest: pathlib.Path) -> bool:
    stamp = dest / "VERSION"
    return ((dest / ENTRY).is_file() and node_entry(dest).is_file() and stamp.is_file()
            and stamp.read_text() == stamp_text())


def unpack(archive: pathlib.Path, dest: pathlib.Path) -> None:
    """Copy package/es5 (less the unused bundles) and the licence into dest, and the entry
    for Node to node_entry(dest)."""
    staging = dest.with_name(dest.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            parts = pathlib.PurePosixPath(member.name).parts
            if parts == ("package", "es5", NODE_ENTRY):
                node = node_entry(dest)
                node.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(member) as source, open(node, "wb") as sink:
                    shutil.copyfileobj(source, sink)
                continue
            if parts[:2] == ("package", "es5"):
                relative = pathlib.PurePosixPath(*parts[2:])
            elif parts == ("package", "LICENSE"):
                relative = pathlib.PurePosixPath("LICENSE")
            else:
                continue
            if ".." in relative.parts or (
                len(relative.parts) == 1 and relative.name in SKIPPED_BUNDLES
            ):
                continue
            target = staging.joinpath(*relative.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as source, open(target, "wb") as sink:
                shutil.copyfileobj(source, sink)
    if not (staging / ENTRY).is_file():
        raise SystemExit(f"vendor_mathjax: {archive.name} has no es5/{ENTRY}")
    (staging / "VERSION").write_text(stamp_text())
    shutil.rmtree(dest, ignore_errors=True)
    staging.rename(dest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=pathlib.Path, default=DEST)
    dest = parser.parse_args(argv).dest.resolve()
    if in_place(dest):
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        result = npm(["pack", f"mathjax@{VERSION}", "--silent"], pathlib.Path(tmp))
        archives = sorted(pathlib.Path(tmp).glob("mathjax-*.tgz"))
        if result.returncode != 0 or not archives:
            raise SystemExit(f"vendor_mathjax: npm pack mathjax@{VERSION} failed:\n{result.stderr}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        unpack(archives[0], dest)
    print(f"MathJax {VERSION} in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
