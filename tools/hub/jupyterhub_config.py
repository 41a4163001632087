# JupyterHub configuration of the course hub (`make hub`, tools/hub/local.py).
#
# A local hub on 127.0.0.1: real Unix users of the group `memcourse` log in with their
# password (PAM); each gets a single-user JupyterLab run as that user from the users'
# environment (a virtual environment every user can read), with the course's lab
# configuration (jupyter/ of the course: chapters drawn as the book, the kernel
# "Python 3", nbgrader's Assignments tab for students, Formgrader for the instructor).
# nbgrader's exchange and course id are in each user's ~/.jupyter/nbgrader_config.py.
#
# tools/hub/local.py passes the places in the environment; the defaults are `make hub`'s. To
# move this to your own hub, keep the Spawner part (environment, cmd, default_url,
# pre_spawn_hook) and replace the rest by your hub's settings (README, "The course hub").
import grp
import os
import sys
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner

c = get_config()  # noqa: F821 (JupyterHub's config loader provides it)
# the course's folder, for tools.hub (the hub runs from the course's environment)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.hub import hub_api, limits  # noqa: E402

env = os.environ.get
STATE = env("MEMCOURSE_HUB_STATE", "/srv/memcourse/hub")
VENV = env("MEMCOURSE_HUB_VENV", "/srv/memcourse/venv")
LAB = env("MEMCOURSE_HUB_LAB", "/srv/memcourse/lab")  # jupyter/, tools/lab/, book/
GROUP = env("MEMCOURSE_HUB_GROUP", "memcourse")
INSTRUCTORS = set(filter(None, env("MEMCOURSE_HUB_INSTRUCTORS", "mc-instructor").split(",")))
# the teaching assistants (tools/hub/staff.py): graders, with the instructor's lab (Formgrader)
# in the instructor's course folder, whose files Unix keeps the instructor's
GRADERS = set(filter(None, env("MEMCOURSE_HUB_GRADERS", "").split(",")))
COURSE = env("MEMCOURSE_HUB_COURSE", "")  # the instructor's course folder (its extensions.yml)
COURSE_ID = "memcourse"
EXCHANGE = env("MEMCOURSE_EXCHANGE", "/srv/nbgrader/exchange")

# -- the hub and its proxy: 127.0.0.1 only ----------------------------------------
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = int(env("MEMCOURSE_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(env("MEMCOURSE_HUB_API_PORT", "8081"))
# the proxy is started before the hub, by tools/hub/local.py, and waited on for as long as a
# loaded machine needs (a hub that starts its own proxy gives node 10 s): the hub finds it
# at its API with the token both are given (CONFIGPROXY_AUTH_TOKEN)
c.ConfigurableHTTPProxy.should_start = False
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{int(env('MEMCOURSE_HUB_PROXY_API', '8001'))}"
c.JupyterHub.db_url = f"sqlite:///{os.path.join(STATE, 'jupyterhub.sqlite')}"
c.JupyterHub.cookie_secret_file = os.path.join(STATE, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(STATE, "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every user's server
# make hub-stop asks the hub for its servers' PIDs (tools/hub/hub_api.py): a service of its
# own, whose token tools/hub/local.py wrote to the state folder before the hub started
SERVICES = [service for service in [hub_api.service(Path(STATE))] if service]
ROLES = [hub_api.role()] if SERVICES else []
# each user's server on an origin of its own, http://<user>.localhost:<port> (a browser
# finds *.localhost on this machine; so does an SSH tunnel's end): a page that a student's
# server sends, whatever the student made it send, cannot reach another user's server,
# the instructor's among them (on one origin it could, through the instructor's cookies)
if env("MEMCOURSE_HUB_SUBDOMAINS", "1") == "1":
    c.JupyterHub.subdomain_host = f"http://localhost:{c.JupyterHub.port}"

# -- who may log in: the Unix users of the course's group, with their password --------
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.allowed_groups = {GROUP}
c.PAMAuthenticator.open_sessions = False  # no login session (pam_loginuid) for a server
c.Authenticator.admin_users = set(INSTRUCTORS)
# nbgrader's groups of a course (its multi-grader setup): its graders, its students
c.JupyterHub.load_groups = {
    f"formgrade-{COURSE_ID}": sorted(INSTRUCTORS | GRADERS),
    f"nbgrader-{COURSE_ID}": sorted(set(filter(None, env("MEMCOURSE_HUB_USERS", "").split(",")))
                                    - INSTRUCTORS - GRADERS),
}
# the hub's own pages (/hub/home, the spawn page) say where the course is
c.JupyterHub.template_paths = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")]
c.JupyterHub.template_vars = {
    "announcement_login": "Transformers as memory: log in with the account and password your "
    "instructor gave you (<code>make hub</code> prints them). Your assignments are in the "
    "lab's menu <b>Nbgrader &gt; Assignment List</b>.",
}

# -- each user's server: the course's lab, run as that user ------------------------
LIMITS = limits.Limits.from_env(env("MEMCOURSE_HUB_LIMITS", ""))  # `make hub`'s options


class LimitedSpawner(LocalProcessSpawner):
    """LocalProcessSpawner whose server runs in its user's cgroup (tools/hub/limits.py):
    made by the hub, entered by the forked child before it becomes the user, with
    RLIMIT_NPROC and RLIMIT_DATA; all the server starts is born there."""

    def make_preexec_fn(self, name):
        become = super().make_preexec_fn(name)
        instructor = role_of(self.user.name) == "instructor"
        procs = limits.make_group(self.user.name, LIMITS, instructor)

        def preexec():
            limits.enter(procs)
            limits.set_rlimits(LIMITS, instructor)
            become()

        return preexec


# -- one Unix user for every student (make hub ONE_UNIX_USER=1), as pods on Kubernetes --
# Every student's server runs as the Unix user ONE_USER, in a home of its own under that
# user's home (a pod's volume) and a bubblewrap that shows it that home only; the
# instructor and the graders keep their own users (their course folder). Unix owners then tell no student from another, so the exchange is the
# course's service (tools/hub/hub_exchange.py), which knows the caller from the hub.
ONE_USER = env("MEMCOURSE_HUB_ONE_USER", "")
EXCHANGE_PORT = env("MEMCOURSE_HUB_EXCHANGE_PORT", "")
EXCHANGE_URL = f"http://127.0.0.1:{EXCHANGE_PORT}/services/exchange/" if EXCHANGE_PORT else ""


def pod_home(name: str) -> str:
    """A student's home in one-user mode: <ONE_USER's home>/<hub user> (tools/hub/local.py
    makes it, with its nbgrader configuration)."""
    import pwd

    return os.path.join(pwd.getpwnam(ONE_USER).pw_dir, name)


class OneUserSpawner(LimitedSpawner):
    """LimitedSpawner whose students' servers all run as ONE_USER, each in its own home.
    A student's server runs in bubblewrap, as in a pod of its own: ONE_USER's home shows
    only that student's home, and /proc only the server's own processes (the classmates'
    processes, of the same Unix user, are not reachable)."""

    def make_preexec_fn(self, name):
        return super().make_preexec_fn(ONE_USER if role_of(name) == "student" else name)

    async def start(self):
        self.cmd = [os.path.join(VENV, "bin", "jupyterhub-singleuser")]
        if role_of(self.user.name) == "student":
            home = pod_home(self.user.name)
            self.cmd = ["bwrap", "--dev-bind", "/", "/", "--tmpfs", os.path.dirname(home),
                        "--bind", home, home, "--unshare-pid", "--proc", "/proc",
                        "--die-with-parent", "--chdir", home, "--"] + self.cmd
        return await super().start()

    def user_env(self, env):
        env = super().user_env(env)
        if role_of(self.user.name) == "student":
            env.update({"USER": ONE_USER, "HOME": pod_home(self.user.name)})
        return env


c.JupyterHub.spawner_class = OneUserSpawner if ONE_USER else LimitedSpawner
if EXCHANGE_PORT:  # the exchange service, started and stopped by the hub
    COURSE_CODE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    SERVICES.append({
        "name": "exchange", "url": f"http://127.0.0.1:{EXCHANGE_PORT}",
        "command": [sys.executable, "-m", "tools.hub.hub_exchange",
                    "--root", os.path.join(STATE, "exchange-service"), "--course", COURSE_ID,
                    *env("MEMCOURSE_HUB_EXCHANGE_ARGS", "").split()],
        "environment": {"PYTHONPATH": COURSE_CODE}, "cwd": STATE,
    })
    ROLES += [
        # the service reads who is in the course's groups
        {"name": "exchange-service", "scopes": ["read:users:groups", "read:users:name"],
         "services": ["exchange"]},
        # every user may call it (with their own token), their server's token too
        {"name": "user", "scopes": ["self", "access:services!service=exchange"]},
    ]
    c.Spawner.server_token_scopes = ["users:activity!user", "access:servers!server",
                                     "access:services!service=exchange"]
if SERVICES:
    c.JupyterHub.services = SERVICES
    c.JupyterHub.load_roles = ROLES
c.Spawner.cmd = [os.path.join(VENV, "bin", "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = int(env("MEMCOURSE_HUB_START_TIMEOUT", "180"))
c.Spawner.http_timeout = int(env("MEMCOURSE_HUB_START_TIMEOUT", "180"))
if env("MEMCOURSE_HUB_EXPOSE_APP") == "1":  # the end-to-end test asks JupyterLab from the page
    c.Spawner.args = ["--LabApp.expose_app_in_browser=True"]


def role_of(name: str) -> str:
    if name in INSTRUCTORS or name in GRADERS:  # a grader gets the instructor's lab
        return "instructor"
    try:
        return "instructor" if name in grp.getgrnam(f"{GROUP}-instructors").gr_mem else "student"
    except KeyError:
        return "student"


COURSE_REPO = env("MEMCOURSE_HUB_COURSE_REPO", "")  # the course the students pull
# the instructor's class list (memkit.class_list): a student on it gets their seat, which
# orders their options as the grader will (read at each spawn: a student added is seated)
CLASS_LIST = env("MEMCOURSE_HUB_CLASS_LIST", "")


def course_page(repo: str) -> str:
    """A student's first page: nbgitpuller's link, which pulls the course into ~/memcourse
    (a clone the first time, a merge of the instructor's updates later) and opens its
    start page (the chapters, the assignments, the due dates)."""
    from urllib.parse import urlencode

    query = urlencode({"repo": repo, "branch": "main",
                       "urlpath": "lab/tree/memcourse/start.md"}, safe="/:")
    return f"/git-pull?{query}"


def course_lab(spawner) -> None:
    """The course's lab configuration for this user's role (as tools/lab/launch.py gives it)."""
    role = role_of(spawner.user.name)
    if role == "student" and COURSE_REPO:
        spawner.default_url = course_page(COURSE_REPO)
    if COURSE_REPO.startswith("file://"):  # `make publish` in the instructor's terminal
        spawner.environment["MEMCOURSE_PUBLIC_REPO"] = COURSE_REPO[len("file://"):]
    spawner.environment.update({
        "PATH": f"{VENV}/bin:/usr/local/bin:/usr/bin:/bin",  # the kernel's `python`
        "JUPYTER_CONFIG_PATH": f"{LAB}/_build/lab/{role}:{LAB}/jupyter",
        "JUPYTER_PATH": f"{LAB}/jupyter",
        "PYTHONPATH": LAB,  # tools.lab.launch (server extension), tools.lab.contents
        "MEMCOURSE_ROLE": role,
        "MEMCOURSE_EXCHANGE_FOUND": "1",
        "MEMCOURSE_EXCHANGE": EXCHANGE,
    })
    if EXCHANGE_URL:  # the course's exchange service (tools/hub/hub_exchange_client.py)
        spawner.environment["MEMCOURSE_EXCHANGE_URL"] = EXCHANGE_URL
    if role == "student" and CLASS_LIST:
        from memkit import class_list, variants

        seat = class_list.read(CLASS_LIST).get(spawner.user.name)  # a broken list: no spawn
        if seat is not None:
            spawner.environment[variants.SEAT_ENV] = str(seat)
    if spawner.user.name in GRADERS and COURSE:  # Formgrader wants the course under the lab's root
        spawner.notebook_dir = COURSE
    if role == "student" and COURSE:  # the student's own due dates (extensions.yml)
        from tools.lab import scores_page

        try:
            spawner.environment[scores_page.EXTENSIONS_ENV] = scores_page.extensions_of(
                COURSE, spawner.user.name)
        except SystemExit as exc:  # the instructor's make publish says it too
            spawner.log.warning("extensions not given to %s: %s", spawner.user.name, exc)


c.Spawner.pre_spawn_hook = course_lab
