"""The course as the hub's students pull it: a git repository on the hub's machine, without
anything a student must not see, kept up to date from the instructor's course by ``make hub``.

    python -m tools.hub.course_repo [--course DIR] [--repo DIR]   (make publish, in the course)

    from tools.hub import course_repo
    sha = course_repo.publish(course_root, Path("/srv/memcourse/public/memcourse"))
    course_repo.url(Path("/srv/memcourse/public/memcourse"))   # file:///srv/memcourse/public/memcourse

**What is published** (``PUBLISHED``, a list of what may go, never a list of what may not):
the chapters (``book/``), the start page (``start.md``) and the schedule, as they are in the
course's working tree (its tracked files: an instructor's correction is published by
``make hub`` without a commit), and an ``exercises/`` folder holding only its README: the
place nbgrader's *Fetch* puts each session's notebooks (``exercises/session-N/``, beside
``book/`` as in the course, so the notebooks' links to the chapters open). Never
``solutions/``, the released notebooks themselves (fetched through the exchange: a pulled
copy would collide with the fetched one), ``tools/``, ``tests/``, the gradebook or anything
of the instructor's working folders.

**Who publishes.** ``make hub`` makes the repository (owned by the instructor's account,
readable by everyone) and publishes the instructor's course folder on the hub
(``~/memcourse``); after a correction the instructor publishes again from a terminal of
their lab: ``make publish`` in ``~/memcourse``. The hub's address (for the start page's
links) is kept in the repository's configuration (``memcourse.hub-url``).

**How.** Each publication is a commit on ``main`` of a bare repository, made with git's
plumbing (the files hashed into a private index, its tree committed with the previous
publication as parent), so the students' clones fast-forward and nbgitpuller merges each
update into their copy; nothing changed, no commit. The repository is world-readable and
owned by root; each student's ``~/.gitconfig`` names it ``safe.directory`` (git refuses a
repository of another user otherwise), which ``tools.hub.local`` writes.

**The students' side** is nbgitpuller (the hub's default page for a student is its
``git-pull`` link, and so is every chapter's launch button of the HTML book): the first
pull clones the repository into ``~/memcourse``; a later pull keeps what the student
changed (nbgitpuller's merge rules, in the README's *The course hub*).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BRANCH = "main"
DEFAULT_REPO = Path(os.environ.get("MEMCOURSE_PUBLIC_REPO", "/srv/memcourse/public/memcourse"))
NAME = "memcourse"  # the repository's folder name: nbgitpuller clones into ~/<NAME>
PUBLISHED = ("book/", "start.md", "schedule.yml")
EXERCISES_README = """# Your assignments

Each session's exit test and exercises arrive here when you fetch them in the lab's
**Assignments** tab (menu *Nbgrader > Assignment List*): `exercises/session-3/` for
session 3, beside `book/`, so their links to the chapters open. Answer them here, then
press *Submit* in the same tab. *Fetch Feedback* puts the feedback in
`exercises/session-3/feedback/`; your scores page shows every session's score.

This folder is yours: updates of the course never change what you fetched or wrote here.
"""
AUTHOR = {"GIT_AUTHOR_NAME": "memcourse hub", "GIT_AUTHOR_EMAIL": "hub@memcourse.invalid",
          "GIT_COMMITTER_NAME": "memcourse hub", "GIT_COMMITTER_EMAIL": "hub@memcourse.invalid"}


def url(repo: Path) -> str:
    """The URL the students' nbgitpuller clones from (a file on the hub's machine)."""
    return f"file://{Path(repo).resolve()}"


def published_files(root: Path) -> list[str]:
    """The course's tracked files that are published (``PUBLISHED``), sorted."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=False)
    if listed.returncode == 0 and listed.stdout:
        names = [n for n in listed.stdout.decode().split("\0") if n]
    else:  # not a git checkout (the instructor's copy on the hub): what PUBLISHED names
        names = []
        for item in PUBLISHED:
            path = Path(root) / item
            if item.endswith("/") and path.is_dir() and not path.is_symlink():
                names += [p.relative_to(root).as_posix() for p in path.rglob("*") if p.is_file()]
            elif path.is_file():
                names.append(item)
    keep = []
    for name in names:
        path = Path(root) / name
        if not any(name == p or (p.endswith("/") and name.startswith(p)) for p in PUBLISHED):
            continue
        if ".ipynb_checkpoints" in name.split("/") or path.is_symlink() or not path.is_file():
            continue
        keep.append(name)
    return sorted(keep)


def _git(repo: Path, *args, env: dict | None = None, data: bytes | None = None) -> str:
    # the repository is the instructor's: root (make hub) may write it all the same
    result = subprocess.run(["git", "-c", f"safe.directory={Path(repo).resolve()}",
                             f"--git-dir={repo}", *args], input=data,
                            capture_output=True, check=False, env={**os.environ, **(env or {})})
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {result.stderr.decode(errors='replace')}")
    return result.stdout.decode().strip()


def ensure_repo(repo: Path) -> None:
    """The bare repository (made once), readable by every user."""
    repo = Path(repo)
    if not (repo / "HEAD").exists():
        repo.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "--quiet", "--bare", f"--initial-branch={BRANCH}",
                        str(repo)], check=True)


def head(repo: Path) -> str | None:
    """The commit of the last publication (None before the first)."""
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{BRANCH}")
    except RuntimeError:
        return None


SCORES_LINK = "](/hub/user-redirect/"  # the start page's link through the hub, as a path


def _content(root: Path, name: str, hub_url: str) -> bytes:
    """A published file's bytes; the start page's links through the hub made absolute
    (each user's server has an origin of its own, where the hub's path is not the hub)."""
    data = (Path(root) / name).read_bytes()
    if name == "start.md" and hub_url:
        data = data.replace(SCORES_LINK.encode(), f"]({hub_url.rstrip('/')}/hub/user-redirect/".encode())
    return data


def hub_url_of(repo: Path) -> str:
    """The hub's address ``make hub`` kept in the repository ('' when none)."""
    try:
        return _git(repo, "config", "memcourse.hub-url")
    except RuntimeError:  # not set
        return ""


def configure(repo: Path, hub_url: str, owner: tuple[int, int] | None = None) -> None:
    """Make the repository for a hub: its address kept, owned by the instructor's account."""
    ensure_repo(repo)
    _git(repo, "config", "memcourse.hub-url", hub_url)
    if owner is not None:
        for path in [repo, *Path(repo).rglob("*")]:
            os.lchown(path, *owner)
    subprocess.run(["chmod", "-R", "a+rX,go-w", str(repo)], check=True)


def student_gitconfig(home: Path, repo: Path, owner: tuple[int, int]) -> None:
    """A student's ``~/.gitconfig`` names the course's repository safe (git refuses to read
    a repository another user owns); their other settings are kept."""
    path = Path(home) / ".gitconfig"
    listed = subprocess.run(["git", "config", "--file", str(path), "--get-all", "safe.directory"],
                            capture_output=True, text=True, check=False).stdout.split()
    if str(repo) not in listed:
        subprocess.run(["git", "config", "--file", str(path), "--add", "safe.directory",
                        str(repo)], check=True)
    os.chown(path, *owner)


def publish(root: Path, repo: Path, message: str = "", hub_url: str | None = None) -> str:
    """Publish the course's ``PUBLISHED`` files as a new commit of ``repo`` (none when
    nothing changed); return the commit of ``main``. ``hub_url``: the hub the students use
    (the start page links their scores page through it; default: the repository's)."""
    repo = Path(repo)
    ensure_repo(repo)
    hub_url = hub_url_of(repo) if hub_url is None else hub_url
    files = published_files(Path(root))
    with tempfile.TemporaryDirectory(prefix="memcourse-publish-") as tmp:
        env = {**AUTHOR, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        entries = []
        for name in files:
            blob = _git(repo, "hash-object", "-w", "--stdin", data=_content(root, name, hub_url))
            entries.append(f"100644 {blob}\t{name}")
        readme = _git(repo, "hash-object", "-w", "--stdin", data=EXERCISES_README.encode())
        entries.append(f"100644 {readme}\texercises/README.md")
        _git(repo, "update-index", "--add", "--index-info", env=env,
             data=("\n".join(entries) + "\n").encode())
        tree = _git(repo, "write-tree", env=env)
    parent = head(repo)
    if parent and _git(repo, "rev-parse", f"{parent}^{{tree}}") == tree:
        return parent
    args = ["commit-tree", tree, "-m", message or "The course as published by make hub"]
    if parent:
        args[2:2] = ["-p", parent]
    commit = _git(repo, *args, env=AUTHOR)
    _git(repo, "update-ref", f"refs/heads/{BRANCH}", commit, *([parent] if parent else []))
    subprocess.run(["chmod", "-R", "a+rX,go-w", str(repo)], check=False)  # new objects
    return commit


def tree_names(repo: Path, ref: str = BRANCH) -> list[str]:
    """Every path of the published tree (what a student's clone holds)."""
    return _git(repo, "ls-tree", "-r", "--name-only", ref).splitlines()


def main(argv: list[str] | None = None) -> int:
    """``make publish``: the course folder's book, start page and schedule, published."""
    from tools import ROOT

    parser = argparse.ArgumentParser(prog="python -m tools.hub.course_repo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--course", type=Path, default=ROOT, help="the course folder")
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO,
                        help="the repository the students pull (default: make hub's)")
    args = parser.parse_args(argv)
    if not (args.repo / "HEAD").exists():
        raise SystemExit(f"{args.repo}: no course repository (make hub makes it)")
    before = head(args.repo)
    commit = publish(args.course.resolve(), args.repo)
    if commit == before:
        print(f"nothing changed since the last publication ({commit[:10]})")
    else:
        print(f"published {commit[:10]} to {url(args.repo)}: students get it at their next "
              "pull (their next login, or a chapter's launch link)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
