"""JupyterHub configuration for a class taking rlprep's labs on one machine (``make hub``).

It reads ``$RLPREP_HUB_SETTINGS`` (``build/hub/state/hub.json`` by default), written by ``rlprep classroom hub``
(``rlprep.classroom.hub.setup``): the accounts, the interpreter every account can run, the course folder and the
proxy. The roles and groups follow nbgrader's ``demos/demo_one_class_multiple_graders`` and
``demos/demo_multiple_classes``: ``formgrade-rlprep`` may open the formgrader service, ``nbgrader-rlprep`` may list
it; formgrader is a hub-managed service named after the course, running as the instructor in the course's
``autograder/`` folder, whose ``nbgrader_config.py`` it reads (the sandboxed grader and the sanitiser).

For a real class change, at least: the authenticator (PAM with the unix accounts here; NativeAuthenticator or an
OAuthenticator for a university login), TLS (``c.JupyterHub.ssl_cert``/``ssl_key``, or a reverse proxy that
terminates it) and ``bind_url`` (README, "Instructors": what was run and what was not).
"""

import json
import os
from pathlib import Path

s = json.loads(Path(os.environ.get("RLPREP_HUB_SETTINGS", "build/hub/state/hub.json")).read_text())
root, course, instructor = Path(s["root"]), s["course"], s["instructor"]
state = root / "state"  # mode 0700: the hub's database, cookie secret and the proxy's pid stay root's
users = [instructor, *s["students"]]

c = get_config()  # noqa: F821 - provided by JupyterHub when it loads this file

c.JupyterHub.bind_url = f"http://{s['ip']}:{s['port']}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = s["hub_port"]
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.command = [s["proxy"]]
c.ConfigurableHTTPProxy.pid_file = str(state / "jupyterhub-proxy.pid")
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{s['port'] + 1}"

# Who may log in: the unix accounts `rlprep classroom hub` made (PAM, their passwords in ROOT/state/credentials.txt).
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False  # no login session per server (containers have no systemd-logind)
c.Authenticator.allowed_users = set(users)
# No hub admin: an admin may open every student's server (and run code there as that student); formgrader needs
# only the formgrade-rlprep role below. Add one with c.Authenticator.admin_users = {...} if you want the admin page.

# nbgrader's groups: everyone in the course, and who grades.
c.JupyterHub.load_groups = {f"nbgrader-{course}": {"users": users},
                            f"formgrade-{course}": {"users": [instructor]}}
c.JupyterHub.load_roles = [
    {"name": f"formgrade-{course}", "groups": [f"formgrade-{course}"],
     "scopes": [f"access:services!service={course}", "list:services", f"read:services!service={course}"]},
    {"name": f"nbgrader-{course}", "groups": [f"nbgrader-{course}"],
     "scopes": ["list:services", f"read:services!service={course}"]},
    {"name": "server", "scopes": ["inherit"]},  # the course list asks the hub which services the user may open
]

# Each user's own JupyterLab, as that unix user, with the course's interpreter.
c.Spawner.cmd = [s["python"], "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {"JUPYTER_CONFIG_PATH": s["jupyter_config"], "PATH": s["service_env"]["PATH"],
                         "RLPREP_PROFILE": s["profile"]}

# Formgrader: the course's own service, as the instructor, in autograder/ (its nbgrader_config.py applies).
c.JupyterHub.services = [{
    "name": course,
    "url": f"http://127.0.0.1:{s['service_port']}",
    "command": [s["python"], "-m", "jupyterhub.singleuser"],
    "user": instructor,
    "cwd": str(Path(s["course_home"]) / "autograder"),
    "environment": {**s["service_env"], "JUPYTERHUB_DEFAULT_URL": "/lab", "JUPYTER_CONFIG_DIR": s["service_config"],
                    "RLPREP_PROFILE": s["profile"]},
    "oauth_no_confirm": True,
}]
