"""End to end in a real browser: JupyterLab in learner mode, driven by headless Chromium through Playwright.

Run with ``make e2e``. Opens the start page and a lab, runs the slider cell, moves the slider, checks the
plot changed and that the page raised no JavaScript errors, and saves screenshots under ``build/e2e/``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "e2e"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
TOKEN = "rlprep-e2e"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory):
    if CHROMIUM is None:
        pytest.fail("Chromium is not installed: install Debian's 'chromium' package (apt-get install chromium)")
    from rlprep.grading.learner_mode import enable as learner_mode

    work = tmp_path_factory.mktemp("jupyter")
    # Serve a copy, so that JupyterLab's autosave can never write outputs into the committed notebooks.
    served = work / "course"
    for part in ("notebooks", "labs"):
        if (ROOT / part).is_dir():
            shutil.copytree(ROOT / part, served / part)
    config_dir = work / "config"
    learner_mode(config_dir)
    port = _free_port()
    env = dict(os.environ, JUPYTER_CONFIG_PATH=str(config_dir), JUPYTER_RUNTIME_DIR=str(work / "runtime"),
               RLPREP_PROFILE="smoke", RLPREP_HOME=str(work / "home"),
               MPLBACKEND="module://matplotlib_inline.backend_inline")
    log = open(work / "jupyter.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={served}",
         # A fresh workspace: the user's saved one would restore earlier tabs, and Run All would run in them.
         f"--LabApp.workspaces_dir={work / 'workspaces'}",
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        os.killpg(proc.pid, signal.SIGTERM)
        pytest.fail("JupyterLab did not answer /api/status within 60 s; see " + str(work / "jupyter.log"))
    yield base
    os.killpg(proc.pid, signal.SIGTERM)  # shut the server down by its PID (its process group)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def _open(browser, url):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url)
    # Menu commands act on the current tab: wait until it is the notebook we asked for.
    name = url.split("?")[0].rsplit("/", 1)[-1]
    page.wait_for_selector(f".lm-TabBar-tab.jp-mod-current >> text={name}", timeout=60_000)
    page.wait_for_selector(".jp-Notebook >> visible=true", timeout=60_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'] >> visible=true", timeout=90_000)
    return page, errors


def _run_all(page, attempts=3):
    """Run > Run All Cells, until the kernel has taken the cells (an execution count or [*] appears).

    A click made while the kernel is still connecting is dropped silently by JupyterLab, so wait and retry.
    """
    for _ in range(attempts):
        page.keyboard.press("Escape")  # close any menu or tooltip left open
        page.click('.lm-MenuBar-itemLabel >> text="Run"', timeout=20_000)
        page.click('.lm-Menu-itemLabel >> text="Run All Cells"', timeout=20_000)
        try:
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-InputPrompt')].some(p => /\\[(\\d+|\\*)\\]/.test(p.textContent))",
                timeout=20_000)
            return
        except Exception:  # noqa: BLE001 -- playwright's TimeoutError; retry the menu command
            continue
    raise AssertionError(f"Run All Cells never started the kernel after {attempts} attempts")


def test_start_page_slider_updates_plot(jupyter, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page, errors = _open(browser, f"{jupyter}/lab/tree/notebooks/00_start_here.ipynb?token={TOKEN}")
    # Learner mode: no instructor menus.
    # (Exact-text selectors: the start page's prose mentions formgrader in lower case.)
    assert page.locator('.lm-MenuBar-content >> text="Nbgrader"').count() == 0
    assert page.locator('.lm-MenuBar, .jp-Launcher, .jp-SideBar').locator('text="Formgrader"').count() == 0
    _run_all(page)
    slider = page.locator(".widget-slider .noUi-handle, .widget-slider input[type=range]").first
    try:
        slider.wait_for(timeout=120_000)
    except Exception:
        page.screenshot(path=str(SHOTS / "start_page_failure.png"), full_page=True)
        raise AssertionError(f"the slider never rendered; screenshot in {SHOTS / 'start_page_failure.png'}; "
                             f"JavaScript errors: {errors}") from None
    image = page.locator(".jp-OutputArea-output img").last
    image.wait_for(timeout=60_000)
    slider.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "start_page_before.png"), full_page=False)
    before = image.get_attribute("src")
    slider.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "(before) => { const imgs = document.querySelectorAll('.jp-OutputArea-output img');"
        " return imgs.length && imgs[imgs.length - 1].getAttribute('src') !== before; }",
        arg=before, timeout=60_000)
    # Three key presses queue three redraws: let the kernel finish them so the screenshot shows epsilon = 0.35.
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'] >> visible=true", timeout=60_000)
    page.wait_for_timeout(1000)
    page.screenshot(path=str(SHOTS / "start_page_after.png"), full_page=False)
    assert "0.35" in page.locator(".widget-readout").first.inner_text()
    assert not errors, f"JavaScript errors: {errors}"
    page.close()


def test_lab_opens(jupyter, browser):
    labs = sorted((ROOT / "labs").glob("*/*.ipynb"))  # the served copy mirrors these paths
    if not labs:
        pytest.fail("no lab notebook in labs/: run 'make release'")
    rel = labs[0].relative_to(ROOT).as_posix()
    page, errors = _open(browser, f"{jupyter}/lab/tree/{rel}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook .jp-Cell >> visible=true", timeout=60_000)
    page.screenshot(path=str(SHOTS / "lab.png"), full_page=False)
    assert not errors, f"JavaScript errors: {errors}"
    page.close()
