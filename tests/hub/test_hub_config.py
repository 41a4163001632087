"""The course hub's configuration files, checked without starting anything.

* tools/hub/z2jh-values.yaml, the values of the Zero to JupyterHub chart, merged into the
  chart's defaults as Helm merges them and validated against the chart's own values
  schema (vendored in tools/hub/z2jh/, from the chart's tag 4.4.0; see its README);
* what it must carry for the course: the exchange on a shared volume at the place the
  users' nbgrader looks, the course's lab per role, JupyterLab as the default page;
* tools/hub/jupyterhub_config.py loads, listens on 127.0.0.1 only, and gives a student the
  student lab with the Assignments tab and the instructor Formgrader;
* the hub finds the proxy tools/hub/local.py starts, and that start waits for it to listen.
"""

import copy
import json
import subprocess
import sys
import time
import types
from pathlib import Path

import jsonschema
import pytest
import yaml

from tools.common.ports import free_port
from tools.hub import hub_api, local, processes

# one worker runs every module that starts the course's lab or writes its config (conftest.py)
pytestmark = pytest.mark.xdist_group("lab")

ROOT = Path(__file__).resolve().parents[2]
Z2JH = ROOT / "tools" / "hub" / "z2jh"


def helm_merge(defaults, values):
    """Helm's merge of a values file into the chart's defaults: maps recursively, the rest
    replaced (a null removes the key)."""
    merged = copy.deepcopy(defaults)
    for key, value in values.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = helm_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def load(name):
    return yaml.safe_load((ROOT / "tools" / "hub" / name).read_text())


@pytest.fixture(scope="module")
def schema():
    return json.loads((Z2JH / "values.schema.json").read_text())


@pytest.fixture(scope="module")
def merged():
    return helm_merge(yaml.safe_load((Z2JH / "chart-values.yaml").read_text()),
                      load("z2jh-values.yaml"))


def test_values_file_validates_against_the_charts_schema(schema, merged):
    jsonschema.validate(merged, schema)


def test_the_schema_catches_a_mistake(schema, merged):
    """The check can fail: a misspelt key and a wrong type are refused."""
    wrong = copy.deepcopy(merged)
    wrong["singleuser"]["storage"]["extraVolumeMount"] = []
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong, schema)
    wrong = copy.deepcopy(merged)
    wrong["singleuser"]["defaultUrl"] = ["/lab"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong, schema)


def test_values_carry_the_exchange_service_and_the_course_lab(merged):
    """Every pod is one Unix user: the exchange is the hub's service, no shared folder; the
    users' nbgrader takes its plugins, the pre-spawn hook gives its address, the service
    keeps its files on the hub's volume, and every user's token may call it."""
    from tools.hub import hub_exchange_client

    single, hub = merged["singleuser"], merged["hub"]
    assert not single["storage"].get("extraVolumes"), "a volume shared by the students' pods"
    service = hub["services"]["exchange"]
    port = service["url"].rsplit(":", 1)[1]
    root = service["command"][service["command"].index("--root") + 1]
    assert service["command"][:3] == ["python3", "-m", "tools.hub.hub_exchange"]
    assert root in {m["mountPath"] for m in hub["extraVolumeMounts"]}
    assert {int(port)} == {p["port"] for p in hub["service"]["extraPorts"]}
    assert "access:services!service=exchange" in hub["loadRoles"]["user"]["scopes"]
    assert "access:services!service=exchange" in hub["config"]["Spawner"]["server_token_scopes"]
    nbgrader = single["extraFiles"]["nbgrader-exchange"]["stringData"]
    assert all(line.replace("'", '"') in nbgrader for line in hub_exchange_client.config_lines())
    assert single["defaultUrl"] == "/lab"
    code = hub["extraConfig"]["memcourse-roles"]
    namespace = {"c": types.SimpleNamespace(KubeSpawner=types.SimpleNamespace())}
    exec(compile(code, "extraConfig", "exec"), namespace)  # Python that the hub will run
    spawner = types.SimpleNamespace(user=types.SimpleNamespace(name="student1"), environment={},
                                    volumes=[], volume_mounts=[])
    namespace["c"].KubeSpawner.pre_spawn_hook(spawner)
    assert spawner.environment["MEMCOURSE_EXCHANGE_FOUND"] == "1"
    assert spawner.environment["MEMCOURSE_EXCHANGE_URL"] == f"http://hub:{port}/services/exchange/"


def hub_config(**env):
    """tools/hub/jupyterhub_config.py run as JupyterHub runs it: its `c` and its hook."""
    from traitlets.config import Config

    c = Config()
    config = ROOT / "tools" / "hub" / "jupyterhub_config.py"
    namespace = {"get_config": lambda: c, "__file__": str(config)}  # as traitlets gives it
    import os
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        exec(compile(config.read_text(), "config", "exec"), namespace)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return c


def test_local_hub_config_roles_and_address():
    c = hub_config(MEMCOURSE_HUB_INSTRUCTORS="prof", MEMCOURSE_HUB_LAB="/lab-files",
                   MEMCOURSE_HUB_PORT="8123")
    assert c.JupyterHub.ip == "127.0.0.1" and c.JupyterHub.hub_ip == "127.0.0.1"
    # every user's server on an origin of its own
    assert c.JupyterHub.subdomain_host == "http://localhost:8123"
    assert c.JupyterHub.authenticator_class == "pam"
    seen = {}
    for name in ("prof", "ann"):
        spawner = types.SimpleNamespace(user=types.SimpleNamespace(name=name), environment={})
        c.Spawner.pre_spawn_hook(spawner)
        seen[name] = spawner.environment
    assert seen["prof"]["MEMCOURSE_ROLE"] == "instructor"
    assert seen["ann"]["MEMCOURSE_ROLE"] == "student"
    assert seen["ann"]["JUPYTER_CONFIG_PATH"].startswith("/lab-files/_build/lab/student:")
    assert seen["ann"]["MEMCOURSE_EXCHANGE_FOUND"] == "1"


def test_a_student_on_the_class_list_gets_their_seat(tmp_path, monkeypatch):
    """`make hub` names the instructor's class list to the hub, which gives a student of
    the list their seat (which orders their options as the grader will); a
    student not on it, and the instructor, get none; a list that cannot be read stops the
    spawn with its error, not a seatless server."""
    listed = tmp_path / "class-list.csv"
    listed.write_text("seat,student\n1,ann\n2,prof\n5,bea\n")
    c = hub_config(MEMCOURSE_HUB_INSTRUCTORS="prof", MEMCOURSE_HUB_CLASS_LIST=str(listed))
    seats = {}
    for name in ("ann", "bea", "cid", "prof"):
        spawner = types.SimpleNamespace(user=types.SimpleNamespace(name=name), environment={})
        c.Spawner.pre_spawn_hook(spawner)
        seats[name] = spawner.environment.get("MEMCOURSE_SEAT")
    assert seats == {"ann": "1", "bea": "5", "cid": None, "prof": None}
    listed.write_text("seat,student\n1,ann\n1,bea\n")
    spawner = types.SimpleNamespace(user=types.SimpleNamespace(name="ann"), environment={})
    with pytest.raises(ValueError, match="line 3: seat 1 is taken"):
        c.Spawner.pre_spawn_hook(spawner)
    assert local.environment(local.Hub(users="nobody-here-"))["MEMCOURSE_HUB_CLASS_LIST"] == ""
    monkeypatch.setattr(local, "_exists", lambda user: True)
    monkeypatch.setattr(local.Hub, "course_dir", lambda hub: tmp_path / "memcourse")
    assert local.environment(local.Hub())["MEMCOURSE_HUB_CLASS_LIST"] == str(
        tmp_path / "memcourse" / "class-list.csv")


def test_the_hub_finds_the_proxy_the_course_started():
    """The proxy is started by tools/hub/local.py, not by the hub (whose own wait for node
    is 10 s), and the hub reaches its API with the token both are given."""
    c = hub_config(MEMCOURSE_HUB_PROXY_API="8777")
    assert c.ConfigurableHTTPProxy.should_start is False
    assert c.ConfigurableHTTPProxy.api_url == "http://127.0.0.1:8777"
    env = local.environment(local.Hub(port=8123))
    assert len(env["CONFIGPROXY_AUTH_TOKEN"]) == 64
    assert env["CONFIGPROXY_AUTH_TOKEN"] != local.environment(local.Hub())["CONFIGPROXY_AUTH_TOKEN"]


def test_waiting_for_the_proxy_ends_when_it_listens_or_stops(tmp_path):
    log = tmp_path / "proxy.log"
    port = local.free_port()
    server = subprocess.Popen([sys.executable, "-c", (
        "import socket, time; s = socket.socket(); "
        "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
        f"time.sleep(1); s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(60)")])
    try:
        processes.wait_listening(server, [port], log, time.monotonic() + 60)
        assert server.poll() is None and not local.port_free(port)
    finally:
        server.kill()
        server.wait()
    log.write_text("node: cannot find module\n")
    failing = subprocess.Popen(["sh", "-c", "exit 3"])
    with pytest.raises(RuntimeError, match="stopped:\nnode: cannot find module"):
        processes.wait_listening(failing, [local.free_port()], log, time.monotonic() + 60)
    silent = subprocess.Popen(["sleep", "30"])
    try:
        with pytest.raises(RuntimeError, match="not listening in time"):
            processes.wait_listening(silent, [local.free_port()], log, time.monotonic() + 1)
    finally:
        silent.kill()
        silent.wait()


def test_teaching_assistants_are_graders_of_the_course(tmp_path):
    """nbgrader's multi-grader groups: formgrade-<course> (instructor and TAs) and
    nbgrader-<course> (the students); a TA gets the instructor's lab (Formgrader), not the
    hub's admin; a student's server is given their own extensions (extensions.yml), a
    classmate's never."""
    (tmp_path / "schedule.yml").write_text("timezone: UTC\ndue:\n  session-3: 2026-10-12 18:00\n")
    (tmp_path / "extensions.yml").write_text("session-3:\n  ann: 2\n")
    c = hub_config(MEMCOURSE_HUB_INSTRUCTORS="prof", MEMCOURSE_HUB_GRADERS="tess",
                   MEMCOURSE_HUB_USERS="prof,tess,ann,bea", MEMCOURSE_HUB_COURSE=str(tmp_path))
    assert c.JupyterHub.load_groups == {"formgrade-memcourse": ["prof", "tess"],
                                        "nbgrader-memcourse": ["ann", "bea"]}
    assert c.Authenticator.admin_users == {"prof"}
    seen = {}
    for name in ("tess", "ann", "bea"):
        spawner = types.SimpleNamespace(user=types.SimpleNamespace(name=name), environment={},
                                        notebook_dir="~")
        c.Spawner.pre_spawn_hook(spawner)
        seen[name] = spawner.environment
        seen[name + " root"] = spawner.notebook_dir
    assert seen["tess root"] == str(tmp_path) and seen["ann root"] == "~"  # Formgrader's rule
    assert seen["tess"]["MEMCOURSE_ROLE"] == "instructor" and "MEMCOURSE_EXTENSIONS" not in seen["tess"]
    assert json.loads(seen["ann"]["MEMCOURSE_EXTENSIONS"]) == {
        "session-3": "Wednesday 14 October 2026, 18:00 (UTC)"}
    assert json.loads(seen["bea"]["MEMCOURSE_EXTENSIONS"]) == {}
    # the hub's home page is the course's, over JupyterHub's own
    home = Path(c.JupyterHub.template_paths[0]) / "home.html"
    assert '{% extends "templates/home.html" %}' in home.read_text()
    assert "user-redirect/memcourse/scores" in home.read_text()


def test_z2jh_values_carry_the_graders_groups(merged):
    groups = merged["hub"]["config"]["JupyterHub"]["load_groups"]
    assert set(groups) == {"formgrade-memcourse", "nbgrader-memcourse"}
    code = merged["hub"]["extraConfig"]["memcourse-roles"]
    namespace = {"c": types.SimpleNamespace(KubeSpawner=types.SimpleNamespace())}
    exec(compile(code, "extraConfig", "exec"), namespace)
    mounts = {}
    for name in groups["formgrade-memcourse"] + groups["nbgrader-memcourse"]:
        spawner = types.SimpleNamespace(user=types.SimpleNamespace(name=name), environment={},
                                        volumes=[], volume_mounts=[])
        namespace["c"].KubeSpawner.pre_spawn_hook(spawner)
        mounts[name] = {m["mountPath"]: m.get("readOnly") for m in spawner.volume_mounts}
    assert mounts["instructor"] == {"/srv/memcourse/course": False}
    assert mounts["ta1"] == {"/srv/memcourse/course": True}  # a TA cannot change the course
    assert mounts["student1"] == {}


def test_one_user_mode_runs_the_exchange_service_and_every_student_as_one_user(tmp_path):
    """make hub ONE_UNIX_USER=1: the students' servers as one Unix user, the exchange the
    hub's service, which every user's server token may call and whose address it gets."""
    plain = hub_config(MEMCOURSE_HUB_INSTRUCTORS="prof", MEMCOURSE_HUB_STATE=str(tmp_path))
    assert plain.JupyterHub.spawner_class.__name__ == "LimitedSpawner"
    assert "services" not in plain.JupyterHub
    c = hub_config(MEMCOURSE_HUB_INSTRUCTORS="prof", MEMCOURSE_HUB_ONE_USER="nobody",
                   MEMCOURSE_HUB_EXCHANGE_PORT="9555", MEMCOURSE_HUB_STATE="/state",
                   MEMCOURSE_HUB_EXCHANGE_ARGS="--share-mb 7")
    spawner_class = c.JupyterHub.spawner_class
    assert spawner_class.__name__ == "OneUserSpawner"
    assert spawner_class.__mro__[1].__name__ == "LimitedSpawner"  # in the user's cgroup still
    (service,) = c.JupyterHub.services
    command = service["command"]
    assert service["name"] == "exchange" and service["url"] == "http://127.0.0.1:9555"
    assert command[1:3] == ["-m", "tools.hub.hub_exchange"]
    assert command[command.index("--root") + 1] == "/state/exchange-service"
    assert command[-2:] == ["--share-mb", "7"]
    roles = {role["name"]: role for role in c.JupyterHub.load_roles}
    assert "access:services!service=exchange" in roles["user"]["scopes"]
    assert roles["exchange-service"]["services"] == ["exchange"]
    assert "access:services!service=exchange" in c.Spawner.server_token_scopes
    spawner = types.SimpleNamespace(user=types.SimpleNamespace(name="ann"), environment={})
    c.Spawner.pre_spawn_hook(spawner)
    assert spawner.environment["MEMCOURSE_EXCHANGE_URL"] == "http://127.0.0.1:9555/services/exchange/"


def test_make_hub_stop_asks_the_hub_through_a_service_of_its_own(tmp_path):
    """The token start writes to the state folder (its owner's only) makes the hub-stop
    service, whose role reads the servers' state; a new start, a new token; a hub that
    does not answer names no server."""
    hub_api.grant(tmp_path, free_port())
    written = tmp_path / hub_api.FILE
    token = json.loads(written.read_text())["token"]
    assert written.stat().st_mode & 0o777 == 0o600 and len(token) == 64
    c = hub_config(MEMCOURSE_HUB_STATE=str(tmp_path))
    assert c.JupyterHub.services == [{"name": "hub-stop", "api_token": token}]
    (role,) = c.JupyterHub.load_roles
    assert role["services"] == ["hub-stop"]
    assert {"list:users", "read:servers", "admin:server_state"} <= set(role["scopes"])
    one_user = hub_config(MEMCOURSE_HUB_STATE=str(tmp_path), MEMCOURSE_HUB_ONE_USER="nobody",
                          MEMCOURSE_HUB_EXCHANGE_PORT="9555")
    assert [s["name"] for s in one_user.JupyterHub.services] == ["hub-stop", "exchange"]
    assert {r["name"] for r in one_user.JupyterHub.load_roles} == {
        "hub-stop", "exchange-service", "user"}
    hub_api.grant(tmp_path, free_port())
    assert json.loads(written.read_text())["token"] != token
    assert hub_api.server_pids(tmp_path) == []  # nothing listens at its address
    written.unlink()
    assert hub_api.server_pids(tmp_path) == [] and hub_api.service(tmp_path) is None


# JupyterHub's paginated list of users, as GET /hub/api/users answers it with the pagination
# media type: the servers' models carry LocalProcessSpawner's state, {"pid": ...}
USERS_API = r'''
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

token, pages, port = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])

class Users(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if (url.path != "/hub/api/users" or query.get("include_stopped_servers") != ["1"]
                or self.headers.get("Authorization") != f"token {token}"
                or "pagination" not in self.headers.get("Accept", "")):
            self.send_response(403)
            self.end_headers()
            return
        body = json.dumps(pages[query["offset"][0]]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

HTTPServer(("127.0.0.1", port), Users).serve_forever()
'''


def users_page(servers: dict, following: int | None) -> dict:
    return {"items": [{"name": name, "servers": {"": model}} for name, model in servers.items()],
            "_pagination": {"next": None if following is None else {"offset": following}}}


def test_hub_stop_reads_every_page_of_the_hubs_users_for_the_servers_pids(tmp_path):
    """server_pids asks a real server on 127.0.0.1 with the service's token, follows the
    pagination to its end (stopped servers included), keeps only whole positive PIDs, and
    stops at a page that does not move on; a wrong token gets no PID."""
    port = free_port()
    hub_api.grant(tmp_path, port)
    token = json.loads((tmp_path / hub_api.FILE).read_text())["token"]
    pages = {
        "0": users_page({"ann": {"state": {"pid": 4101}}, "bob": {"state": {}},
                         "cy": {"state": None}}, 3),
        "3": users_page({"dee": {"state": {"pid": 4102}, "stopped": True},
                         "eve": {"state": {"pid": "4103"}}, "fay": {"state": {"pid": -1}}}, 6),
        "6": users_page({"gus": {"state": {"pid": 4104}}}, 6),  # a page that names itself next
    }
    log = tmp_path / "users-api.log"
    with log.open("w") as out:
        server = subprocess.Popen([sys.executable, "-c", USERS_API, token, json.dumps(pages),
                                   str(port)], stdout=out, stderr=subprocess.STDOUT)
    try:
        processes.wait_listening(server, [port], log, time.monotonic() + 60)
        assert hub_api.server_pids(tmp_path) == [4101, 4102, 4104]
        hub_api.grant(tmp_path, port)  # another token: the server refuses it
        assert hub_api.server_pids(tmp_path) == []
    finally:
        assert processes.end(server.pid, grace=10)
