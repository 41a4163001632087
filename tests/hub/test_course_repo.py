"""The course as the hub's students pull it: only what a student may see is
published, and nbgitpuller brings an instructor's correction to a chapter into a student's
copy without losing the student's edit of another cell or what they fetched.

(On a real hub, through the HTML book's launch link, in tests/test_hub.py.)"""

import json
import pathlib
import shutil
import subprocess

import pytest

from tools.hub import course_repo
from tools.release import assignments as course

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAPTER = "book/ch03-outer-product-memory.md"


@pytest.fixture()
def published(tmp_path):
    repo = tmp_path / "public" / course_repo.NAME
    return repo, course_repo.publish(ROOT, repo)


def test_only_what_a_student_may_see_is_published(published):
    repo, commit = published
    names = course_repo.tree_names(repo)
    assert CHAPTER in names and "start.md" in names and "exercises/README.md" in names
    assert all(n.startswith("book/") or n in ("start.md", "schedule.yml", "exercises/README.md")
               for n in names), names
    assert not [n for n in names if n.startswith(("solutions/", "tools/", "tests/"))]
    assert not [n for n in names if n.startswith("exercises/session-")]  # fetched, not pulled
    secret = set()
    for source in sorted((ROOT / "solutions").rglob("*.ipynb")):
        s, p = course._secret_and_public_lines(json.loads(source.read_text()))
        secret |= {line for line in s - p if course._meaningful(line)}
    book = "\n".join(path.read_text() for path in (ROOT / "book").glob("*.md"))
    secret = {line for line in secret if line not in book}  # the book shows some computations
    assert len(secret) > 50
    for name in names:
        text = subprocess.run(["git", f"--git-dir={repo}", "show", f"main:{name}"],
                              capture_output=True, text=True, check=True).stdout
        assert not [line for line in secret if line in text], name
        for marker in course.MARKERS:
            assert marker not in text, (name, marker)


def test_nothing_changed_no_new_commit(published):
    repo, commit = published
    assert course_repo.publish(ROOT, repo) == commit


def test_a_correction_reaches_the_student_and_keeps_their_edit(tmp_path, published):
    from nbgitpuller.pull import GitPuller

    repo, first = published
    home = tmp_path / "home"
    home.mkdir()
    clone = home / course_repo.NAME

    def pull():
        for _ in GitPuller(course_repo.url(repo), str(clone), branch="main", depth=0).pull():
            pass

    pull()  # the first login: a clone
    chapter = (clone / CHAPTER).read_text()
    lines = chapter.split("\n")
    first_para = next(i for i, ln in enumerate(lines)
                      if i > 15 and ln[:1].isalpha() and not ln.startswith(("jupytext", "kernelspec")))
    lines[first_para] += " MY NOTE: I get it now."
    (clone / CHAPTER).write_text("\n".join(lines))  # the student's edit of one cell
    fetched = clone / "exercises" / "session-2"
    fetched.mkdir(parents=True)
    (fetched / "exit-test.ipynb").write_text("{}")  # what nbgrader fetched
    # the instructor corrects the last lines of the chapter, in their course
    instructor = tmp_path / "course"
    for name in course_repo.published_files(ROOT):
        (instructor / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, instructor / name)
    original = (instructor / CHAPTER).read_text()
    (instructor / CHAPTER).write_text(original.rstrip("\n") + "\n\nA CORRECTION BY THE INSTRUCTOR.\n")
    second = course_repo.publish(instructor, repo)
    assert second != first
    pull()  # a later pull (the next login, or a launch link)
    merged = (clone / CHAPTER).read_text()
    assert "MY NOTE: I get it now." in merged and "A CORRECTION BY THE INSTRUCTOR." in merged
    assert (fetched / "exit-test.ipynb").read_text() == "{}"


def test_the_start_page_links_the_scores_page_through_this_hub(tmp_path):
    repo = tmp_path / course_repo.NAME
    course_repo.publish(ROOT, repo, hub_url="http://127.0.0.1:8123/")
    text = subprocess.run(["git", f"--git-dir={repo}", "show", "main:start.md"],
                          capture_output=True, text=True, check=True).stdout
    assert "](http://127.0.0.1:8123/hub/user-redirect/memcourse/scores)" in text
