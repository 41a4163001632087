"""Every picture of the built pages has its size written (tools/book/stable_layout.py), so
that the layout keeps its room before it arrives."""

from __future__ import annotations

import re
import urllib.parse

from PIL import Image

from tools.book.stable_layout import sized
from tools.book.toc import toc_files


def test_every_picture_of_the_pages_has_its_files_size(built_book):
    pictures = 0
    for name in toc_files():
        page = built_book / f"{name}.html"
        for tag in re.findall(r"<img\b[^>]*>", page.read_text()):
            source = re.search(r'\ssrc="([^"]+)"', tag).group(1)
            if "_images/" not in source:
                continue
            with Image.open(page.parent / urllib.parse.unquote(source)) as picture:
                width, height = picture.size
            assert f'width="{width}" height="{height}"' in tag, (name, tag[:200])
            pictures += 1
    assert pictures >= 20


def test_a_tag_is_sized_once_and_only_for_the_sites_pictures(tmp_path):
    (tmp_path / "_images").mkdir()
    (tmp_path / "book").mkdir()
    Image.new("RGB", (320, 90)).save(tmp_path / "_images" / "a b.png")
    page = tmp_path / "book" / "page.html"
    tag = '<img alt="a figure" loading="lazy" src="../_images/a%20b.png" />'
    once = sized(tag, page, tmp_path)
    assert once == '<img alt="a figure" loading="lazy" src="../_images/a%20b.png" width="320" height="90" />'
    assert sized(once, page, tmp_path) == once
    logo = '<img alt="logo" src="../_static/logo.svg">'
    assert sized(logo, page, tmp_path) == logo
    assert sized('<img src="../_images/gone.png">', page, tmp_path) == '<img src="../_images/gone.png">'
