"""A learner's first hour (issue 38) in a real browser: JupyterLab in learner mode, as `rlprep lab` configures it.

A lab opens clean (not marked unsaved); ■ while "Grade yourself" runs prints one line; a wrong answer's closing hint
names the failing property first; the start page's link to the instructors' section opens README.md at that section.
(The mock widget keeping the answer on screen is in test_browser.py's widget test.) Screenshots in build/e2e/.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from chromium import CHROMIUM
from servers import free_port, jupyter_server, jupyterlab_argv
from test_browser import SHOTS, TOKEN, _code_cell, _open, _run_cell

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def _lab05_with_wrong_batch_scale() -> nbformat.NotebookNode:
    """Lab 5 with group_advantages written but scale="batch" wrong, the other answers untouched (as in
    tests/test_first_hour.py)."""
    from rlprep.grading.authoring import reference_source

    nb = nbformat.read(ROOT / "labs" / "lab05_grpo" / "lab05_grpo.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.get("metadata", {}).get("rlprep", {}).get("reference", "").endswith(
        ":group_advantages"))
    cell.source = reference_source(cell.metadata["rlprep"]["reference"]).replace(
        '"batch": lambda: rewards.detach().std(unbiased=True) + eps',
        '"batch": lambda: grouped.std(dim=1, unbiased=True).repeat_interleave(group_size) + eps')
    return nb


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on a copy of the course (README.md, notebooks/, labs/) with learner mode's config and the
    environment `rlprep lab` gives its kernels."""
    if CHROMIUM is None:
        pytest.fail("Chromium is not installed: install Debian's 'chromium' package (apt-get install chromium)")
    from rlprep.grading.learner_mode import enable
    from rlprep.lab_env import kernel_environment

    work = tmp_path_factory.mktemp("first-hour")
    served = work / "course"
    for part in ("notebooks", "labs"):
        shutil.copytree(ROOT / part, served / part)
    shutil.copy(ROOT / "README.md", served / "README.md")
    nbformat.write(_lab05_with_wrong_batch_scale(), served / "labs" / "lab05_grpo" / "lab05_grpo.ipynb")
    enable(work / "config")
    settings = work / "settings" / "@jupyterlab" / "docmanager-extension" / "plugin.jupyterlab-settings"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"autosave": false}')
    # every cell rendered: with JupyterLab's default windowing the last cells of a long lab (lab 5's grade cell) may
    # stay unrendered, hence never visible to a click, depending on timing
    tracker = work / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text('{"windowingMode": "none"}')
    port = free_port()
    env = dict(kernel_environment(os.environ), JUPYTER_CONFIG_PATH=str(work / "config"),
               JUPYTER_RUNTIME_DIR=str(work / "runtime"), RLPREP_PROFILE="smoke", RLPREP_HOME=str(work / "home"),
               PYTHONPATH=os.pathsep.join(p for p in [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")] if p))
    argv = jupyterlab_argv(port, TOKEN, served, work)
    base = f"http://127.0.0.1:{port}"
    with jupyter_server(argv, base, TOKEN, work / "jupyter.log", "JupyterLab", env=env):
        yield SimpleNamespace(base=base, root=served, work=work)


@pytest.mark.parametrize("path", ["labs/lab01_gae/lab01_gae.ipynb", "notebooks/02_gae.ipynb"])
def test_a_notebook_opens_clean(lab, browser, path):
    page, errors = _open(browser, f"{lab.base}/lab/tree/{path}?token={TOKEN}")
    page.wait_for_timeout(3000)  # the kernel's info has arrived and been applied to the notebook's metadata
    dirty = page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty").count()
    page.screenshot(path=str(SHOTS / f"opens-clean-{Path(path).stem}.png"), full_page=False)
    assert dirty == 0, f"{path} is marked unsaved before any edit"
    assert not errors, f"JavaScript errors: {errors}"
    page.close()


def test_stopping_grade_yourself_prints_one_line(lab, browser):
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    page, errors = _open(browser, f"{lab.base}/lab/tree/labs/lab01_gae/lab01_gae.ipynb?token={TOKEN}")
    grade = _code_cell(page, "grade_here()")
    _run_cell(page, grade)
    output = grade.locator(".jp-OutputArea")
    expect(output).to_contain_text("grading the saved lab01_gae.ipynb", timeout=60_000)
    page.wait_for_timeout(2000)  # rlprep grade is running
    page.keyboard.press("Escape")
    page.keyboard.press("i")  # command mode: i, i interrupts the kernel (the ■ button's command)
    page.keyboard.press("i")
    expect(output).to_contain_text("interrupted: grading stopped", timeout=60_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'] >> visible=true", timeout=60_000)
    text = output.inner_text()
    page.screenshot(path=str(SHOTS / "grade-interrupted.png"), full_page=False)
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    assert "nothing saved was lost" in text and text.count("interrupted") == 1, text
    assert not errors, f"JavaScript errors: {errors}"
    page.close()


def test_a_wrong_answer_gets_a_hint_that_names_it_first(lab, browser):
    from playwright.sync_api import expect

    page, errors = _open(browser, f"{lab.base}/lab/tree/labs/lab05_grpo/lab05_grpo.ipynb?token={TOKEN}")
    grade = _code_cell(page, "grade_here()")
    _run_cell(page, grade)
    output = grade.locator(".jp-OutputArea")
    expect(output).to_contain_text("next: fix these in order", timeout=300_000)
    text = output.inner_text()
    grade.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "lab05-hint.png"), full_page=False)
    hint = text[text.index("next: "):].splitlines()
    assert hint[1].strip().startswith('1. scale="batch" wrong'), text
    assert any("kl_k3 still raises NotImplementedError" in line for line in hint), text
    assert not errors, f"JavaScript errors: {errors}"
    page.close()


def test_the_start_pages_link_opens_readme_at_the_instructors_section(lab, browser):
    page, errors = _open(browser, f"{lab.base}/lab/tree/notebooks/00_start_here.ipynb?token={TOKEN}")
    link = page.locator(".jp-RenderedMarkdown a", has_text="the instructors' section of the README").first
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_selector(".lm-TabBar-tab.jp-mod-current >> text=README.md", timeout=30_000)
    viewer = page.locator(".jp-MarkdownViewer >> visible=true").first
    viewer.wait_for(timeout=30_000)  # rendered (Markdown Preview), not the text editor
    heading = viewer.locator("h2", has_text="Instructors (nbgrader)").first
    heading.wait_for(timeout=30_000)
    page.wait_for_timeout(1500)  # the scroll to the fragment happens after rendering
    page.screenshot(path=str(SHOTS / "readme-instructors.png"), full_page=False)
    box = heading.bounding_box()
    view = viewer.bounding_box()
    assert box is not None and view is not None
    assert view["y"] - 5 <= box["y"] <= view["y"] + view["height"] / 2, (box, view)  # near the top of the viewer
    assert not errors, f"JavaScript errors: {errors}"
    page.close()
