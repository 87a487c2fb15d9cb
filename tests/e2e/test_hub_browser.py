"""End to end: a class on the course's JupyterHub (``make hub``), driven in headless Chromium through Playwright.

Run with ``make e2e`` as root (it creates unix accounts; skipped otherwise). The hub is what ``make hub`` starts
(``rlprep.classroom.hub.setup`` + ``hub/jupyterhub_config.py``), with fresh accounts named ``e2e<hex>i`` (instructor)
and ``e2e<hex>s1..3``, its own exchange under a temporary ``build/hub-e2e-*`` folder, and a throwaway PostgreSQL
server as the gradebook (its socket reachable by the instructor's group only). Screenshots go to ``build/e2e/hub-*``.

In the browser:
- each student logs in (JupyterHub's login form, PAM), opens Nbgrader > Assignment List, fetches lab 1 (Fetch), and
  after answering clicks Submit; a student's browser gets no answer from another student's server and JupyterHub's
  403 page for formgrader;
- the instructor logs in, opens formgrader (the hub service ``/services/rlprep/formgrader``), collects lab 1,
  autogrades each submission (Manage Submissions), generates and releases feedback;
- each student fetches feedback (Fetch Feedback), follows "(view feedback)", and the feedback page shows that
  student's own answer and score and nothing of the others'.

Not through the UI: the answers are written into each student's fetched notebook with the Jupyter contents API from
that student's logged-in page (the same PUT JupyterLab's save sends; typing three notebooks' code into cells is
slow and flaky on 2 cores). The answers are the simulated class's (``rlprep.classroom.students``): the reference
(right), a catalogued bug (wrong) and the ``sabotage`` hand-in (reads the hidden tests and the gradebook, plants a
file in the course folder, rebinds the tests' helper). The sabotaging student also plants a hand-in under the first
student's name in ``inbound/`` with ``runuser`` (a terminal's work); collect must skip it. The grades are read back from PostgreSQL with nbgrader's
``Gradebook`` and compared with the grades the tests give those answers in this process
(``students.expected_grade``); unix permissions (homes, the exchange's feedback folder, another student's server)
are checked with ``runuser`` and plain HTTP. The accounts, their homes and the server are removed at the end.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from chromium import CHROMIUM

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "e2e"
PROXY = ROOT / "build" / "hub-npm" / "node_modules" / ".bin" / "configurable-http-proxy"
LAB = "lab01_gae"
KINDS = ("reference", "bug", "sabotage")  # right, wrong, a known sabotage: one student each
MINUTE = 60_000


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _two_free_ports() -> int:
    """A port whose next port is free too (the proxy's API listens there)."""
    for _ in range(50):
        (port,) = _free_ports(1)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 1))
                return port
            except OSError:
                continue
    raise RuntimeError("no two consecutive free ports")


def _kill_processes_of(users: list[str]) -> None:
    """End what the hub started as the test's accounts (by pid), so that userdel can remove them."""
    uids = {pwd.getpwnam(u).pw_uid for u in users if _exists(u)}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in uids:
                    os.kill(int(entry.name), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                pass


def _exists(user: str) -> bool:
    try:
        pwd.getpwnam(user)
        return True
    except KeyError:
        return False


@pytest.fixture(scope="module")
def hub():
    if os.geteuid() != 0:
        pytest.skip("the hub test creates unix accounts: run make e2e as root")
    if CHROMIUM is None:
        pytest.fail("Chromium is not installed: install Debian's 'chromium' package (apt-get install chromium)")
    if not PROXY.exists():
        pytest.fail(f"no configurable-http-proxy at {PROXY}: make e2e installs it (make {PROXY.relative_to(ROOT)})")
    from rlprep.classroom import hub as hubsetup
    from rlprep.classroom.postgres import TemporaryPostgres, binaries

    if binaries() is None:
        pytest.fail("no PostgreSQL server binaries: apt-get install postgresql (make e2e does it as root)")
    tag = secrets.token_hex(2)
    instructor, students = f"e2e{tag}i", [f"e2e{tag}s{i}" for i in range(1, len(KINDS) + 1)]
    for user in (instructor, *students):
        assert not _exists(user), f"account {user} exists already"
    folder = Path(tempfile.mkdtemp(prefix="hub-e2e-", dir=ROOT / "build"))
    port, (hub_port, service_port) = _two_free_ports(), _free_ports(2)
    plan = hubsetup.HubPlan(folder, ROOT, instructor, students, [LAB], "127.0.0.1", port, hub_port=hub_port,
                            service_port=service_port, exchange=folder / "exchange", proxy=PROXY, profile="smoke")
    pg, proc, log = TemporaryPostgres(), None, None
    try:
        pg.__enter__()
        plan.gradebook = pg.url
        passwords = hubsetup.prepare(plan)
        pg.allow_group(instructor)  # the instructor's own group: formgrader reaches the gradebook, students do not
        settings = hubsetup.setup(plan)
        assert settings["sandbox"] == "bubblewrap", settings["sandbox"]  # formgrader's autograde is sandboxed
        argv, env = hubsetup.hub_command(plan)
        log = open(folder / "state" / "jupyterhub.log", "w")
        proc = subprocess.Popen(argv, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"{base}/hub/api/", timeout=2)
                break
            except OSError:
                assert proc.poll() is None, (folder / "state" / "jupyterhub.log").read_text()[-3000:]
                time.sleep(1)
        else:
            pytest.fail("JupyterHub did not answer within 120 s; log: " + str(folder / "state" / "jupyterhub.log"))
        yield SimpleNamespace(base=base, plan=plan, passwords=passwords, pg=pg, folder=folder,
                              instructor=instructor, students=dict(zip(students, KINDS)))
    finally:
        if proc is not None:
            os.killpg(proc.pid, signal.SIGTERM)  # the hub stops the servers and formgrader it started
            try:
                proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        if log is not None:
            log.close()
        _kill_processes_of(plan.users)
        hubsetup.remove_accounts(plan, plan.users)
        pg.stop()
        if (folder / "state" / "jupyterhub.log").exists():
            SHOTS.mkdir(parents=True, exist_ok=True)
            shutil.copy(folder / "state" / "jupyterhub.log", SHOTS / "hub-jupyterhub.log")
        shutil.rmtree(folder, ignore_errors=True)



def _login(browser, hub, user: str):
    """A fresh browser context logged in as ``user`` through the hub's login form; returns its page."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"{hub.base}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub.passwords[user])
    page.click("#login_submit")
    return page


def _open_lab(page, hub, user: str):
    page.goto(f"{hub.base}/user/{user}/lab")
    page.wait_for_selector("#jp-main-dock-panel", timeout=4 * MINUTE)  # the server spawns on a busy machine
    page.wait_for_selector('#jp-menu-panel .lm-MenuBar-itemLabel:text("Nbgrader")', timeout=2 * MINUTE)


def _assignment_list(page):
    """Nbgrader > Assignment List (the Assignments tab), its lists loaded."""
    page.keyboard.press("Escape")
    page.click('#jp-menu-panel .lm-MenuBar-itemLabel:text("Nbgrader")')
    page.click('#jp-mainmenu-nbgrader li[data-command="nbgrader:open-assignment-list"]')
    page.wait_for_selector('.lm-TabBar-tab.jp-mod-current .lm-TabBar-tabLabel:text("Assignments")')
    for name in ("released", "fetched", "submitted"):
        page.wait_for_selector(f"#{name}_assignments_list_loading", state="hidden", timeout=MINUTE)


def _rows(page, name: str):
    return page.locator(f"#{name}_assignments_list > .list_item")


def _api(page, method: str, url: str, body=None):
    """The Jupyter REST API from the logged-in page, as JupyterLab calls it (session cookie + XSRF header)."""
    return page.evaluate(
        """async ([method, url, body]) => {
            const xsrf = (document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1];
            const r = await fetch(url, {method, credentials: 'same-origin', headers: {'Content-Type':
                'application/json', ...(xsrf ? {'X-XSRFToken': decodeURIComponent(xsrf)} : {})},
                body: body === null ? undefined : JSON.stringify(body)});
            return {status: r.status, text: await r.text()};
        }""", [method, url, body])


def _answer(page, hub, user: str, kind: str) -> None:
    """Write ``kind``'s hand-in into the fetched notebook (contents API), marked with the student's name."""
    import nbformat

    from rlprep.classroom import students as simulated

    url = f"{hub.base}/user/{user}/api/contents/{LAB}/{LAB}.ipynb"
    got = _api(page, "GET", url + "?content=1&type=notebook")
    assert got["status"] == 200, got
    released = nbformat.from_dict(json.loads(got["text"])["content"])
    bug = ""
    if kind == "bug":
        bug = simulated.bug_names(LAB, ROOT, simulated.graded_functions(released))[0]
    plan = simulated.Plan(user, LAB, kind, bug)
    nb = simulated.submission(released, plan, ROOT, hub.plan.course_home / "autograder")
    first = simulated.answer_cells(nb)[0]
    first.source = f"# hand-in of {user}\n{first.source}"
    put = _api(page, "PUT", url, {"type": "notebook", "format": "json", "content": nb})
    assert put["status"] in (200, 201), put


def _formgrader_click(page, selector: str, success: str, timeout: int = 5 * MINUTE) -> str:
    """Click one of formgrader's action links and wait for its success dialog (an error dialog fails the test);
    returns the dialog's text (nbgrader's log of the action)."""
    page.click(selector)
    page.wait_for_selector("#success-modal, #error-modal", state="visible", timeout=timeout)
    if page.locator("#error-modal").count():
        raise AssertionError(page.locator("#error-modal").inner_text())
    text = page.locator("#success-modal").inner_text()
    assert success in text
    page.click("#success-modal button.close")
    page.wait_for_selector("#success-modal", state="detached", timeout=MINUTE)
    return text


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"hub-{name}.png"))


def test_a_class_on_the_hub(hub, browser):
    from nbgrader.api import Gradebook

    from rlprep.classroom import students as simulated
    from rlprep.grading.templating import rendered_solution

    # Students: log in, fetch lab 1 from the Assignments tab, answer, submit.
    pages = {}
    for user, kind in hub.students.items():
        page = pages[user] = _login(browser, hub, user)
        _open_lab(page, hub, user)
        _assignment_list(page)
        released = _rows(page, "released")
        assert released.count() == 1 and LAB in released.first.inner_text()
        _shot(page, f"{kind}-released")
        released.first.locator('.item_status button:text("Fetch")').click()
        page.wait_for_function("() => document.querySelectorAll('#fetched_assignments_list > .list_item').length"
                               " === 1", timeout=MINUTE)
        _answer(page, hub, user, kind)
        _rows(page, "fetched").first.locator('.item_status button:text("Submit")').click()
        page.wait_for_function("() => document.querySelectorAll('#submitted_assignments_list > .list_item').length"
                               " >= 1 && !document.querySelector('#submitted_assignments_list_placeholder:not("
                               "[hidden])')", timeout=MINUTE)
        assert LAB in _rows(page, "submitted").first.inner_text()
        _shot(page, f"{kind}-submitted")

    # A student with a terminal hands in under another student's name: a later folder in inbound/ holding the
    # forger's own notebook. Formgrader's collect must leave it out (the victim's grade is checked below).
    first, second, forger = list(hub.students)
    victim = first
    stamp = (datetime.now(timezone.utc) + timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    inbound = hub.plan.exchange / "rlprep" / "inbound"
    forged = inbound / f"{victim}+{LAB}+{stamp}+forged"
    home = pwd.getpwnam(forger).pw_dir
    subprocess.run(["runuser", "-u", forger, "--", "sh", "-c", f'mkdir "{forged}" && cp {home}/{LAB}/{LAB}.ipynb '
                    f'"{forged}/" && printf "%s" "{stamp}" > "{forged}/timestamp.txt"'], check=True)
    assert (forged / f"{LAB}.ipynb").is_file()

    # A student's browser cannot reach another student's server.
    other = _api(pages[first], "GET", f"{hub.base}/user/{second}/api/contents")
    assert other["status"] in (403, 404) or second not in other["text"], other
    # Nor formgrader: the service is for the formgrade-rlprep group.
    denied = pages[first].goto(f"{hub.base}/services/rlprep/formgrader")
    assert denied.status == 403 and "You do not have permission" in pages[first].inner_text("body")

    # The instructor: formgrader (a hub service) collects, autogrades, generates and releases feedback.
    grader = _login(browser, hub, hub.instructor)
    grader.wait_for_url(f"**/user/{hub.instructor}/**", timeout=4 * MINUTE)
    # The instructor is no hub admin: their browser cannot open a student's server either.
    peek = _api(grader, "GET", f"{hub.base}/user/{first}/api/contents/{LAB}")
    assert peek["status"] in (403, 404) or "hand-in of" not in peek["text"], peek
    formgrader = f"{hub.base}/services/rlprep/formgrader"
    grader.goto(formgrader)
    row = f'tr:has(td.name:has-text("{LAB}"))'
    grader.wait_for_selector(f"{row} td.collect a", timeout=2 * MINUTE)
    _shot(grader, "formgrader-assignments")
    log = _formgrader_click(grader, f"{row} td.collect a", "Successfully collected")
    assert f"but belongs to {forger} (a hand-in under another student's name)" in log, log  # skipped, with a reason
    grader.goto(f"{formgrader}/manage_submissions/{LAB}")
    for user in hub.students:
        grader.wait_for_selector(f'tr:has(td.student-id:has-text("{user}")) td.autograde a', timeout=MINUTE)
        _formgrader_click(grader, f'tr:has(td.student-id:has-text("{user}")) td.autograde a',
                          "Successfully autograded")
    grader.reload()
    grader.wait_for_selector(f'tr:has(td.student-id:has-text("{first}")) td.score', timeout=MINUTE)
    _shot(grader, "formgrader-autograded")
    grader.goto(formgrader)
    grader.wait_for_selector(f"{row} td.generate-feedback a", timeout=MINUTE)
    _formgrader_click(grader, f"{row} td.generate-feedback a", "Successfully generated feedback")
    _formgrader_click(grader, f"{row} td.release-feedback a", "Successfully released feedback")

    # The grades, in PostgreSQL, are what the tests give each hand-in.
    assert hub.pg.url.startswith("postgresql://")
    gradebook_nb = rendered_solution(LAB, ROOT)
    with Gradebook(hub.pg.url, "rlprep") as gb:
        got = {s.student.id: (float(s.score), float(s.max_score)) for s in gb.assignment_submissions(LAB)}
    assert set(got) == set(hub.students), got
    for user, kind in hub.students.items():
        bug = simulated.bug_names(LAB, ROOT, simulated.graded_functions(gradebook_nb))[0] if kind == "bug" else ""
        raw, score, total = simulated.expected_grade(gradebook_nb, simulated.Plan(user, LAB, kind, bug), ROOT)
        assert got[user] == pytest.approx((score, total)), (user, kind, got[user], (score, total))
    scores = {kind: got[user][0] for user, kind in hub.students.items()}
    full = got[first][1]
    assert scores["reference"] == full and scores["bug"] < full and scores["sabotage"] < full, scores
    assert not (hub.plan.course_home / "autograder" / simulated.SABOTAGE_MARK).exists()

    # Each student fetches feedback and sees their own, and nothing of anyone else's.
    for user, kind in hub.students.items():
        page = pages[user]
        _open_lab(page, hub, user)
        _assignment_list(page)
        submitted = _rows(page, "submitted").first
        submitted.locator('.item_status button:text("Fetch Feedback")').click()
        page.wait_for_selector('#submitted_assignments_list a:text("view feedback")', timeout=2 * MINUTE)
        page.click('#submitted_assignments_list a:text("view feedback")')  # the file browser opens the folder
        listing = json.loads(_api(page, "GET", f"{hub.base}/user/{user}/api/contents/{LAB}/feedback")["text"])
        (stamp,) = [item["name"] for item in listing["content"]]
        html_url = f"{hub.base}/user/{user}/files/{LAB}/feedback/{stamp}/{LAB}.html"
        page.goto(html_url)
        text = page.inner_text("body")
        _shot(page, f"{kind}-feedback")
        assert f"hand-in of {user}" in text
        assert f"{LAB} (Score: {round(got[user][0], 2)} / {round(got[user][1], 2)})" in text, text[:500]
        for other_user in hub.students:
            if other_user != user:
                assert other_user not in text

    # Unix permissions: students cannot read each other's homes nor list the exchange's feedback folder.
    exchange_feedback = hub.plan.exchange / "rlprep" / "feedback"
    assert exchange_feedback.is_dir()
    for argv in (["ls", str(pwd.getpwnam(second).pw_dir)], ["ls", str(exchange_feedback)],
                 ["ls", str(hub.plan.course_home)], ["ls", str(hub.plan.state)]):
        done = subprocess.run(["runuser", "-u", first, "--", *argv], capture_output=True, text=True)
        assert done.returncode != 0 and "Permission denied" in done.stderr, (argv, done)
    assert oct((hub.plan.state / "credentials.txt").stat().st_mode & 0o777) == "0o600"
