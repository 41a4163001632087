"""The built HTML book served as a web host serves it: text compressed with gzip.

    python -m tools.book.serve _build/html --port 8123 [--plain]

Serves a folder on 127.0.0.1 until stopped (a signal): a file of text (HTML, CSS, scripts,
SVG, JSON) goes out gzip-compressed to a client that accepts it (``Accept-Encoding``), with
``Vary: Accept-Encoding``, each file compressed once while it is unchanged; anything else,
a folder's listing or a redirect as the standard library's server sends it. With
``--plain``, every file goes out as it is (a page weighs what its files weigh). No line is
logged per request.

:class:`Host` runs it as a process of its own on a free port (``tools.common.ports``),
waits until it answers, and stops it by its PID: compressed for Lighthouse in ``make
bench`` (``benchmarks/lighthouse.py``, a page weighed as a reader's browser receives it),
plain for the browser tests and the first-load benchmark (``tests/support/site_browser.py``,
the fixture ``site`` of ``tests/conftest.py``, ``benchmarks/book_weight.py``).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tools import ROOT
from tools.common.ports import free_port

#: gzip's level (a web host's usual one)
LEVEL = 6
COMPRESSED = {".html", ".css", ".js", ".mjs", ".svg", ".json", ".txt", ".xml", ".map", ".inv"}


class PlainHandler(http.server.SimpleHTTPRequestHandler):
    """The standard library's file handler, without a line logged per request."""

    def log_message(self, *args):
        pass


class GzipHandler(PlainHandler):
    """:class:`PlainHandler`, text compressed with gzip when accepted."""

    packed: dict[tuple[str, int, int], bytes] = {}  # (path, mtime, size) -> gzip body

    def do_GET(self):  # noqa: N802 (the standard library's name)
        body = self._gzipped()
        if body is None:
            return super().do_GET()
        self.wfile.write(body)

    def do_HEAD(self):  # noqa: N802
        if self._gzipped() is None:
            super().do_HEAD()

    def _gzipped(self) -> bytes | None:
        """Headers sent and the gzip body returned for a text file the client accepts
        compressed; None, nothing sent, for anything else."""
        if "gzip" not in self.headers.get("Accept-Encoding", ""):
            return None
        path = Path(self.translate_path(self.path))
        if path.is_dir() and self.path.split("?")[0].endswith("/"):
            path = path / "index.html"
        if path.suffix not in COMPRESSED or not path.is_file():
            return None
        stat = path.stat()
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        if key not in self.packed:
            self.packed[key] = gzip.compress(path.read_bytes(), compresslevel=LEVEL)
        body = self.packed[key]
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return body


class Host:
    """``folder`` served by this module in a process of its own on a free port of 127.0.0.1,
    answering once made, until :meth:`stop` (by its PID). ``url`` ends with a slash.
    ``compress=False``: every file as it is (``--plain``)."""

    def __init__(self, folder: Path, compress: bool = True, timeout: float = 30.0) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tools.book.serve", str(folder), "--port", str(port)]
            + ([] if compress else ["--plain"]), cwd=ROOT)
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(self.url, timeout=2).close()
                return
            except (urllib.error.URLError, ConnectionError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"tools.book.serve did not answer on {self.url}")
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--plain", action="store_true",
                        help="every file as it is, nothing compressed")
    args = parser.parse_args(argv)
    handler = functools.partial(PlainHandler if args.plain else GzipHandler,
                                directory=os.fspath(args.folder.resolve()))
    with http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler) as server:
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
