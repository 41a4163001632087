"""Each session's expected time is counted from its material and shown where a student looks:
its session page and Chapter 0's table (tools/book/study_time.py, substitutions of the build);
Chapter 0 and the start page say where the course is and give a student's commands."""

from __future__ import annotations

import html
import json
import pathlib
import re

import yaml

from tools.book import study_time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_prose_words_leave_out_front_matter_code_and_displayed_maths():
    text = ("---\nkernelspec:\n  name: python3\n---\n(target)=\n# Two words\n\n"
            "```{code-cell} ipython3\nthese five words are code\n```\n\n"
            "$$\na + b = c\n$$\n\nThree more {term}`words <word>` with $x^2$ here.\n"
            "```{admonition} Keep\n:class: keep\nlast\n```\n<!-- not read -->\n")
    # "Two words", "Three more words with <x> here", "Keep", "last"
    assert study_time.prose_words(text) == 2 + 6 + 1 + 1


def test_figures_and_points_are_counted_from_the_chapters_and_the_release():
    times = {t.number: t for t in study_time.session_times(ROOT)}
    assert sorted(times) == list(range(1, 10))
    for number, _, pages in study_time.sessions(ROOT):
        assert pages and not any("session-" in p for p in pages)
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
    assert (small.reading, small.watching, small.exercising) == (study_time.STEP, 0, 0)
    big = study_time.SessionTime(1, "t", words=30 * study_time.WORDS_PER_MINUTE + 1,
                                 figures=2, points=10)
    step = study_time.STEP
    assert big.reading == 30 + step
    assert big.watching == step * -(-2 * study_time.MINUTES_PER_FIGURE // step)
    assert big.exercising == step * -(-10 * study_time.MINUTES_PER_POINT // step)
    assert big.total == big.reading + big.watching + big.exercising
    assert study_time.duration(95) == "1 h 35 min" and study_time.duration(40) == "40 min"
    assert "live figure" not in study_time.time_line(small)


def test_every_session_page_and_chapter_0_show_the_times(built_book):
    def text(name):
        page = (built_book / "book" / name).read_text()
        return html.unescape(re.sub(r"<[^>]+>", "", page))

    times = study_time.session_times(ROOT)
    for t in times:
        shown = text(f"session-{t.number}.html")
        assert f"Time: about {study_time.duration(t.total)}" in shown, t.number
        assert f"{study_time.duration(t.reading)} of reading" in shown
        assert f"{t.points:g} points" in shown and "{{" not in shown
    chapter0 = text("ch00-how-to-use.html")
    rows = re.sub(r"\s+", " ", chapter0)
    for t in times:
        assert f"Session {t.number} {study_time.duration(t.total)} " in rows
    course = study_time.duration(sum(t.total for t in times))
    assert f"The course {course}" in rows
    assert f"{study_time.WORDS_PER_MINUTE} words of prose a minute" in chapter0
    assert "{{" not in chapter0


def test_chapter_0_and_the_start_page_say_where_the_course_is_and_what_it_needs():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["repository"]["url"].startswith("https://")
    assert config["html"]["use_repository_button"] is True
    for name in ("index.md", "ch00-how-to-use.md"):
        text = (ROOT / "book" / name).read_text()
        assert "{{ repository_url }}" in text and "{{ clone_command }}" in text, name
        assert "Python 3.10" in text and "`make`" in text and "`git`" in text, name
        assert "WSL" in text and "macOS" in text and "Linux" in text, name
    chapter0 = (ROOT / "book" / "ch00-how-to-use.md").read_text()
    assert "bubblewrap" in chapter0 and "{{ study_times }}" in chapter0
    # a student's commands, not a maintainer's
    assert "make book" not in chapter0 and "make test" not in chapter0
    for command in ("`make lab`", "`make check NB=", "`make check ID=",
                    "`make check GRADE=1 NB="):
        assert command in chapter0, command
