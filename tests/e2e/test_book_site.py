"""The course website (make book) in headless Chromium: the start page, a question page, search, and no request
leaving the machine.

Needs a built site in build/book/ (`make book`; CI builds it in the smoke profile before `make e2e`). Serves it with
Python's http.server on 127.0.0.1 and routes every request: one to another host is aborted and recorded, and the
test fails on it. Screenshots go to build/e2e/book-*.png.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "book"
SHOTS = ROOT / "build" / "e2e"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output clean
        pass


@pytest.fixture(scope="module")
def site():
    if not (SITE / "index.html").is_file():
        pytest.skip("no website in build/book: run `make book` first (CI: RLPREP_PROFILE=smoke make book; "
                    "skipped there only when Node.js could not be installed)")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(SITE)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()



@pytest.fixture
def visit(site, browser):
    """Open a path of the site; returns (page, outside, errors): requests to other hosts (aborted) and JS errors."""
    pages = []

    def open_(path: str):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        outside: list[str] = []
        errors: list[str] = []

        def route(r):
            if r.request.url.startswith(site + "/") or r.request.url.startswith("data:"):
                r.continue_()
            else:
                outside.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        # A request the site itself cannot answer (issue 38: every page asked for /thebe-core.min.js, a 404).
        page.on("response", lambda r: errors.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None)
        page.goto(site + path)
        page.wait_for_load_state("networkidle")
        pages.append(page)
        return page, outside, errors

    yield open_
    for page in pages:
        page.close()


def test_start_page_loads(visit):
    page, outside, errors = visit("/")
    assert "rlprep" in page.title()
    assert page.locator("h1", has_text="rlprep").first.is_visible()
    assert page.locator("a[href='/questions/w11']").count() >= 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "book-start.png"))
    assert not outside, outside
    assert not errors, errors


def test_question_page_shows_its_chinese_heading_and_a_plot(visit):
    page, outside, errors = visit("/questions/W11")            # the stable URL; MyST's own slug is lower-case
    heading = page.locator("h1").first
    assert "W11 · 如果同事训 GRPO 时发现 loss 变成 0" in heading.inner_text()
    plots = page.evaluate("Array.from(document.querySelectorAll('article img')).filter(i => i.complete && "
                          "i.naturalWidth > 100 && /\\.(png|webp)$/.test(new URL(i.src).pathname)).length")
    assert plots >= 1
    assert page.locator("a", has_text="section W11").count() == 1    # the link to the notebook section
    assert page.locator("article", has_text="Spoken answer:").count() >= 1   # render_spoken's output, as text
    page.screenshot(path=str(SHOTS / "book-w11.png"), full_page=False)
    assert not outside, outside
    assert not errors, errors


def test_search_finds_gae(visit):
    page, outside, errors = visit("/")
    page.click("button.myst-search-bar")
    page.keyboard.type("GAE")
    results = page.locator("[role=dialog] li", has_text="GAE")
    results.first.wait_for(timeout=15_000)
    assert results.count() >= 3
    page.screenshot(path=str(SHOTS / "book-search.png"))
    assert not outside, outside
    assert not errors, errors


def test_a_slider_shows_its_default_figure_and_the_note(visit):
    page, outside, errors = visit("/notebooks/gae")               # 02_gae.ipynb: the λ/γ weights slider
    note = page.locator("text=Run it in JupyterLab to move the slider.")
    assert note.count() >= 1
    assert "λ = 0.95" in note.first.inner_text()
    figure_before_note = page.evaluate("""() => {
        const note = [...document.querySelectorAll('article p, article em')].find(e => e.innerText.includes('move the slider'));
        const imgs = [...document.querySelectorAll('article img')];
        return imgs.some(i => i.naturalWidth > 100 && (i.compareDocumentPosition(note) & Node.DOCUMENT_POSITION_FOLLOWING));
    }""")
    assert figure_before_note
    assert not outside, outside
    assert not errors, errors
