"""Each session's expected time is counted from its material and shown where a student looks:
its session page and Chapter 0's table (tools/book/study_time.py, substitutions of the build)."""

from __future__ import annotations

import json
import pathlib
import re

from tools.book import study_time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_prose_words_leave_out_front_matter_code_and_displayed_maths():
    text = ("---\nkernelspec:\n  name: python3\n---\n(target)=\n# Two words\n\n"
            "```{code-cell} ipython3\nthese five words are code\n```\n\n"
            "$$\na + b = c\n$$\n\nThree more {term}`words <word>` with $x^2$ here.\n"
            "```{admonition} Keep\n:class: keep\nlast\n```\n")
    # "Two words", "Three more words with <x> here", "admonition Keep", "last"
    assert study_time.prose_words(text) == 2 + 6 + 2 + 1


def test_figures_and_points_are_counted_from_the_chapters_and_the_release():
    times = {t.number: t for t in study_time.session_times(ROOT)}
    assert sorted(times) == list(range(1, 10))
    for number, _, pages in study_time.sessions(ROOT):
        texts = [(ROOT / f"{p}.md").read_text() for p in pages]
        calls = sum(len(re.findall(r'^figures\.get\("[a-z0-9-]+"\)$', t, re.M)) for t in texts)
        assert times[number].figures == calls
        points = 0.0
        for path in (ROOT / "exercises" / f"session-{number}").glob("*.ipynb"):
            for cell in json.loads(path.read_text())["cells"]:
                meta = cell["metadata"].get("nbgrader", {})
                points += float(meta.get("points", 0)) if meta.get("grade") else 0
        assert times[number].points == points > 0
        assert times[number].words > 1000


def test_the_times_grow_with_the_material_and_are_rounded_up():
    small = study_time.SessionTime(1, "t", words=1, figures=0, points=0)
    big = study_time.SessionTime(1, "t", words=30 * study_time.WORDS_PER_MINUTE + 1,
                                 figures=2, points=10)
    assert (small.reading, small.watching, small.exercising) == (study_time.STEP, 0, 0)
    assert big.reading == 35 and big.watching == 2 * study_time.MINUTES_PER_FIGURE + (
        -2 * study_time.MINUTES_PER_FIGURE) % study_time.STEP
    assert big.total == big.reading + big.watching + big.exercising
    assert study_time.duration(95) == "1 h 35 min" and study_time.duration(40) == "40 min"


def test_every_session_page_and_chapter_0_show_the_times(built_book):
    import html as html_module

    def text(name):
        page = (built_book / "book" / name).read_text()
        return html_module.unescape(re.sub(r"<[^>]+>", "", page))

    for t in study_time.session_times(ROOT):
        shown = text(f"session-{t.number}.html")
        assert f"Time: about {study_time.duration(t.total)}" in shown, t.number
        assert f"{t.figures} live figure" in shown and f"{t.points:g} points" in shown
    chapter0 = text("ch00-how-to-use.html")
    for t in study_time.session_times(ROOT):
        assert f"{t.number} · {t.title}" in chapter0 and study_time.duration(t.total) in chapter0
    assert "{{" not in chapter0


def test_chapter_0_and_the_start_page_say_where_the_course_is_and_what_it_needs():
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["repository"]["url"].startswith("https://")
    assert config["html"]["use_repository_button"] is True
    for name in ("index.md", "ch00-how-to-use.md"):
        text = (ROOT / "book" / name).read_text()
        assert "{{ repository_url }}" in text and "{{ clone_command }}" in text, name
        assert "Python 3.10" in text and "`make`" in text and "`git`" in text, name
        assert "WSL" in text, name
    chapter0 = (ROOT / "book" / "ch00-how-to-use.md").read_text()
    assert "macOS" in chapter0 and "Linux" in chapter0
    # a student's commands only
    assert "make book" not in chapter0 and "make test" not in chapter0
    assert "make check GRADE=1" in chapter0
