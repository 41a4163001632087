"""nbgrader submit warns of missing or extra notebooks only when there are some: the lab's
`.ipynb_checkpoints` (and the fetched feedback), which submit does not copy, are no extra
notebooks (tools/hub/shares.py, the course's submit plugin)."""

import logging
from pathlib import Path

from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default import ExchangeSubmit

from tools.hub.shares import CourseSubmit


def folders(tmp_path: Path, extra: str | None) -> tuple[Path, Path]:
    release, handed = tmp_path / "release", tmp_path / "handed"
    for folder in (release, handed):
        folder.mkdir(parents=True)
        (folder / "exit-test.ipynb").write_text("{}")
    (handed / ".ipynb_checkpoints").mkdir()
    (handed / ".ipynb_checkpoints" / "exit-test-checkpoint.ipynb").write_text("{}")
    (handed / "feedback" / "2026-03-01").mkdir(parents=True)
    (handed / "feedback" / "2026-03-01" / "exit-test.ipynb").write_text("{}")
    if extra:
        (handed / extra).write_text("{}")
    return release, handed


def warnings(plugin, tmp_path: Path, extra: str | None, caplog) -> list[str]:
    submit = plugin(coursedir=CourseDirectory(), authenticator=Authenticator())
    submit.release_path, submit.src_path = map(str, folders(tmp_path, extra))
    submit.log = logging.getLogger("submit-test")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="submit-test"):
        submit.check_filename_diff()
    return [r.getMessage() for r in caplog.records]


def test_checkpoints_are_not_extra_notebooks(tmp_path, caplog):
    assert warnings(ExchangeSubmit, tmp_path / "a", None, caplog)  # nbgrader's own warns
    assert warnings(CourseSubmit, tmp_path / "b", None, caplog) == []


def test_a_real_extra_notebook_is_still_said(tmp_path, caplog):
    said = warnings(CourseSubmit, tmp_path, "scratch.ipynb", caplog)
    assert len(said) == 1 and "scratch.ipynb: EXTRA" in said[0]
