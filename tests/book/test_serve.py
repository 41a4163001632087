"""The book served as a web host serves it (tools/book/serve.py): a process of its own on a
free port, text gzip-compressed for a client that accepts it, anything else as it is; with
``compress=False`` (the browser tests' server), every file as it is."""

from __future__ import annotations

import gzip
import urllib.request

import pytest

from tools.book.serve import Host


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    (folder / "page.html").write_text("<p>" + "a formula, and another " * 200 + "</p>")
    (folder / "book").mkdir()
    (folder / "book" / "index.html").write_text("<p>start</p>")
    (folder / "frame.webp").write_bytes(bytes(range(256)) * 4)
    served = Host(folder)
    yield served, folder
    served.stop()
    assert served.process.poll() is not None


def get(url: str, gzip_ok: bool):
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gzip_ok else {})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.headers, answer.read()


def test_text_goes_out_compressed_to_a_client_that_accepts_it(host):
    served, folder = host
    headers, body = get(served.url + "page.html", gzip_ok=True)
    assert headers["Content-Encoding"] == "gzip" and headers["Vary"] == "Accept-Encoding"
    assert headers["Content-Type"].startswith("text/html")
    assert int(headers["Content-Length"]) == len(body) < (folder / "page.html").stat().st_size / 5
    assert gzip.decompress(body) == (folder / "page.html").read_bytes()
    # a folder's index, as its URL ending with a slash names it
    headers, body = get(served.url + "book/", gzip_ok=True)
    assert gzip.decompress(body) == b"<p>start</p>"


def test_anything_else_goes_out_as_it_is(host):
    served, folder = host
    headers, body = get(served.url + "page.html", gzip_ok=False)
    assert headers["Content-Encoding"] is None and body == (folder / "page.html").read_bytes()
    headers, body = get(served.url + "frame.webp", gzip_ok=True)
    assert headers["Content-Encoding"] is None and body == (folder / "frame.webp").read_bytes()


def test_plain_sends_every_file_as_it_is_even_to_a_client_that_accepts_gzip(tmp_path):
    (tmp_path / "page.html").write_text("<p>" + "a formula, and another " * 200 + "</p>")
    served = Host(tmp_path, compress=False)
    try:
        headers, body = get(served.url + "page.html", gzip_ok=True)
    finally:
        served.stop()
    assert headers["Content-Encoding"] is None and body == (tmp_path / "page.html").read_bytes()
    assert served.process.poll() is not None
