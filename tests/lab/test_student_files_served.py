"""A student's file under submitted/, autograded/ or feedback/, opened through the
instructor's lab's ``/files/``, is sent as a download in a sandbox with no script
(tools/lab/student_work.py); the course's own files keep Jupyter's policy.

The course's lab is started on a free port of 127.0.0.1 (``tests.support.lab_browser.LabServer``,
stopped by PID); the files are written under ``_build/`` of the course (its working folder).
"""

from __future__ import annotations

import shutil
import urllib.request
from pathlib import Path

import pytest

from support import lab_browser

pytestmark = pytest.mark.xdist_group("lab")  # starts the course's lab (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
PLACE = ROOT / "_build" / "test-student-files"
PAGE = "<html><body><script>fetch('/pwned')</script>notes</body></html>"


@pytest.fixture(scope="module")
def lab():
    for folder in ("submitted/ann/session-3", "autograded/ann/session-3",
                   "feedback/ann/session-3", "mine"):
        (PLACE / folder).mkdir(parents=True, exist_ok=True)
        (PLACE / folder / "notes.html").write_text(PAGE)
        (PLACE / folder / "data.txt").write_text("1 2 3\n")
    server = lab_browser.LabServer("instructor")
    yield server
    server.stop()
    shutil.rmtree(PLACE, ignore_errors=True)


def headers(lab, path: str) -> dict[str, str]:
    url = f"{lab.url}/files/{path}?token={lab.token}"
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
        return {k.lower(): v for k, v in response.headers.items()}


@pytest.mark.parametrize("folder", ["submitted", "autograded", "feedback"])
def test_a_students_page_is_a_download_in_a_sandbox_without_scripts(lab, folder):
    where = f"_build/test-student-files/{folder}/ann/session-3"
    got = headers(lab, f"{where}/notes.html")
    policy = got["content-security-policy"]
    assert "sandbox" in policy and "allow-scripts" not in policy, policy
    assert got.get("content-disposition") == "attachment", got
    text = headers(lab, f"{where}/data.txt")  # plain text: shown, still without scripts
    assert "allow-scripts" not in text["content-security-policy"]
    assert "content-disposition" not in text


def test_the_courses_own_files_keep_jupyters_policy(lab):
    got = headers(lab, "_build/test-student-files/mine/notes.html")
    assert "sandbox allow-scripts" in got["content-security-policy"]  # Jupyter's own
    assert "content-disposition" not in got
