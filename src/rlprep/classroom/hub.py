"""``make hub`` / ``rlprep classroom hub``: a JupyterHub for the course on one machine, from the project's own files.

What :func:`setup` does, as root (the layout of nbgrader's ``demos/demo_one_class_multiple_graders``, with one
instructor who is also the grader):

- unix accounts for one instructor and a few students (``useradd``; homes 0700; a random password each, written
  to ``ROOT/state/credentials.txt``, mode 0600 in a 0700 folder; an existing account not made here is refused),
  and the JupyterHub groups ``nbgrader-rlprep`` (everyone in the course) and ``formgrade-rlprep`` (who may open
  formgrader) with the roles nbgrader's demos give them;
- nbgrader's exchange (``/usr/local/share/nbgrader/exchange``: ``ugo+rwx`` as nbgrader's demos, plus the sticky
  bit), collected with :class:`rlprep.classroom.exchange_collect.OwnerCheckedCollect`;
- the course in the instructor's home (``~/rlprep``, mode 0700): ``solutions/`` (the nbgrader source) and
  ``autograder/nbgrader_config.py`` (the sandboxed grader and the sanitiser of every page that shows a submission),
  the labs generated and released to the exchange as the instructor (``nbgrader generate_assignment`` and
  ``release_assignment``);
- the students in the course's gradebook (:func:`add_students`, as the instructor: ``Classroom.add_roster``, what
  ``nbgrader db student import`` does), id the account, names and e-mail from ``--roster`` where it lists them, else
  empty (not None, which formgrader shows as "None"), so formgrader and ``rlprep classroom report`` know who
  handed in nothing;
- the Jupyter configuration of every server the hub starts (``ROOT/etc/jupyter``: the course id, exchange and
  collect for nbgrader, formgrader's frame headers), learner mode in each student's ``~/.jupyter`` (no formgrader, no
  create-assignment, no validate button: ``rlprep.grading.learner_mode``);
- formgrader as a hub-managed service named after the course, running as the instructor in the course's
  ``autograder/`` folder, so it reads the course's ``nbgrader_config.py`` (``RLPREP_GRADEBOOK_URL`` passed on);
- an interpreter every account can run (``user_python``): the course's virtualenv when the accounts can reach it,
  else a virtualenv under ``ROOT`` whose interpreter is a hard-linked copy of the course venv's base Python (a pyenv
  Python under ``/root``, as on the machine this was built on) and whose ``site-packages`` is the course venv's.

:func:`hub_command` is the ``jupyterhub`` command line; the hub's configuration is ``hub/jupyterhub_config.py``
(read with ``ROOT/state/hub.json``), the proxy is ``configurable-http-proxy`` from npm, installed by ``make hub``
under ``build/hub-npm`` (``hub/package-lock.json``).
"""

from __future__ import annotations

import csv
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rlprep.errors import RlprepError

COURSE = "rlprep"
ACCOUNT = re.compile(r"[a-z_][a-z0-9_-]{0,31}")  # what Debian's useradd accepts by default, minus a final $
EXCHANGE = Path("/usr/local/share/nbgrader/exchange")
# The frame header nbgrader's demos set, so JupyterLab can show formgrader (issue #1870).
SERVER_CONFIG = ('c = get_config()  # noqa: F821\nc.ServerApp.tornado_settings = {"headers": '
                 '{"Content-Security-Policy": "frame-ancestors \'self\'"}}\n')


@dataclass
class HubPlan:
    """Where and for whom: ``root`` holds the hub's own files; accounts are made for ``instructor`` and
    ``students``; ``labs`` are released; ``gradebook`` (a URL) is the course's, else SQLite in ``autograder/``;
    ``roster``: a CSV (``id,first_name,last_name,email``) with the students' names, optional."""

    root: Path
    repo: Path
    instructor: str = "instructor"
    students: list[str] = field(default_factory=lambda: ["student1", "student2", "student3"])
    labs: list[str] = field(default_factory=lambda: ["lab01_gae"])
    ip: str = "127.0.0.1"
    port: int = 8000
    hub_port: int = 8081  # the hub's own API (127.0.0.1); the proxy's API is on port + 1
    service_port: int = 9999
    exchange: Path = EXCHANGE
    gradebook: str | None = None
    proxy: Path | None = None
    roster: Path | None = None
    profile: str = field(default_factory=lambda: _active_profile())

    @property
    def course_home(self) -> Path:
        return Path(pwd.getpwnam(self.instructor).pw_dir) / COURSE

    @property
    def state(self) -> Path:
        """The hub's private files (mode 0700): passwords, the hub's database and cookie secret, ``hub.json``."""
        return self.root / "state"

    @property
    def users(self) -> list[str]:
        return [self.instructor, *self.students]


def _active_profile() -> str:
    """The profile every server the hub starts runs in: this command's (``RLPREP_PROFILE``, else auto)."""
    from rlprep.profiles import get_profile

    return get_profile().name


def _run(argv: list[str], user: str | None = None, **kwargs) -> subprocess.CompletedProcess:
    """Run ``argv`` (as ``user`` when given); an error names the command and its last output lines."""
    if user is not None:
        argv = [shutil.which("runuser") or "runuser", "-u", user, "--", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise RlprepError(f"{' '.join(argv[:6])} failed (exit {done.returncode}):\n{tail}",
                          "read the message above; the hub was not started")
    return done


def check_host(plan: HubPlan) -> None:
    """Root, the account tools, node and the proxy: each missing piece is an error with its fix."""
    if os.geteuid() != 0:
        raise RlprepError("make hub creates unix accounts and runs JupyterHub as root, but this is not root",
                          "run it as root (sudo make hub), on a machine meant for the course")
    for tool in ("useradd", "chpasswd", "runuser"):
        if shutil.which(tool) is None:
            raise RlprepError(f"{tool} is not installed", "apt-get install passwd util-linux (Debian/Ubuntu)")
    if shutil.which("node") is None:
        raise RlprepError("node is not installed (configurable-http-proxy is a Node.js program)",
                          "apt-get install nodejs npm (make hub does it as root)")
    if plan.proxy is None or not plan.proxy.is_file():
        raise RlprepError(f"no configurable-http-proxy at {plan.proxy}",
                          "make hub (it runs npm ci with hub/package-lock.json into build/hub-npm)")
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        raise RlprepError("jupyterhub is not installed in this environment",
                          "pip install -e '.[course,hub]' (make hub does it)") from None


# -- accounts ---------------------------------------------------------------------------------------------------
def _private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by root only (0600), whatever mode a file already there had."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        os.fchmod(fd, 0o600)
        out.write(text)


def made_accounts(plan: HubPlan) -> dict[str, str]:
    """The accounts an earlier ``setup`` made, with their passwords (``ROOT/state/credentials.txt``)."""
    creds = plan.state / "credentials.txt"
    if not creds.is_file():
        return {}
    return dict(line.split(" ", 1) for line in creds.read_text().split("\n") if " " in line)


def make_accounts(plan: HubPlan) -> dict[str, str]:
    """Create the accounts that do not exist yet (home 0700, own group, bash), each with a random password.

    An account an earlier run made keeps its password; an account that existed before (not made here) is refused:
    this neither resets a real person's password nor, later, deletes their home."""
    passwords, new = made_accounts(plan), {}
    for user in plan.users:
        try:
            pwd.getpwnam(user)
        except KeyError:
            _run(["useradd", "--create-home", "--user-group", "--shell", "/bin/bash", user])
            new[user] = passwords[user] = secrets.token_urlsafe(12)
            os.chmod(pwd.getpwnam(user).pw_dir, 0o700)  # Debian's useradd makes 0755 homes: students' work private
            continue
        if user not in passwords:
            raise RlprepError(f"the account {user} already exists and was not made by make hub",
                              "pick other names (--instructor, --students), or remove that account first")
    if new:
        _run(["chpasswd"], input="".join(f"{u}:{p}\n" for u, p in new.items()))
    _private(plan.state / "credentials.txt", "".join(f"{u} {passwords[u]}\n" for u in passwords))
    return {u: passwords[u] for u in plan.users}


def remove_accounts(plan: HubPlan, users: list[str]) -> list[str]:
    """Delete those of ``users`` (and their homes) that ``make_accounts`` made; returns the ones deleted. An
    account not in ``ROOT/state/credentials.txt`` is left alone (``--students root`` deletes nothing)."""
    made = made_accounts(plan)
    removed = []
    for user in users:
        if user in made:
            subprocess.run(["userdel", "--remove", user], capture_output=True)
            removed.append(user)
            del made[user]
    if (plan.state / "credentials.txt").is_file():
        _private(plan.state / "credentials.txt", "".join(f"{u} {p}\n" for u, p in made.items()))
    return removed


# -- an interpreter every account can run -----------------------------------------------------------------------
def _reachable(python: Path, user: str) -> bool:
    done = subprocess.run(["runuser", "-u", user, "--", str(python), "-c", "import jupyterhub, nbgrader, rlprep"],
                          capture_output=True, timeout=120)
    return done.returncode == 0


def user_python(plan: HubPlan) -> Path:
    """An interpreter with the course's packages that ``plan.students[0]`` can run (see the module docstring)."""
    course = Path(sys.prefix)
    if _reachable(course / "bin" / "python", plan.students[0]):
        return course / "bin" / "python"
    base, venv = plan.root / "python", plan.root / "venv"
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    if not (base / "bin").is_dir():
        _run(["cp", "-al", sys.base_prefix, str(base)])  # hard links: no copy of the data, new traversable folders
        _relocate(base / "bin" / version, Path(sys.base_prefix) / "lib")
    if not (venv / "bin" / "python").exists():
        _run([str(base / "bin" / version), "-m", "venv", "--without-pip", str(venv)])
        site = venv / "lib" / version / "site-packages"
        shutil.rmtree(site)
        site.symlink_to(course / "lib" / version / "site-packages")
        for part in ("share", "etc"):  # JupyterLab's extensions and the server extensions nbgrader enables
            if (course / part).is_dir() and not (venv / part).exists():
                (venv / part).symlink_to(course / part)
    for script in (course / "bin").iterdir():  # the course's console scripts (alembic, nbgrader, jupyter) for venv
        target = venv / "bin" / script.name
        if script.is_file() and not target.exists():
            head = script.read_bytes()[:200]
            if head.startswith(f"#!{course}/bin/python".encode()):
                text = script.read_text().split("\n", 1)[1]
                target.write_text(f"#!{venv}/bin/python\n{text}")
                target.chmod(0o755)
    if not _reachable(venv / "bin" / "python", plan.students[0]):
        raise RlprepError(f"the accounts cannot run {venv / 'bin' / 'python'}",
                          "install the course in a virtualenv made from a Python every user can read "
                          "(e.g. PYTHON=/usr/bin/python3 make hub)")
    return venv / "bin" / "python"


def _relocate(executable: Path, libdir: Path) -> None:
    """Give the copy of the interpreter its own file, whose library search path (an ELF ``RUNPATH`` naming
    ``libdir``, where a pyenv Python finds ``libpython``) is ``$ORIGIN/../lib``: the copy's own ``lib/``. Without
    it the loader, unable to enter ``/root``, takes the system's ``libpython`` of another patch release."""
    data = executable.read_bytes()
    old = str(libdir).encode() + b"\0"
    if old not in data:
        return  # a static interpreter, or one that finds its library elsewhere
    new = b"$ORIGIN/../lib\0"
    if len(new) > len(old):
        raise RlprepError(f"cannot relocate {executable}", "install the course from a Python every user can read")
    executable.unlink()  # the hard link goes; the original interpreter is untouched
    executable.write_bytes(data.replace(old, new.ljust(len(old), b"\0"), 1))
    executable.chmod(0o755)


# -- the course ---------------------------------------------------------------------------------------------------
def write_jupyter_config(plan: HubPlan) -> Path:
    """``ROOT/etc/jupyter``: nbgrader's course id and exchange, the owner-checked collect
    (``rlprep.classroom.exchange_collect``), formgrader's frame header (every server reads it)."""
    etc = plan.root / "etc" / "jupyter"
    etc.mkdir(parents=True, exist_ok=True)
    (etc / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {COURSE!r}\n"
        f"c.Exchange.root = {str(plan.exchange)!r}\n"
        "# a hand-in under another student's name (a folder in inbound/ owned by someone else) is not collected\n"
        "c.ExchangeFactory.collect = 'rlprep.classroom.exchange_collect.OwnerCheckedCollect'\n")
    (etc / "jupyter_server_config.py").write_text(SERVER_CONFIG)
    return etc


def user_env(plan: HubPlan, python: Path, user: str) -> dict[str, str]:
    home = pwd.getpwnam(user).pw_dir
    return {"HOME": home, "USER": user, "PATH": f"{python.parent}:/usr/local/bin:/usr/bin:/bin",
            "JUPYTER_CONFIG_PATH": str(plan.root / "etc" / "jupyter"), "LANG": "C.UTF-8",
            **({"RLPREP_GRADEBOOK_URL": plan.gradebook} if plan.gradebook else {})}


def set_up_course(plan: HubPlan, python: Path) -> None:
    """The course folder in the instructor's home; the labs generated and released as the instructor."""
    home = plan.course_home
    home.mkdir(mode=0o700, exist_ok=True)
    for lab in plan.labs:
        target = home / "solutions" / lab
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(plan.repo / "solutions" / lab, target,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.bak-*"))
    (home / "autograder").mkdir(exist_ok=True)
    shutil.copy(plan.repo / "autograder" / "nbgrader_config.py", home / "autograder" / "nbgrader_config.py")
    _run(["chown", "-R", f"{plan.instructor}:{plan.instructor}", str(home)])
    make_exchange(plan)
    env = user_env(plan, python, plan.instructor)
    for lab in plan.labs:
        for step in (["generate_assignment", lab, "--force"], ["release_assignment", lab, "--force"]):
            _run([str(python), "-m", "nbgrader", *step], user=plan.instructor, cwd=home / "autograder", env=env,
                 timeout=600)


# -- the gradebook's roster --------------------------------------------------------------------------------------
ROSTER_FIELDS = ("id", "first_name", "last_name", "email")  # nbgrader db student import's columns
# run as the instructor in the course's autograder/: the gradebook its nbgrader_config.py names (SQLite or the URL)
ADD_ROSTER = ("import json, sys; from pathlib import Path; from rlprep.classroom.cycle import Classroom; "
              "Classroom(Path('.'), config_file=Path('nbgrader_config.py')).add_roster(json.load(sys.stdin))")


def roster_rows(plan: HubPlan) -> list[dict]:
    """One gradebook row per student account, ``{"id": account, ...}``, with the names and e-mail ``plan.roster``
    gives that account (an empty cell gives nothing). A roster row for an account not in ``plan.students``, a
    repeated id or a header other than :data:`ROSTER_FIELDS` is an error, raised before anything is made."""
    rows = {sid: {"id": sid} for sid in plan.students}
    if plan.roster is None:
        return list(rows.values())
    fix = f"write {plan.roster} as UTF-8 CSV with the header {','.join(ROSTER_FIELDS)}, one row per student account"
    try:
        with open(plan.roster, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            entries, header = list(reader), reader.fieldnames or []
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise RlprepError(f"cannot read the roster {plan.roster}: {err}", fix) from None
    if "id" not in header or set(header) - set(ROSTER_FIELDS):
        raise RlprepError(f"the roster {plan.roster} has the columns {','.join(map(str, header))}", fix)
    seen = set()
    for entry in entries:
        sid = (entry.get("id") or "").strip()
        if sid in seen or sid not in rows:
            why = "twice" if sid in seen else f"but the student accounts are {', '.join(rows)}"
            raise RlprepError(f"the roster {plan.roster} lists {sid!r} {why}",
                              "give each account in --students at most one row (add the account to --students, or "
                              "remove the row)")
        seen.add(sid)
        rows[sid].update({k: v.strip() for k, v in entry.items() if k in ROSTER_FIELDS[1:] and v and v.strip()})
    return list(rows.values())


def add_students(plan: HubPlan, python: Path, rows: list[dict]) -> None:
    """``rows`` (:func:`roster_rows`) into the course's gradebook, as the instructor (the gradebook stays theirs).
    Re-running adds no second copy; a name the rows leave out keeps what the gradebook has."""
    _run([str(python), "-c", ADD_ROSTER], user=plan.instructor, cwd=plan.course_home / "autograder",
         env=user_env(plan, python, plan.instructor), input=json.dumps(rows), timeout=300)


def make_exchange(plan: HubPlan) -> None:
    """nbgrader's exchange root, owned by root: ``ugo+rwx`` as nbgrader's demos set it (its release step insists on
    rwx for all) plus the sticky bit, so no student can rename or replace the course's folder in it (its
    ``inbound/`` and ``outbound/`` are nbgrader's own: 2733 and 0755, made by the instructor's release)."""
    plan.exchange.mkdir(parents=True, exist_ok=True)
    os.chown(plan.exchange, 0, 0)
    plan.exchange.chmod(0o1777)
    course = plan.exchange / COURSE
    if course.exists() and course.stat().st_uid != pwd.getpwnam(plan.instructor).pw_uid:
        raise RlprepError(f"{course} belongs to another account than {plan.instructor}",
                          f"move it away (the exchange of another hub?) and run again: rm -r {course}")


def write_user_config(plan: HubPlan) -> None:
    """Learner mode in each account's ``~/.jupyter``, with nbgrader's menu back: on a hub, Nbgrader > Assignment List
    is where a student fetches and submits (the menu shows no item of a disabled plugin, so no Formgrader). The
    instructor's also keeps the course list (its link to the formgrader service)."""
    from rlprep.grading.learner_mode import enable

    for user in plan.users:
        home = Path(pwd.getpwnam(user).pw_dir)
        config = enable(home / ".jupyter")
        back = ["@jupyter/nbgrader:menu"] + (["@jupyter/nbgrader:course-list"] if user == plan.instructor else [])
        page = config / "labconfig" / "page_config.json"
        data = json.loads(page.read_text())
        for key in ("disabledExtensions", "lockedExtensions"):
            for plugin in back:
                data.get(key, {}).pop(plugin, None)
        page.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        _run(["chown", "-R", f"{user}:{user}", str(home / ".jupyter")])


def write_service_config(plan: HubPlan) -> Path:
    """The formgrader service's own Jupyter config dir: formgrader and create-assignment on, course list on."""
    config = plan.root / "formgrader-config"
    (config / "labconfig").mkdir(parents=True, exist_ok=True)
    (config / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyter/nbgrader:validate-assignment": True,
                                "@jupyterlab/apputils-extension:announcements": True}}, indent=2) + "\n")
    (config / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": True,
                                               "nbgrader.server_extensions.course_list": True}}}, indent=2) + "\n")
    _run(["chown", "-R", f"{plan.instructor}:{plan.instructor}", str(config)])  # Jupyter writes into its config dir
    config.chmod(0o700)
    return config


def instructor_sandbox(plan: HubPlan, python: Path) -> str:
    """The grading sandbox formgrader's autograde gets, probed as the instructor with the service's environment:
    ``"bubblewrap"``, else ``"none: <why>"`` (e.g. no unprivileged user namespaces for that account)."""
    done = _run([str(python), "-c", "from rlprep.grading.sandbox import probe; print(probe())"],
                user=plan.instructor, cwd=plan.course_home / "autograder", env=user_env(plan, python, plan.instructor),
                timeout=300)
    return done.stdout.strip().splitlines()[-1]


# -- the whole hub ----------------------------------------------------------------------------------------------
def prepare(plan: HubPlan) -> dict[str, str]:
    """The host checked, ``ROOT`` (0755) and ``ROOT/state`` (0700) made, the accounts made: {account: password}.
    Idempotent; :func:`setup` starts with it (a caller may call it first, e.g. to let the instructor reach a
    gradebook server before the labs are generated into it)."""
    check_host(plan)
    plan.root.mkdir(parents=True, exist_ok=True)
    os.chmod(plan.root, 0o755)  # the accounts run ROOT/venv's interpreter and read ROOT/etc/jupyter
    plan.state.mkdir(mode=0o700, exist_ok=True)
    os.chmod(plan.state, 0o700)
    return make_accounts(plan)


def setup(plan: HubPlan) -> dict:
    """Everything above; writes ``ROOT/state/hub.json`` (what ``hub/jupyterhub_config.py`` reads) and returns it."""
    rows = roster_rows(plan)  # a bad roster stops setup before any account is made
    prepare(plan)
    python = user_python(plan)
    write_jupyter_config(plan)
    write_user_config(plan)
    set_up_course(plan, python)
    add_students(plan, python, rows)
    settings = {**{k: str(v) if isinstance(v, Path) else v for k, v in asdict(plan).items()},
                "course": COURSE, "python": str(python), "course_home": str(plan.course_home),
                "jupyter_config": str(plan.root / "etc" / "jupyter"),
                "service_config": str(write_service_config(plan)),
                "service_env": user_env(plan, python, plan.instructor), "sandbox": instructor_sandbox(plan, python)}
    _private(plan.state / "hub.json", json.dumps(settings, indent=1))  # a gradebook URL may hold a password
    return settings


def hub_command(plan: HubPlan) -> tuple[list[str], dict[str, str]]:
    """(argv, environment) that start JupyterHub with ``hub/jupyterhub_config.py`` and ``ROOT/state/hub.json``."""
    env = {**os.environ, "RLPREP_HUB_SETTINGS": str(plan.state / "hub.json"),
           "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    return [sys.executable, "-m", "jupyterhub", "-f", str(plan.repo / "hub" / "jupyterhub_config.py")], env
