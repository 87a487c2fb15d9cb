"""The pages that show a hostile submission, opened in Chromium: nothing of the learner's runs (issue #33, first row).

A throwaway course (``tests/hostile_html.py``: ``autograder/nbgrader_config.py`` copied verbatim, lab01 graded by
nbgrader's own autograde and generate_feedback) holds one submission whose markdown and outputs carry scripts,
event handlers, ``javascript:`` links, frames, forms and a meta refresh; each payload that runs sets
``window.__pwned`` and requests ``/pwned/<name>``. Formgrader's submission page comes from a Jupyter server with
formgrader enabled, started in the course folder as an instructor starts it; the feedback page from a plain HTTP
server, as a learner opens it. Each page must request nothing under ``/pwned``, leave the marker unset, hold no
active element in its cells, and still show the honest table and plot. Run with ``make e2e``; screenshots in
``build/e2e/``. The same pages as HTML, without a browser: ``tests/attacks/test_attack_html.py``.
"""

from __future__ import annotations

import functools
import http.server
import os
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from chromium import CHROMIUM
from servers import free_port, jupyter_server
from hostile_html import LAB, MARK, STUDENT, review, submission_id

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "e2e"
TOKEN = "rlprep-e2e-review"

# What the learner's cells hold that could run, navigate or submit, read from the live DOM.
ACTIVE_IN_CELLS = """() => {
  const bad = [];
  const never = ['script', 'iframe', 'frame', 'object', 'embed', 'form', 'meta', 'base', 'link', 'svg', 'math'];
  for (const el of document.querySelectorAll('#notebook-container *')) {
    const tag = el.tagName.toLowerCase();
    if (never.includes(tag)) bad.push('<' + tag + '>');
    for (const a of el.attributes) {
      const name = a.name.toLowerCase(), value = a.value.replace(/[\\s\\x00-\\x1f]/g, '').toLowerCase();
      if (name.startsWith('on') || name === 'srcdoc') bad.push('<' + tag + ' ' + name + '>');
      if (['href', 'src', 'action', 'formaction', 'data', 'xlink:href'].includes(name)
          && /^(javascript|vbscript|data:text\\/html)/.test(value)) {
        bad.push('<' + tag + ' ' + name + '=' + value + '>');
      }
    }
  }
  return bad;
}"""
HONEST_SHOWN = """() => {
  const tables = [...document.querySelectorAll('#notebook-container table')].map(t => t.innerText);
  const plots = [...document.querySelectorAll('#notebook-container img[src^="data:image/png"]')];
  return {table: tables.some(t => t.includes('greedy')), pandas: tables.some(t => t.includes('discounted_return')),
          plot: plots.some(i => i.naturalWidth > 100)};
}"""


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    if CHROMIUM is None:
        pytest.fail("Chromium is not installed: install Debian's 'chromium' package (apt-get install chromium)")
    work = tmp_path_factory.mktemp("review-pages")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RLPREP_HOME", str(work / "home"))
        mp.delenv("RLPREP_GRADEBOOK_URL", raising=False)
        mp.delenv("RLPREP_COURSE_ID", raising=False)
        yield review(work)


@pytest.fixture(scope="module")
def formgrader(course):
    """A Jupyter server with formgrader (the venv's nbgrader extensions), started in the course folder."""
    port = free_port()
    argv = [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={course.work}"]
    base = f"http://127.0.0.1:{port}"
    with jupyter_server(argv, base, TOKEN, course.work / "jupyter.log", "the Jupyter server", cwd=course.course,
                        env=dict(os.environ, JUPYTER_RUNTIME_DIR=str(course.work / "runtime"))):
        yield SimpleNamespace(base=base)


@pytest.fixture(scope="module")
def feedback_server(course):
    """The feedback folder over plain HTTP, as any web server (or a browser opening the file) would show it."""
    handler = functools.partial(type("Quiet", (http.server.SimpleHTTPRequestHandler,),
                                     {"log_message": lambda *a: None}), directory=str(course.feedback().parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/{course.feedback().name}"
    server.shutdown()
    server.server_close()


def _visit(browser, url: str, shot: str) -> SimpleNamespace:
    """Open ``url``, give every payload time to fire (onerror, ontoggle, meta refresh, fetch), read the page."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    local = url.split("/")[2]  # host:port; nothing else is reachable (MathJax's CDN is refused at once)
    page.route("**/*", lambda route: route.continue_() if route.request.url.split("/")[2] == local else route.abort())
    page.goto(url, wait_until="domcontentloaded")
    try:
        page.wait_for_load_state("load", timeout=30_000)
    except Exception:  # playwright's TimeoutError: read what the page holds anyway
        pass
    page.wait_for_timeout(2000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    sanitised = page.locator(".rlprep-sanitized")
    if sanitised.count():  # the screenshot shows the hostile cells as the page shows them
        sanitised.first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / shot), full_page=False)
    seen = SimpleNamespace(url=page.url, pwned_requests=sorted({u for u in requests if f"/{MARK}" in u}))
    for name, script in [("marker", f"() => window.__{MARK} === undefined ? null : String(window.__{MARK})"),
                         ("active", ACTIVE_IN_CELLS), ("honest", HONEST_SHOWN)]:
        try:
            setattr(seen, name, page.evaluate(script))
        except Exception as err:  # e.g. the page navigated away while it was read
            setattr(seen, name, f"could not read the page: {err}")
    page.close()
    return seen


def _assert_safe(seen) -> None:
    assert seen.pwned_requests == [], f"learner payloads ran or loaded: {seen.pwned_requests}"
    assert seen.marker is None, f"a learner script ran: window.__{MARK} = {seen.marker!r}"
    assert f"/{MARK}" not in seen.url, f"the page navigated to {seen.url}"
    assert seen.active == [], f"active elements in the learner's cells: {seen.active}"
    assert seen.honest == {"table": True, "pandas": True, "plot": True}, seen.honest


def test_formgrader_submission_page_runs_nothing_from_the_learner(course, formgrader, browser):
    url = f"{formgrader.base}/formgrader/submissions/{submission_id(course.course)}/?token={TOKEN}"
    _assert_safe(_visit(browser, url, "formgrader_hostile_submission.png"))


def test_feedback_page_runs_nothing_from_the_learner(feedback_server, browser):
    _assert_safe(_visit(browser, feedback_server, "feedback_hostile_submission.png"))


def test_formgrader_serves_no_file_of_the_learners_that_could_run(course, formgrader):
    # A hand-in with a script in evil.html and evil.svg beside the notebook, autograded again: formgrader serves
    # the submission's folder from the instructor's origin, so neither may be there (tests/attacks/
    # test_attack_submission_files.py checks the folder itself, for more names and types).
    import urllib.error

    hand_in = course.course / "submitted" / STUDENT / LAB
    (hand_in / "evil.html").write_text(f"<script>window.__{MARK} = 1; fetch('/{MARK}/file')</script>")
    (hand_in / "evil.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/{MARK}/svg")'
                                      "</script></svg>")
    course.room.autograde(LAB, STUDENT)
    base = f"{formgrader.base}/formgrader/submissions/{submission_id(course.course)}"
    with urllib.request.urlopen(f"{base}/{LAB}.ipynb?token={TOKEN}", timeout=30) as response:
        assert response.status == 200  # the route serves the submission's folder
        assert "html" not in response.headers.get("Content-Type", "")
    for name in ("evil.html", "evil.svg"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/{name}?token={TOKEN}", timeout=30)
        assert refused.value.code == 404, name
