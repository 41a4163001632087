"""The course on a local JupyterHub: real Unix users, nbgrader's exchange, the course's lab.

    python -m tools.hub start [--port 8000] [--students 2]     (make hub, as root)
    python -m tools.hub stop                                    (make hub-stop)
    python -m tools.hub clear-exchange                          (make hub-clear-exchange)

``start`` does, each step only when it is not done already:

1. **configurable-http-proxy** (npm, 5.x) into ``/srv/memcourse/node``;
2. **the users' environment**: ``/srv/memcourse/venv`` made with Debian's ``/usr/bin/python3``
   (the project's own may be unreadable to others), from ``requirements.txt``, memkit
   installed (not editable); a stamp of requirements.txt and memkit's files;
3. **the lab's files**: ``jupyter/``, ``book/``, the lab's modules of ``tools/lab/``, the
   course's sanitizer (``tools/common/sanitize.py``, which the grader cleans feedback with)
   and the exchange's collect, copied to ``/srv/memcourse/lab`` (world-readable; never
   ``solutions/``), with the page config of each role (the student's shows the
   *Assignments* tab);
4. **the users**: group ``memcourse``, ``mc-instructor``, the teaching assistants
   (``--tas``: graders, ``tools.hub.staff``) and ``mc-student1`` ... with passwords (kept
   in the state folder, root's only, and printed), homes of mode 700 (a student's on a file
   system of ``--limits home_mb`` of its own, ``tools.hub.limits``), each user's
   ``~/.jupyter/nbgrader_config.py`` naming the exchange and the course; the instructor
   gets the course folder ``~/memcourse`` (a copy of the course's tracked files, ``.venv``
   linked to the users' environment, so ``make grade`` works there), whose class list
   (``class-list.csv``, ``memkit.class_list``) gives each new student the next seat; the
   students' nbgrader fetches into ``~/memcourse/exercises/session-N``, their
   ``~/.gitconfig`` trusts the course's repository;
   **the course's repository** (``tools.hub.course_repo``): ``/srv/memcourse/public/memcourse``,
   the instructor's book, start page and schedule published for the students' nbgitpuller
   (their first login clones it into ``~/memcourse``; `make publish` updates it);
5. **the exchange**: ``/srv/nbgrader/exchange`` (nbgrader's default), root's, on a file
   system of its own (an ext4 image of ``--exchange-size`` MB in the state folder,
   loop-mounted), with the course's folders made for the instructor before anyone can
   squat them and a share of ``--share-size`` MB per student (``tools.hub.shares``); each
   user's nbgrader is given the course's plugins, the largest submission (``--submission-size``)
   and the instructor's the course's collect (``tools.hub.exchange``); the schedule's due
   dates put in the gradebook, the course folder shared with the graders (``tools.hub.staff``);
6. **JupyterHub** (``tools/hub/jupyterhub_config.py``) on 127.0.0.1, PAM logins of the group,
   one single-user server per user run as that user in a cgroup of theirs with ``--limits``
   (``jupyterhub-singleuser`` of the
   users' environment), started in the background after its proxy (started here, not by
   the hub, and waited on until it listens: node can take more than the 10 s a hub gives
   its own proxy on a loaded machine); their PIDs and logs are kept in the state folder
   ``/srv/memcourse/hub``.

``--one-unix-user``: every student's server runs as ``mc-pod`` (``tools.hub.user_files``), as
pods do; no step 5: the exchange is the hub's service ``tools.hub.hub_exchange``.

``stop`` stops the hub by its PID (the hub stops the single-user servers), then the proxy
and any server still alive, by their PIDs (the servers' asked of the hub's REST API before
it stops, ``tools.hub.hub_api``), then every process of the hub's users
(whatever a terminal or a kernel left running), removes their cgroups and what the
students left in /tmp, /dev/shm, /run/lock, then unmounts the homes and the exchange.
"""

from __future__ import annotations

import argparse
import grp
import hashlib
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from memkit import class_list
from tools import ROOT, npm
from tools.common.ports import free_port, port_free
from tools.hub import course_repo, exchange, hub_api, limits, processes, shares, staff, user_files

CONFIG_FILE = Path(__file__).with_name("jupyterhub_config.py")
PREFIX = Path(os.environ.get("MEMCOURSE_HUB_PREFIX", "/srv/memcourse"))
EXCHANGE = Path(os.environ.get("MEMCOURSE_EXCHANGE", "/srv/nbgrader/exchange"))
COURSE_ID = "memcourse"
GROUP = "memcourse"
PROXY_PACKAGE = "configurable-http-proxy@5"
SYSTEM_PYTHON = "/usr/bin/python3"
# what the single-user servers need of the course (world-readable; never solutions/): the
# lab, its guard of a student's work (the course's sanitizer), the grader's box and kernels
# (with their package's imports), the exchange's collect (an nbgrader plugin, with the
# helpers of tools/common it writes its report with)
LAB_FILES = ["jupyter", "book", "tools/__init__.py", "tools/lab/__init__.py",
             "tools/lab/launch.py", "tools/lab/contents.py", "tools/lab/student_work.py",
             "tools/lab/scores_page.py", "tools/lab/notebook_check.py", "tools/lab/validate.py",
             "tools/lab/boxed_kernels.py", "tools/grading/box.py", "tools/grading/kernels.py",
             "tools/book/__init__.py", "tools/book/toc.py", "tools/book/study_time.py",
             "tools/book/take_away.py",
             "tools/grading/student_files.py", "tools/common/safe_files.py", "tools/common/nbgrader_cells.py",
             "tools/grading/__init__.py", "tools/common/sanitize.py", "tools/release",
             "tools/common/__init__.py", "tools/common/text.py", "tools/common/nbgrader_cli.py",
             "tools/hub/__init__.py", "tools/hub/exchange.py", "tools/hub/shares.py",
             "tools/hub/hub_exchange_client.py"]
# what the instructor's nbgrader imports from the course folder (the exchange's collect),
# and what `make publish` runs there (kept up to date in a copy an older `make hub` made)
PLUGIN_FILES = ["tools/__init__.py", "tools/common/__init__.py", "tools/common/text.py",
                "tools/common/safe_files.py", "tools/hub/__init__.py", "tools/hub/exchange.py",
                "tools/hub/shares.py", "tools/hub/course_repo.py", "tools/hub/hub_exchange_client.py"]
# what memkit's package is built from
PACKAGE_FILES = ["memkit", "pyproject.toml"]  # memkit/README.md: its readme


def say(message: str) -> None:
    print(message, flush=True)


@dataclass
class Hub:
    """Where one hub keeps its things (``make hub``'s defaults; the test uses its own)."""

    prefix: Path = PREFIX                       # venv, node, lab (shared by every hub)
    state: Path = PREFIX / "hub"                # the hub's database, secrets, PIDs, logs
    exchange: Path = EXCHANGE
    users: str = "mc-"                          # user names: <users>instructor, <users>studentN
    students: int = 2
    tas: list = field(default_factory=list)     # teaching assistants' users (tools.hub.staff)
    port: int = 8000
    exchange_mb: int = 1024                     # the exchange's file system (0: the disk's)
    submission_mb: int = 20                     # one submission, at submit and at collect
    share_mb: int = 30                          # each student's share of the exchange
    limits: limits.Limits = field(default_factory=limits.Limits)  # per user (tools.hub.limits)
    one_user: bool = False                      # every student's server as <users>pod
    extra_env: dict = field(default_factory=dict)

    @property
    def venv(self) -> Path:
        return self.prefix / "venv"

    @property
    def lab(self) -> Path:
        return self.prefix / "lab"

    @property
    def proxy(self) -> Path:
        return self.prefix / "node" / "node_modules" / ".bin" / "configurable-http-proxy"

    @property
    def instructor(self) -> str:
        return f"{self.users}instructor"

    @property
    def student_names(self) -> list[str]:
        return [f"{self.users}student{i}" for i in range(1, self.students + 1)]

    @property
    def url(self) -> str:
        """The hub's address (its users' servers are at http://<user>.localhost:<port>)."""
        return f"http://localhost:{self.port}"

    @property
    def pod_user(self) -> str:  # every student's server's Unix user in one-user mode
        return f"{self.users}pod"

    def pod_home(self, student: str) -> Path:
        """A student's home in one-user mode (as jupyterhub_config.py's pod_home)."""
        return self.home(self.pod_user) / student

    def user_url(self, user: str) -> str:
        return f"http://{user}.localhost:{self.port}/user/{user}"

    def home(self, user: str) -> Path:
        return Path(pwd.getpwnam(user).pw_dir)

    def course_dir(self) -> Path:
        return self.home(self.instructor) / COURSE_ID

    @property
    def public(self) -> Path:
        """The repository the students pull the course from (beside the hub's state)."""
        return self.state.parent / "public" / COURSE_ID


# -- 1. the proxy ------------------------------------------------------------------
def ensure_proxy(hub: Hub) -> None:
    if hub.proxy.exists():
        return
    say(f"installing {PROXY_PACKAGE} (npm) into {hub.prefix / 'node'}")
    (hub.prefix / "node").mkdir(parents=True, exist_ok=True)
    done = npm(["install", "--no-audit", "--no-fund", "--silent",
                "--prefix", str(hub.prefix / "node"), PROXY_PACKAGE], hub.prefix / "node")
    if done.returncode != 0 or not hub.proxy.exists():
        raise SystemExit(f"installing {PROXY_PACKAGE} failed:\n{done.stdout}{done.stderr}")


# -- 2. the users' environment -----------------------------------------------------
def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for f in files:
            if "__pycache__" in f.parts or f.suffix == ".pyc":
                continue
            h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def ensure_venv(hub: Hub) -> None:
    """/srv/memcourse/venv from Debian's Python: requirements.txt, then memkit (not editable)."""
    venv, pip = hub.venv, [str(hub.venv / "bin" / "python"), "-m", "pip", "--quiet"]
    if not Path(SYSTEM_PYTHON).exists():
        raise SystemExit(f"{SYSTEM_PYTHON} is missing: apt-get install python3 python3-venv")
    requirements = _digest([ROOT / "requirements.txt"])
    package = _digest([ROOT / p for p in PACKAGE_FILES])
    stamp = venv / ".memcourse-stamp"
    done = json.loads(stamp.read_text()) if stamp.exists() else {}
    if done.get("requirements") != requirements:
        say(f"making the users' environment {venv} (Debian's Python; a few minutes the first time)")
        if not (venv / "bin" / "python").exists():
            subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(venv)], check=True)
        subprocess.run(pip + ["install", "--upgrade", "pip", "setuptools>=64", "wheel"], check=True)
        subprocess.run(pip + ["install", "-r", str(ROOT / "requirements.txt")], check=True)
        done = {"requirements": requirements}
    if done.get("package") != package:
        say("installing memkit into the users' environment")
        build = hub.prefix / "build"
        shutil.rmtree(build, ignore_errors=True)
        for name in PACKAGE_FILES:
            _copy(ROOT / name, build / name)
        subprocess.run(pip + ["install", "--no-deps", "--no-build-isolation",
                              "--force-reinstall", str(build)], check=True)
        shutil.rmtree(build, ignore_errors=True)
        done["package"] = package
    stamp.write_text(json.dumps(done) + "\n")
    (venv / ".installed").touch()  # the Makefile's stamp: `make grade` in a course copy
    _world_readable(venv)
    _world_readable(hub.prefix / "node")


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
    if src.is_dir():
        shutil.copytree(src, dest, ignore=ignore, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dest)


def _world_readable(path: Path) -> None:
    """Readable by the users: the venv, the proxy, the lab's files (never the state folder,
    which holds the hub's secrets and the passwords)."""
    subprocess.run(["chmod", "-R", "a+rX,go-w", str(path)], check=True)


# -- 3. the lab's files ------------------------------------------------------------
def ensure_lab(hub: Hub) -> None:
    from tools.lab import launch

    for name in LAB_FILES:  # copied over (a running hub keeps working)
        _copy(ROOT / name, hub.lab / name)
    for role in launch.ROLES:
        config = hub.lab / "_build" / "lab" / role / "labconfig"
        config.mkdir(parents=True, exist_ok=True)
        (config / "page_config.json").write_text(
            json.dumps(launch.page_config(role, exchange=True), indent=1) + "\n")
    _world_readable(hub.lab)


# -- 4. users ----------------------------------------------------------------------
def _exists(user: str) -> bool:
    try:
        pwd.getpwnam(user)
        return True
    except KeyError:
        return False


def ensure_users(hub: Hub) -> dict[str, str]:
    """The instructor and the students (Unix users of the group), with their passwords."""
    try:
        grp.getgrnam(GROUP)
    except KeyError:
        subprocess.run(["groupadd", GROUP], check=True)
    hub.state.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.state, 0o700)
    secrets_file = hub.state / "passwords.json"
    known = json.loads(secrets_file.read_text()) if secrets_file.exists() else {}
    passwords = {}
    for user in [hub.instructor] + hub.tas + hub.student_names:
        if not _exists(user):
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash",
                            "--gid", GROUP, user], check=True)
            known.pop(user, None)
        password = known.get(user) or secrets.token_urlsafe(9)
        subprocess.run(["chpasswd"], input=f"{user}:{password}\n", text=True, check=True)
        passwords[user] = password
        os.chmod(hub.home(user), 0o700)
        if user != hub.instructor and hub.limits.home_mb:  # a home of its own size
            entry = pwd.getpwnam(user)
            say(limits.mount_home(hub.home(user), hub.state / "homes" / f"{user}.img",
                                  hub.limits.home_mb, entry.pw_uid, entry.pw_gid))
        user_files.nbgrader_config(hub, user, COURSE_ID, GROUP)
        if user != hub.instructor:  # git reads the instructor's repository of the course
            entry = pwd.getpwnam(user)
            course_repo.student_gitconfig(hub.home(user), hub.public, (entry.pw_uid, entry.pw_gid))
    secrets_file.write_text(json.dumps(passwords, indent=1) + "\n")
    os.chmod(secrets_file, 0o600)
    if hub.one_user:
        user_files.ensure_pod_homes(hub, COURSE_ID, GROUP)
    ensure_course(hub)
    listed = hub.course_dir() / class_list.NAME  # each student's seat, before their first login
    class_list.add(listed, hub.student_names)  # a regular file only: no link followed as root
    entry = pwd.getpwnam(hub.instructor)
    os.chown(listed, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
    return passwords


def _as_user(user: str, path: Path) -> None:
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)


def course_files() -> list[str]:
    """The course's files (git's: tracked, or new and not ignored), else all but work folders."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=False)
    if listed.returncode == 0 and listed.stdout:
        return [f for f in listed.stdout.decode().split("\0") if f and (ROOT / f).is_file()]
    skip = {".venv", "_build", ".git", "submitted", "autograded", "feedback"}
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(ROOT).parts)]


def ensure_course(hub: Hub) -> None:
    """The instructor's course folder: a copy of the course (made once; kept after)."""
    course = hub.course_dir()
    if not (course / "nbgrader_config.py").exists():
        say(f"copying the course into {course}")
        for name in course_files():
            _copy(ROOT / name, course / name)
    # nbgrader run in the course folder imports its collect plugin from there (it puts the
    # folder first on sys.path): kept the hub's own in a copy made by an older `make hub`
    for name in PLUGIN_FILES:
        if not (course / name).exists() or (course / name).read_bytes() != (ROOT / name).read_bytes():
            say(f"updating {course / name} (the collect nbgrader runs there)")
            _copy(ROOT / name, course / name)
    if not (course / "start.md").exists():  # a copy made before the start page
        _copy(ROOT / "start.md", course / "start.md")
    link = course / ".venv"
    if link.is_symlink() or not link.exists():
        link.unlink(missing_ok=True)
        link.symlink_to(hub.venv)
    entry = pwd.getpwnam(hub.instructor)
    subprocess.run(["chown", "-R", "--no-dereference", f"{entry.pw_uid}:{entry.pw_gid}",
                    str(course)], check=True)


def ensure_public(hub: Hub) -> str:
    """The repository the students pull (nbgitpuller), the instructor's course published
    to it (``tools.hub.course_repo``; the instructor publishes again with `make publish`)."""
    entry = pwd.getpwnam(hub.instructor)
    hub.public.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.public.parent, 0o755)
    course_repo.configure(hub.public, hub.url)
    commit = course_repo.publish(hub.course_dir(), hub.public, hub_url=hub.url)
    course_repo.configure(hub.public, hub.url, (entry.pw_uid, entry.pw_gid))  # the objects too
    return commit


# -- 5. the exchange ---------------------------------------------------------------
def ensure_exchange(hub: Hub) -> None:
    """nbgrader's exchange on a file system of its own size, the course's folders laid
    out for the instructor before any student can squat them (``tools.hub.exchange``)."""
    hub.state.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.state, 0o700)
    if hub.exchange_mb:
        say("the exchange: " + exchange.mount_limited(hub.exchange, hub.state / "exchange.img",
                                                      hub.exchange_mb))
    else:
        say(f"the exchange {hub.exchange} shares the disk (--exchange-size 0)")
    for line in exchange.lay_out(hub.exchange, COURSE_ID, hub.instructor):
        say("WARNING: " + line)
    graders = staff.graders_group(COURSE_ID)  # they read and clear the students' shares
    staff.ensure_group(graders, [hub.instructor] + list(hub.tas))
    for student in hub.student_names:  # each student's share, its own size
        say(shares.make_share(hub.exchange / COURSE_ID / "inbound", student, graders,
                              hub.state / "shares" / f"{student}.img",
                              hub.share_mb if hub.exchange_mb else 0, exchange.mount_limited))
    parent = hub.exchange.parent
    while parent != parent.parent and not os.stat(parent).st_mode & 0o001:
        os.chmod(parent, os.stat(parent).st_mode | 0o011)  # reachable by the users
        parent = parent.parent


# -- 6. the hub --------------------------------------------------------------------
def environment(hub: Hub) -> dict:
    env = dict(os.environ)
    env.update({
        "MEMCOURSE_HUB_PORT": str(hub.port),
        "MEMCOURSE_HUB_API_PORT": str(free_port()),    # the hub's own API (internal)
        "MEMCOURSE_HUB_PROXY_API": str(free_port()),   # the proxy's API (internal)
        "CONFIGPROXY_AUTH_TOKEN": secrets.token_hex(32),  # the hub's key to the proxy's API
        "MEMCOURSE_HUB_STATE": str(hub.state),
        "MEMCOURSE_HUB_VENV": str(hub.venv),
        "MEMCOURSE_HUB_LAB": str(hub.lab),
        "MEMCOURSE_HUB_GROUP": GROUP,
        "MEMCOURSE_HUB_INSTRUCTORS": hub.instructor,
        "MEMCOURSE_HUB_USERS": ",".join([hub.instructor] + hub.tas + hub.student_names),
        **staff.environment(hub, COURSE_ID),  # the graders, the course (its extensions)
        "MEMCOURSE_HUB_LIMITS": hub.limits.to_env(),  # each user's cgroup (tools.hub.limits)
        "MEMCOURSE_EXCHANGE": str(hub.exchange),
        "MEMCOURSE_HUB_COURSE_REPO": course_repo.url(hub.public),  # the students' git-pull
        # each student's seat (none before the instructor exists: `start` comes after it)
        "MEMCOURSE_HUB_CLASS_LIST": str(hub.course_dir() / class_list.NAME) if _exists(hub.instructor) else "",
    })
    if hub.one_user:  # every student as one Unix user; the exchange service
        env.update({"MEMCOURSE_HUB_ONE_USER": hub.pod_user,
                    "MEMCOURSE_HUB_EXCHANGE_PORT": str(free_port()), "MEMCOURSE_HUB_EXCHANGE_ARGS":
                    f"--share-mb {hub.share_mb} --submission-mb {hub.submission_mb}"})
    env.update(hub.extra_env)
    return env


def start(hub: Hub, ready_timeout: float = 120) -> subprocess.Popen:
    """Start the proxy, then JupyterHub, in the background; return when the hub's login page
    answers through the proxy."""
    pid_file = hub.state / "hub.pid"
    if processes.running_pid(pid_file):
        raise SystemExit(f"a hub is running already (PID {processes.running_pid(pid_file)}): "
                         "make hub-stop first")
    hub.state.mkdir(parents=True, exist_ok=True)
    subprocess.run(["chmod", "-R", "go-rwx", str(hub.state)], check=True)  # root's only
    stale = processes.running_pid(hub.state / "proxy.pid")  # a crashed hub's: it would hold the port
    if stale:
        processes.end(stale)
    env = environment(hub)
    hub_api.grant(hub.state, int(env["MEMCOURSE_HUB_API_PORT"]))  # make hub-stop's token
    deadline = time.monotonic() + ready_timeout
    api_port = int(env["MEMCOURSE_HUB_PROXY_API"])
    proxy = processes.background(
        [str(hub.proxy), "--ip", "127.0.0.1", "--port", str(hub.port),
         "--api-ip", "127.0.0.1", "--api-port", str(api_port),
         "--error-target", f"http://127.0.0.1:{env['MEMCOURSE_HUB_API_PORT']}/hub/error"]
        + (["--host-routing"] if env.get("MEMCOURSE_HUB_SUBDOMAINS", "1") == "1" else []),
        hub.state, env, "proxy.log", "proxy.pid")
    try:
        processes.wait_listening(proxy, [hub.port, api_port], hub.state / "proxy.log", deadline)
    except RuntimeError:
        stop(hub)
        raise
    process = processes.background([sys.executable, "-m", "jupyterhub", "-f", str(CONFIG_FILE)],
                                    hub.state, env, "jupyterhub.log", "hub.pid")
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = (hub.state / "jupyterhub.log").read_text(errors="replace")[-3000:]
            stop(hub)  # and its proxy
            raise RuntimeError(f"JupyterHub stopped at start:\n{tail}")
        try:
            with urllib.request.urlopen(f"{hub.url}/hub/login", timeout=5) as response:
                if response.status == 200:
                    return process
        except OSError:
            pass
        time.sleep(0.5)
    stop(hub)
    raise RuntimeError(f"JupyterHub not ready after {ready_timeout} s")


def hub_users(hub: Hub) -> list[str]:
    """The Unix users this hub made (its passwords file), or the ones it would make."""
    known = hub.state / "passwords.json"
    pods = [hub.pod_user] if _exists(hub.pod_user) else []  # one-user mode's
    try:
        return list(json.loads(known.read_text())) + pods
    except (OSError, ValueError):
        return [hub.instructor] + hub.student_names + pods


def stop(hub: Hub, timeout: float = 30) -> list[int]:
    """Stop the hub by its PID, then whatever it left, by their PIDs: the servers it named
    when asked before it stopped (``tools.hub.hub_api``; none from a hub that does not
    answer), the proxy; then every process of the hub's users, servers included; then
    unmount the exchange's file system."""
    pid = processes.running_pid(hub.state / "hub.pid")
    others = hub_api.server_pids(hub.state) if pid else []
    proxy = processes.running_pid(hub.state / "proxy.pid")
    stopped = [pid] if pid and processes.end(pid, timeout) else []  # it stops its servers
    stopped += [other for other in others + [proxy] if other and processes.end(other)]
    for name in ("hub.pid", "proxy.pid", hub_api.FILE):
        (hub.state / name).unlink(missing_ok=True)
    users = [user for user in hub_users(hub) if _exists(user)]
    stopped += processes.end_all(users, say)
    for problem in (p for user in users for p in limits.release(user, hub.home(user))):
        say(f"WARNING: {problem}")
    students = {pwd.getpwnam(u).pw_uid for u in users if u != hub.instructor}
    for path in processes.remove_files_of(students):  # /tmp, /dev/shm, /run/lock
        say(f"removed {path} (left by a student)")
    if hub.exchange_mb and not exchange.unmount(hub.exchange):
        say(f"WARNING: the exchange {hub.exchange} is still mounted (in use?)")
    return stopped


def clear_exchange(hub: Hub) -> int:
    """The exchange emptied for a new term, as root, with the hub stopped."""
    if processes.running_pid(hub.state / "hub.pid"):
        raise SystemExit("the hub is running: make hub-stop first")
    service = hub.state / "exchange-service"  # one-user mode's (tools/hub/hub_exchange.py)
    for name in ("releases", "submissions", "feedback"):
        if (service / name).is_dir():
            shutil.rmtree(service / name)
            say(f"removed {service / name}")
    ensure_exchange(hub)  # mounted, with the shares, the course's folders laid out again
    say(f"removed {len(shares.clear(hub.exchange, COURSE_ID))} entries from {hub.exchange}")
    return 0 if not hub.exchange_mb or exchange.unmount(hub.exchange) else 1


def install(hub: Hub) -> dict[str, str]:
    if os.geteuid() != 0:
        raise SystemExit("make hub creates Unix users and runs servers as them: run it as root")
    ensure_proxy(hub)
    ensure_venv(hub)
    ensure_lab(hub)
    passwords = ensure_users(hub)
    ensure_public(hub)
    if not hub.one_user:  # before the hub starts (one-user mode: the hub's service)
        ensure_exchange(hub)
    staff.ensure(hub, COURSE_ID)  # the due dates in the gradebook, the graders' share
    return passwords


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.hub", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["start", "stop", "clear-exchange"],
                        help="clear-exchange: with the hub stopped, empty the exchange for a "
                             "new term (the released assignments, every share, the feedback)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("HUB_PORT") or 0),
                        help="default 8000, or a free port if 8000 is taken")
    parser.add_argument("--students", type=int, default=2)
    parser.add_argument("--tas", default="", help="teaching assistants' user names (graders)")
    parser.add_argument("--exchange-size", type=int, default=Hub.exchange_mb, metavar="MB",
                        help="the exchange's own file system, made once (default %(default)s; "
                             "0: none, the exchange shares the disk)")
    parser.add_argument("--submission-size", type=int, default=Hub.submission_mb, metavar="MB",
                        help="the largest submission, at submit and at collect (default %(default)s)")
    parser.add_argument("--share-size", type=int, default=Hub.share_mb, metavar="MB",
                        help="each student's share of the exchange (default %(default)s)")
    parser.add_argument("--one-unix-user", action="store_true",
                        help="every student's server runs as one Unix user (<prefix>pod), as "
                             "pods on Kubernetes; the exchange is the course's service "
                             "(tools/hub/hub_exchange.py)")
    parser.add_argument("--limits", default="", metavar="KEY=VALUE,...",
                        help="each user's limits, e.g. memory_mb=1024,pids=128,cpus=0.5,"
                             f"home_mb=2048 (defaults: {limits.Limits().to_env()})")
    args = parser.parse_args(argv)
    try:
        limited = limits.Limits.from_env(args.limits)
    except ValueError as exc:
        parser.error(f"--limits: {exc}")
    hub = Hub(students=args.students, tas=args.tas.split(), exchange_mb=args.exchange_size,
              submission_mb=args.submission_size, share_mb=args.share_size, limits=limited,
              one_user=args.one_unix_user)
    if args.action == "clear-exchange":
        return clear_exchange(hub)
    if args.action == "stop":
        stopped = stop(hub)
        say(f"stopped PIDs {' '.join(map(str, stopped))}" if stopped else "no hub was running")
        return 0
    hub.port = args.port or (8000 if port_free(8000) else free_port())
    passwords = install(hub)
    start(hub)
    say("")
    say(f"The course hub: {hub.url}  (127.0.0.1 only; log: {hub.state / 'jupyterhub.log'})")
    say(f"Each user's lab is on an address of its own, http://<user>.localhost:{hub.port}: a "
        "browser on this machine (or at the end of an SSH tunnel to it) finds it.")
    say("Log in with one of these accounts (Unix users of the group memcourse):")
    for user, password in passwords.items():
        role = "instructor" if user == hub.instructor else "grader" if user in hub.tas else "student"
        say(f"  {user:<16} {password:<14} {role}")
    say(f"Students: menu Nbgrader > Assignment List (Fetch, then Submit). Instructor: Formgrader,"
        f" and a terminal in ~/{COURSE_ID} (nbgrader release_assignment session-3, nbgrader"
        " collect session-3, make grade, nbgrader release_feedback session-3); the entries"
        f" collect refuses are listed in ~/{COURSE_ID}/refused/<assignment>.csv.")
    say(f"The course the students pull (nbgitpuller; _config.yml's repository.url for the HTML "
        f"book's launch buttons, with jupyterhub_url {hub.url}): {course_repo.url(hub.public)};"
        f" after a correction in ~/{COURSE_ID}, `make publish` there.")
    say("Stop it with: make hub-stop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
