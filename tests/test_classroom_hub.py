"""make hub's account handling and configuration, without creating accounts (fast; the hub itself runs in
tests/e2e/test_hub_browser.py).

- ``--remove-accounts`` deletes only the accounts make hub made (listed in ``ROOT/state/credentials.txt``): naming
  ``root`` or any other existing account deletes nothing;
- an account that exists but was not made by make hub is refused (its password is not reset);
- the passwords file is 0600 even when a file with another mode was there;
- ``hub/jupyterhub_config.py`` keeps the hub's database, cookie secret and proxy pid in ``ROOT/state`` and gives
  formgrader to the ``formgrade-rlprep`` group only, and makes no hub admin (who could open every student's
  server).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from rlprep.classroom import hub
from rlprep.errors import RlprepError

ROOT = Path(__file__).resolve().parents[1]


def _plan(tmp_path, **kw) -> hub.HubPlan:
    plan = hub.HubPlan(tmp_path / "hub", ROOT, profile="smoke", **kw)
    plan.state.mkdir(parents=True)
    return plan


def test_remove_accounts_deletes_only_accounts_make_hub_made(tmp_path, monkeypatch):
    plan = _plan(tmp_path, instructor="root", students=["made1", "daemon"])
    hub._private(plan.state / "credentials.txt", "made1 pw1\n")
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: calls.append(argv))
    removed = hub.remove_accounts(plan, plan.users)
    assert removed == ["made1"]
    assert calls == [["userdel", "--remove", "made1"]]
    assert hub.made_accounts(plan) == {}


def test_an_existing_account_not_made_by_make_hub_is_refused(tmp_path, monkeypatch):
    plan = _plan(tmp_path, instructor="root", students=["nobody"])
    monkeypatch.setattr(hub, "_run", lambda *a, **k: pytest.fail(f"ran {a}: an account was touched"))
    with pytest.raises(RlprepError, match="root already exists and was not made by make hub"):
        hub.make_accounts(plan)


def test_passwords_file_is_private_whatever_was_there(tmp_path):
    path = tmp_path / "credentials.txt"
    path.write_text("old\n")
    path.chmod(0o644)
    hub._private(path, "u p\n")
    assert path.stat().st_mode & 0o777 == 0o600 and path.read_text() == "u p\n"


def test_hub_config_keeps_state_private_and_formgrader_to_graders(tmp_path, monkeypatch):
    root = tmp_path / "hub"
    settings = {"root": str(root), "course": "rlprep", "instructor": "teach", "students": ["s1", "s2"],
                "ip": "127.0.0.1", "port": 8100, "hub_port": 8181, "service_port": 9100, "proxy": "/x/chp",
                "python": "/x/python", "course_home": "/home/teach/rlprep", "jupyter_config": str(root / "etc"),
                "service_config": str(root / "fg"), "service_env": {"PATH": "/x"}, "profile": "smoke"}
    path = tmp_path / "hub.json"
    path.write_text(json.dumps(settings))
    monkeypatch.setenv("RLPREP_HUB_SETTINGS", str(path))
    from traitlets.config import Config

    c = Config()
    exec(compile((ROOT / "hub" / "jupyterhub_config.py").read_text(), "jupyterhub_config.py", "exec"),
         {"get_config": lambda: c})
    state = root / "state"
    assert c.JupyterHub.db_url == f"sqlite:///{state / 'jupyterhub.sqlite'}"
    assert c.JupyterHub.cookie_secret_file == str(state / "jupyterhub_cookie_secret")
    assert c.JupyterHub.hub_port == 8181 and c.ConfigurableHTTPProxy.api_url == "http://127.0.0.1:8101"
    roles = {r["name"]: r for r in c.JupyterHub.load_roles}
    assert "access:services!service=rlprep" in roles["formgrade-rlprep"]["scopes"]
    assert not any("access:services" in s for s in roles["nbgrader-rlprep"]["scopes"])
    assert c.JupyterHub.load_groups["formgrade-rlprep"]["users"] == ["teach"]
    (service,) = c.JupyterHub.services
    assert service["user"] == "teach" and service["cwd"] == "/home/teach/rlprep/autograder"
    assert "admin_users" not in c.Authenticator  # the instructor cannot open the students' servers
    assert os.path.basename(c.Spawner.cmd[0]) == "python"


@pytest.mark.parametrize("args, problem", [
    (["--students", "ann,-r"], "'-r' is not a unix account name"),
    (["--students", "instructor"], "none the instructor"),
])
def test_account_names_are_checked_before_anything_is_made(args, problem, capsys):
    from rlprep.cli import main

    assert main(["classroom", "hub", *args]) == 2
    assert problem in capsys.readouterr().err


def _setup_without_accounts(tmp_path, monkeypatch, **kw) -> tuple[hub.HubPlan, str]:
    """``hub.setup`` on a course in ``tmp_path``: every step that needs root or accounts stubbed, the gradebook step
    real, its commands run as this user (not ``runuser``). Returns the plan and the course's gradebook URL."""
    import pwd
    import shutil
    import sys

    course = tmp_path / "course"
    (course / "autograder").mkdir(parents=True)
    shutil.copy(ROOT / "autograder" / "nbgrader_config.py", course / "autograder" / "nbgrader_config.py")
    plan = _plan(tmp_path, instructor=pwd.getpwuid(os.getuid()).pw_name, **kw)
    monkeypatch.setattr(hub.HubPlan, "course_home", property(lambda self: course))
    real_run = hub._run
    monkeypatch.setattr(hub, "_run", lambda argv, user=None, **k: real_run(argv, **k))
    for step in ("prepare", "write_jupyter_config", "write_user_config", "set_up_course"):
        monkeypatch.setattr(hub, step, lambda *a: None)
    monkeypatch.setattr(hub, "user_python", lambda p: Path(sys.executable))
    monkeypatch.setattr(hub, "write_service_config", lambda p: tmp_path / "fg")
    monkeypatch.setattr(hub, "instructor_sandbox", lambda p, py: "bubblewrap")
    return plan, f"sqlite:///{course / 'autograder' / 'gradebook.db'}"


def _gradebook_students(url: str) -> list[tuple]:
    from nbgrader.api import Gradebook

    from rlprep.grading.release import tools_on_path

    tools_on_path()  # nbgrader's Gradebook runs alembic from PATH
    with Gradebook(url, "rlprep") as gb:
        return sorted((s.id, s.first_name, s.last_name, s.email) for s in gb.students)


def test_setup_puts_the_students_in_the_gradebook_once_with_no_none_names(tmp_path, monkeypatch):
    plan, url = _setup_without_accounts(tmp_path, monkeypatch, students=["ann", "bob"])
    hub.setup(plan)
    want = [("ann", "", "", None), ("bob", "", "", None)]  # formgrader shows "None, None" for names left None
    assert _gradebook_students(url) == want
    hub.setup(plan)  # a second setup: no error, no second copy
    assert _gradebook_students(url) == want


def test_setup_takes_names_from_the_roster_and_a_later_setup_keeps_them(tmp_path, monkeypatch):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,first_name,last_name,email\nann,Ada,\"Lovelace, Countess\",ann@example.edu\n")
    plan, url = _setup_without_accounts(tmp_path, monkeypatch, students=["ann", "bob"], roster=roster)
    hub.setup(plan)
    want = [("ann", "Ada", "Lovelace, Countess", "ann@example.edu"), ("bob", "", "", None)]
    assert _gradebook_students(url) == want
    plan.roster = None  # setup again without the roster: the names already there stay
    hub.setup(plan)
    assert _gradebook_students(url) == want


@pytest.mark.parametrize("text, problem", [
    ("id,first_name,last_name,email\neve,Eve,,\n", "lists 'eve' but the student accounts are ann, bob"),
    ("id,first_name,last_name,email\nann,A,,\nann,B,,\n", "lists 'ann' twice"),
    ("id,name\nann,Ada\n", "has the columns id,name"),
])
def test_a_bad_roster_is_refused_before_anything_is_made(tmp_path, monkeypatch, text, problem):
    roster = tmp_path / "roster.csv"
    roster.write_text(text)
    plan, _ = _setup_without_accounts(tmp_path, monkeypatch, students=["ann", "bob"], roster=roster)
    monkeypatch.setattr(hub, "prepare", lambda p: pytest.fail("accounts were made"))
    with pytest.raises(RlprepError, match=problem):
        hub.setup(plan)
