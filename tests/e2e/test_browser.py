"""End to end in a real browser: JupyterLab in learner mode, driven by headless Chromium through Playwright.

Run with ``make e2e``. Opens the start page and a lab, runs the slider cell, moves the slider, checks the
plot changed and that the page raised no JavaScript errors, and saves screenshots under ``build/e2e/``.
Then a learner's whole loop on lab01 (no Validate button; type an answer, save, grade, see the table; edit and run
without saving, grade, see the warning), a new terminal (it opens at the repository root), and the mock-interview
widget (its key-point marks render as two distinct glyphs, no emoji; the timer label after the answer is in).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from chromium import CHROMIUM
from servers import free_port, jupyter_server, jupyterlab_argv

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "e2e"
TOKEN = "rlprep-e2e"


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
    # Autosave off: the unsaved-changes step must not be saved behind its back (a learner's autosave runs every 2 min).
    settings = work / "settings" / "@jupyterlab" / "docmanager-extension" / "plugin.jupyterlab-settings"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"autosave": false}')
    port = free_port()
    env = dict(os.environ, JUPYTER_CONFIG_PATH=str(config_dir), JUPYTER_RUNTIME_DIR=str(work / "runtime"),
               RLPREP_PROFILE="smoke", RLPREP_HOME=str(work / "home"),
               MPLBACKEND="module://matplotlib_inline.backend_inline",
               # the server, its kernels, terminals and `rlprep grade` import this checkout's rlprep
               PYTHONPATH=os.pathsep.join(p for p in [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")] if p))
    argv = jupyterlab_argv(port, TOKEN, served, work)
    base = f"http://127.0.0.1:{port}"
    with jupyter_server(argv, base, TOKEN, work / "jupyter.log", "JupyterLab", env=env):
        yield SimpleNamespace(base=base, root=served, work=work)


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
    dialog = page.locator(".jp-Dialog")
    if dialog.count():  # a modal dialog blocks every click: say what it is
        raise AssertionError(f"JupyterLab opened a dialog: {dialog.first.inner_text()!r}")
    return page, errors


def _run_all(page, attempts=3):
    """Run > Run All Cells, until the kernel has taken the cells (an execution count or [*] appears).

    A click made while the kernel is still connecting is dropped silently by JupyterLab, so wait and retry.
    """
    for _ in range(attempts):
        page.keyboard.press("Escape")  # close any menu or tooltip left open
        page.wait_for_timeout(500)
        dialog = page.locator(".jp-Dialog")
        if dialog.count():  # a modal dialog blocks every click: say what it is
            raise AssertionError(f"JupyterLab opened a dialog: {dialog.first.inner_text()!r}")
        page.click('.lm-MenuBar-itemLabel >> text="Run"', timeout=20_000)
        page.click('.lm-Menu-itemLabel >> text="Run All Cells"', timeout=20_000)
        try:
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-InputPrompt')].some(p => /\\[(\\d+|\\*)\\]/.test(p.textContent))",
                timeout=20_000)
            return
        except Exception:  # playwright's TimeoutError; retry the menu command
            continue
    raise AssertionError(f"Run All Cells never started the kernel after {attempts} attempts")


def test_start_page_slider_updates_plot(jupyter, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page, errors = _open(browser, f"{jupyter.base}/lab/tree/notebooks/00_start_here.ipynb?token={TOKEN}")
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
    page, errors = _open(browser, f"{jupyter.base}/lab/tree/{rel}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook .jp-Cell >> visible=true", timeout=60_000)
    page.screenshot(path=str(SHOTS / "lab.png"), full_page=False)
    assert not errors, f"JavaScript errors: {errors}"
    page.close()


LAB01 = "labs/lab01_gae/lab01_gae.ipynb"
FIRST_ANSWER = "return np.zeros(len(rewards)), np.asarray(values, dtype=float)"  # right shapes, wrong values
SECOND_ANSWER = "return np.ones(len(rewards)), np.asarray(values, dtype=float)"


def _code_cell(page, text):
    """The code cell whose editor shows ``text``."""
    return page.locator(".jp-CodeCell", has=page.locator(".cm-content", has_text=text)).last


def _replace_line(page, cell, old, new):
    """Click the editor line showing ``old`` and type ``new`` over it (its indentation kept), as a learner does."""
    cell.locator(".cm-line", has_text=old).first.click()
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")  # CodeMirror: back to the end of the indentation
    page.keyboard.type(new)


def _run_cell(page, cell):
    cell.locator(".cm-content").first.click()
    page.keyboard.press("Control+Enter")  # run in place


def test_lab01_loop_type_save_grade_then_unsaved_warning(jupyter, browser):
    """Items 1 and 2 of issue 18 and the learner's loop: no Validate button (one verdict); an answer typed and
    saved is what gets graded; an answer edited and run but not saved is graded from the file, with a warning."""
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    page, errors = _open(browser, f"{jupyter.base}/lab/tree/{LAB01}?token={TOKEN}")
    toolbar = page.locator(".jp-NotebookPanel-toolbar >> visible=true").first
    toolbar.wait_for(timeout=30_000)
    assert toolbar.locator(".jp-ToolbarButtonComponent").count() > 3  # the toolbar is there, with its buttons
    assert toolbar.get_by_text("Validate", exact=True).count() == 0  # nbgrader's Validate: hidden in learner mode
    answer = _code_cell(page, "def compute_gae(")
    _replace_line(page, answer, "raise NotImplementedError()", FIRST_ANSWER)
    expect(answer.locator(".cm-content")).to_contain_text(FIRST_ANSWER)
    page.keyboard.press("Control+s")
    expect(page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty")).to_have_count(0, timeout=30_000)
    assert FIRST_ANSWER in (jupyter.root / LAB01).read_text()

    grade = _code_cell(page, "grade_here()")
    _run_cell(page, grade)
    output = grade.locator(".jp-OutputArea")
    expect(output).to_contain_text("/ 10 points", timeout=240_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'] >> visible=true", timeout=60_000)
    table = output.inner_text()
    page.screenshot(path=str(SHOTS / "lab01_graded.png"), full_page=False)
    assert re.search(r"lab01_gae: \d+ / 10 points", table), table
    assert "test_gae_by_hand" in table and "FAIL" in table and "NotImplementedError" not in table, table
    assert "warning:" not in table  # saved, and the answer cell was never run here: nothing to warn about

    _replace_line(page, answer, FIRST_ANSWER, SECOND_ANSWER)
    _run_cell(page, answer)  # run, but not saved
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'] >> visible=true", timeout=60_000)
    expect(page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty")).to_have_count(1)
    _run_cell(page, grade)
    expect(output).to_contain_text("warning: the saved lab01_gae.ipynb differs from the code you last ran for "
                                   "compute_gae", timeout=60_000)
    expect(output).to_contain_text("/ 10 points", timeout=240_000)
    page.screenshot(path=str(SHOTS / "lab01_unsaved_warning.png"), full_page=False)
    assert SECOND_ANSWER not in (jupyter.root / LAB01).read_text()  # grading read the saved file
    assert not errors, f"JavaScript errors: {errors}"
    page.close()


def test_a_new_terminal_opens_at_the_repository_root(jupyter, browser):
    """Item 3: a terminal launched while the file browser shows labs/lab01_gae/ starts in the served root."""
    page, errors = _open(browser, f"{jupyter.base}/lab/tree/{LAB01}?token={TOKEN}")
    breadcrumbs = page.locator(".jp-FileBrowser .jp-BreadCrumbs").first
    expect_text = "lab01_gae"
    page.wait_for_function("(t) => [...document.querySelectorAll('.jp-BreadCrumbs')].some(b => b.innerText.includes(t))",
                           arg=expect_text, timeout=30_000)
    assert expect_text in breadcrumbs.inner_text()  # the launcher asks for this folder
    page.click('.lm-MenuBar-itemLabel >> text="File"')
    page.click('.lm-Menu-itemLabel >> text="New Launcher"')
    page.locator('.jp-Launcher .jp-LauncherCard >> text="Terminal"').first.click(timeout=30_000)
    terminal = page.locator(".jp-Terminal >> visible=true").first
    terminal.wait_for(timeout=60_000)
    marker = jupyter.work / "terminal_pwd.txt"
    terminal.click()
    page.wait_for_timeout(1000)  # the shell's first prompt
    page.keyboard.type(f"pwd > '{marker}'\n")
    deadline = time.time() + 30
    while not marker.is_file() and time.time() < deadline:
        time.sleep(0.5)
    page.screenshot(path=str(SHOTS / "terminal.png"), full_page=False)
    assert marker.is_file(), "the terminal never ran pwd"
    assert Path(marker.read_text().strip()).resolve() == jupyter.root.resolve()
    assert not errors, f"JavaScript errors: {errors}"
    page.close()


def test_mock_widget_marks_are_distinct_glyphs_and_the_timer_stops_when_answered(jupyter, browser):
    """Items 5 and 6: the key-point marks render as two different glyphs in the page's own font (not the same
    missing-glyph box), the widget shows no emoji; once the answer is in, the label says how long it took, and
    typing the follow-up does not bring a frozen countdown back."""
    from playwright.sync_api import expect

    page, errors = _open(browser, f"{jupyter.base}/lab/tree/notebooks/90_mock_interview.ipynb?token={TOKEN}")
    _run_all(page)
    widget = page.locator(".jp-OutputArea-output .widget-vbox").first
    widget.wait_for(timeout=120_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'] >> visible=true", timeout=120_000)
    widget.scroll_into_view_if_needed()
    expect(widget.locator(".widget-label", has_text="Time left")).to_be_visible(timeout=30_000)
    widget.locator("textarea >> visible=true").first.type("PPO clips the ratio; KL penalty keeps the policy close.")
    widget.get_by_role("button", name="Submit answer").click()
    answered = widget.locator(".widget-label", has_text="Answered in")
    expect(answered).to_be_visible(timeout=30_000)
    took = answered.inner_text()
    # Issue 38: the answer stays on screen (read-only) while the follow-up is answered, and the follow-up has a clock.
    kept = widget.locator("textarea[disabled] >> visible=true").first
    expect(kept).to_have_value("PPO clips the ratio; KL penalty keeps the policy close.")
    expect(widget.locator(".widget-label", has_text=re.compile(r"^Follow-up \d+:\d\d$"))).to_be_visible()
    widget.locator("textarea:not([disabled]) >> visible=true").first.type("Because the advantage estimate is noisy.")
    page.wait_for_timeout(2500)  # a ticking countdown would have changed by now
    assert answered.inner_text() == took and re.fullmatch(r"Answered in \d+:\d\d", took.strip()), took
    assert widget.locator(".widget-label", has_text="Time left").count() == 0
    widget.get_by_role("button", name="Submit follow-up").click()
    marks = widget.locator("li span")
    expect(marks.first).to_be_visible(timeout=30_000)
    page.screenshot(path=str(SHOTS / "mock_widget.png"), full_page=False)
    glyphs = marks.first.evaluate("""(el) => {
        const font = getComputedStyle(el).font;
        const draw = (ch) => { const c = document.createElement('canvas'); c.width = c.height = 64;
            const g = c.getContext('2d'); g.font = font; g.fillText(ch, 8, 48); return c.toDataURL(); };
        return {covered: draw('\u25CF'), missed: draw('\u25CB'), missing: draw('\uE000'), blank: draw(' ')};
    }""")
    assert glyphs["covered"] != glyphs["missed"], "● and ○ render the same: a missing-glyph box"
    for name in ("covered", "missed"):
        assert glyphs[name] not in (glyphs["missing"], glyphs["blank"]), f"the {name} mark has no glyph here"
    texts = set(marks.all_inner_texts())
    assert texts and texts <= {"●", "○"}, texts
    has_emoji = widget.evaluate("(el) => /\\p{Extended_Pictographic}/u.test(el.innerText)")
    assert not has_emoji, widget.inner_text()
    assert not errors, f"JavaScript errors: {errors}"
    page.close()
