"""A student's notebook opened in the instructor's lab runs in the grader's box
(tools/lab/boxed_kernels.py): no course file, no network, a copy of the notebook's
folder's files; "Python 3 (as me)" runs it as the instructor when chosen; a notebook of
the course's own runs as the instructor, as always.

The course's lab (instructor role) is started on a free port of 127.0.0.1
(``tests.support.lab_browser.LabServer``, stopped by PID); kernels are started through its REST
API (a session per notebook, as JupyterLab opens one) and run code over its websocket.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import urllib.request
import uuid
from pathlib import Path

import nbformat
import pytest
from tornado.websocket import websocket_connect

from support import lab_browser

pytestmark = pytest.mark.xdist_group("lab")  # starts the course's lab (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
PLACE = ROOT / "_build" / "test-boxed"
PROBE = """
import os, socket
print(json.dumps({"solutions": os.path.exists(%r), "data": open("data.txt").read(),
                  "net": socket.socket().connect_ex(("127.0.0.1", %d))}))
"""


@pytest.fixture(scope="module")
def lab():
    for folder in ("submitted/ann/session-3", "mine"):
        (PLACE / folder).mkdir(parents=True, exist_ok=True)
        nbformat.write(nbformat.v4.new_notebook(), PLACE / folder / "work.ipynb")
        (PLACE / folder / "data.txt").write_text("ann's data")
    server = lab_browser.LabServer("instructor")
    yield server
    server.stop()
    shutil.rmtree(PLACE, ignore_errors=True)


def api(lab, method: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(f"{lab.url}/api/{path}?token={lab.token}",
                                     data=json.dumps(body).encode(), method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def session(lab, path: str, kernel: str) -> dict:
    """The notebook's session with that kernel: opened, or its kernel changed (as
    JupyterLab's *Change Kernel* does)."""
    opened = api(lab, "POST", "sessions", {"path": path, "type": "notebook", "name": "",
                                           "kernel": {"name": kernel}})
    if opened["kernel"]["name"] == kernel:
        return opened
    return api(lab, "PATCH", f"sessions/{opened['id']}", {"kernel": {"name": kernel}})


async def _execute(lab, kernel_id: str, code: str) -> str:
    ws = await websocket_connect(
        f"ws://127.0.0.1:{lab.port}/api/kernels/{kernel_id}/channels?token={lab.token}")
    msg_id = uuid.uuid4().hex
    ws.write_message(json.dumps({
        "header": {"msg_id": msg_id, "username": "", "session": uuid.uuid4().hex,
                   "msg_type": "execute_request", "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": False,
                    "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
    out = ""
    while True:
        msg = json.loads(await asyncio.wait_for(ws.read_message(), 120))
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out += msg["content"]["text"]
        elif msg["msg_type"] == "error":
            out += f"{msg['content']['ename']}: {msg['content']['evalue']}"
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            ws.close()
            return out


def probe(lab, path: str, kernel: str) -> tuple[str, dict]:
    started = session(lab, path, kernel)
    code = "import json\n" + PROBE % (str(ROOT / "solutions"), lab.port)
    out = asyncio.run(_execute(lab, started["kernel"]["id"], code))
    return started["kernel"]["name"], json.loads(out.strip().splitlines()[-1])


def test_a_students_notebook_runs_in_the_box(lab):
    name, seen = probe(lab, "_build/test-boxed/submitted/ann/session-3/work.ipynb", "python3")
    assert name == "python3-boxed"
    assert seen["solutions"] is False and seen["data"] == "ann's data", seen
    assert seen["net"] != 0, seen  # no network: the lab's own port is not reachable


def test_as_me_chosen_runs_it_as_the_instructor_and_the_course_s_own_as_always(lab):
    name, seen = probe(lab, "_build/test-boxed/submitted/ann/session-3/work.ipynb",
                       "python3-as-me")
    assert name == "python3-as-me" and seen["solutions"] is True and seen["net"] == 0, seen
    name, seen = probe(lab, "_build/test-boxed/mine/work.ipynb", "python3")
    assert name == "python3" and seen["solutions"] is True, seen
