"""A class of one whose submission attacks the pages that show it (issue #33, first row).

Shared by ``tests/attacks/test_attack_html.py`` (the pages as HTML) and ``tests/e2e/test_review_pages.py`` (the same
pages in Chromium). Every payload, if it ever runs, sets ``window.__pwned`` and requests ``/pwned/<name>``; a page
that navigates or embeds one requests ``/pwned/<name>`` too. ``unsafe_parts`` lists what a page would run.

``review(work)`` lays out an instructor's course as ``autograder/`` does (its ``nbgrader_config.py`` copied verbatim,
``solutions/`` beside it), then runs nbgrader's own generate_assignment, autograde and generate_feedback through
``rlprep.classroom.cycle.Classroom`` with that file: the path ``rlprep classroom autograde --course autograder``
takes. Student ``s01`` submits lab01 with the reference answer, the hostile cells and some honest content.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import nbformat

from grading_helpers import ROOT, reference_answer, release, variant

LAB, STUDENT = "lab01_gae", "s01"
MARK = "pwned"


def js(name: str) -> str:
    """What a payload runs: a marker a test reads back, and a request it can see."""
    return f"window.__{MARK}='{name}';fetch('/{MARK}/{name}')"


HOSTILE_MARKDOWN = {
    "md-img": f'<img src=x onerror="{js("md-img")}">',
    "md-script": f"<script>{js('md-script')}</script>",
    "md-link": f"[click me](javascript:{js('md-link')})",
    "md-a": f'<a href="javascript:{js("md-a")}">a link</a>',
    "md-iframe": f'<iframe srcdoc="<script>parent.{js("md-iframe")}</script>"></iframe>',
    "md-form": f'<form action="/{MARK}/md-form" method="post"><button>send</button></form>',
    "md-meta": f'<meta http-equiv="refresh" content="0;url=/{MARK}/md-meta">',
    "md-css": f'<div style="background-image: url(/{MARK}/md-css)">styled</div>',
    "md-svg": f"<svg><script>{js('md-svg')}</script></svg>",
    "md-object": f'<object data="/{MARK}/md-object"></object><embed src="/{MARK}/md-embed">',
    "md-toggle": f'<details open ontoggle="{js("md-toggle")}"><summary>s</summary>x</details>',
    "md-math-href": f"$\\href{{javascript:{js('md-math-href')}}}{{x}}$",
}

# (data, metadata) of each output the hostile code cell displays: what `display(..., raw=True)` sends.
HOSTILE_OUTPUTS = [
    ({"text/html": f"<script>{js('out-script')}</script><img src=x onerror=\"{js('out-img')}\">",
      "text/plain": "html"}, {}),
    ({"image/svg+xml": f'<svg xmlns="http://www.w3.org/2000/svg" onload="{js("out-svg-onload")}">'
                       f"<script>{js('out-svg')}</script></svg>"}, {}),
    ({"application/javascript": js("out-js"), "text/plain": "js"}, {}),
    ({"text/markdown": f"[x](javascript:{js('out-md-link')}) <img src=x onerror=\"{js('out-md-img')}\">",
      "text/plain": "markdown"}, {}),
    ({"text/html": f'<iframe srcdoc="<script>parent.{js("out-iframe")}</script>"></iframe>'}, {}),
    ({"text/html": f"<b>isolated</b><script>{js('out-isolated')}</script>"}, {"text/html": {"isolated": True}}),
    ({"image/png": "AAAA"}, {"image/png": {"width": f"1 onerror={js('out-width')}"}}),
    ({"image/png": f'AAAA" onerror="{js("out-png-data")}'}, {}),
    ({"application/vnd.jupyter.widget-view+json": {"model_id": MARK, "version_major": 2, "version_minor": 0},
      "text/plain": "widget"}, {}),
    ({"text/html": f'<meta http-equiv="refresh" content="0;url=/{MARK}/out-meta">'
                   f'<form action="/{MARK}/out-form"><input name="a"></form>'}, {}),
    ({"text/latex": f"$\\href{{javascript:{js('out-latex')}}}{{x}}$", "text/plain": "latex"}, {}),
]

HOSTILE_CODE = "from IPython.display import display\n" + "\n".join(
    f"display({data!r}, metadata={meta!r}, raw=True)" for data, meta in HOSTILE_OUTPUTS)

HONEST_MARKDOWN = ("| policy | return |\n|---|---|\n| greedy | 12 |\n\n"
                   "The estimate $\\hat A_t = \\sum_l (\\gamma\\lambda)^l \\delta_{t+l}$ uses\n\n"
                   "$$\\delta_t = r_t + \\gamma V(s_{t+1}) - V(s_t)$$")
HONEST_CODE = """
import matplotlib
matplotlib.use("module://matplotlib_inline.backend_inline")
import matplotlib.pyplot as plt
import pandas as pd
plt.plot([0, 1, 2], [0, 1, 4])
plt.title("honest plot")
plt.show()
display(pd.DataFrame({"step": [1, 2], "discounted_return": [0.5, 0.75]}))
""".strip()


def hostile_cells() -> list:
    cells = [nbformat.v4.new_markdown_cell(src, id=name) for name, src in HOSTILE_MARKDOWN.items()]
    return cells + [nbformat.v4.new_code_cell(HOSTILE_CODE, id="hostile-code"),
                    nbformat.v4.new_markdown_cell(HONEST_MARKDOWN, id="honest-markdown"),
                    nbformat.v4.new_code_cell(HONEST_CODE, id="honest-code")]


def raw_hostile_outputs() -> list:
    """The hostile code cell's outputs as the kernel sends them (before any sanitising)."""
    return [nbformat.v4.new_output("display_data", data=data, metadata=meta) for data, meta in HOSTILE_OUTPUTS]


def instructor_course(work: Path) -> Path:
    """``work/course``: an instructor's course folder with ``autograder/nbgrader_config.py`` copied verbatim."""
    course = work / "course"
    course.mkdir(parents=True)
    shutil.copy(ROOT / "autograder" / "nbgrader_config.py", course / "nbgrader_config.py")
    (work / "solutions").symlink_to(ROOT / "solutions")  # the config's source_directory is ../solutions
    return course


def review(work: Path, students=(STUDENT,)) -> SimpleNamespace:
    """Generate lab01, submit the hostile notebook for each of ``students``, autograde them and write feedback.

    The caller sets RLPREP_CACHE / RLPREP_HOME; RLPREP_GRADEBOOK_URL must be unset (the course's own SQLite)."""
    from rlprep.classroom.cycle import Classroom

    course = instructor_course(work)
    room = Classroom(work, config_file=course / "nbgrader_config.py")
    room.generate(LAB)
    nb = variant(reference_answer(), base=release(), extra_cells=hostile_cells())
    for student in students:
        folder = course / "submitted" / student / LAB
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{LAB}.ipynb")
        room.autograde(LAB, student)
        room.feedback(LAB, student)
    return SimpleNamespace(room=room, course=course, work=work,
                           autograded=lambda s=STUDENT: course / "autograded" / s / LAB / f"{LAB}.ipynb",
                           feedback=lambda s=STUDENT: course / "feedback" / s / LAB / f"{LAB}.html")


def submission_id(course: Path, student: str = STUDENT) -> str:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", os.environ.get("RLPREP_COURSE_ID", "rlprep")) as gb:
        return gb.find_submission_notebook(LAB, LAB, student).id


def formgrader_page(course: Path, notebook: Path, preprocessors: list | None = None) -> str:
    """The HTML formgrader's submission page serves for ``notebook``: its exporter, built as formgrader builds it
    (``FormgradeExtension`` in the course folder, which reads its nbgrader_config.py), and its resources.
    ``preprocessors`` replaces the exporter's configured preprocessors (to test the templates on their own)."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension

    here = os.getcwd()
    os.chdir(course)
    try:
        extension = FormgradeExtension()
        extension.root_dir = str(course.parent)
        extension.initialize([])
        if preprocessors is not None:
            extension.config.HTMLExporter.preprocessors = preprocessors
        exporter = HTMLExporter(config=extension.config)
    finally:
        os.chdir(here)
    resources = {"assignment_id": LAB, "notebook_id": LAB, "submission_id": "s", "index": 0, "total": 1,
                 "base_url": "", "student": STUDENT, "last_name": None, "first_name": None, "notebook_path": "x"}
    html, _ = exporter.from_filename(str(notebook), resources=resources)
    return html


URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "xlink:href", "background", "poster", "srcset"}
MATHJAX_LINK = re.compile(r"\\(href|url)\s*\{\s*(javascript|vbscript|data)", re.I)
NEVER_IN_CELLS = {"script", "iframe", "frame", "frameset", "object", "embed", "applet", "form", "meta", "base",
                  "link", "svg", "math"}


def unsafe_parts(html: str) -> list[str]:
    """What in ``html`` could run, navigate or submit on the learner's behalf; [] for a safe page.

    Anywhere in the page: a payload's marker in an attribute or in a script or style. In the cells
    (``#notebook-container``): a script, frame, object, form, meta refresh or inline SVG; an event-handler attribute;
    a ``javascript:``/``vbscript:``/``data:text/html`` URL; ``srcdoc``.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    found = []
    for tag in soup.find_all(True):
        for name, value in tag.attrs.items():
            text = " ".join(value) if isinstance(value, list) else str(value)
            if MARK in text:
                found.append(f"<{tag.name} {name}={text[:80]!r}>")
        if tag.name in ("script", "style") and MARK in tag.get_text():
            found.append(f"<{tag.name}>{tag.get_text()[:80]!r}")
    cells = soup.select_one("#notebook-container")
    assert cells is not None, "no #notebook-container: not a formgrader or feedback page"
    for tag in cells.find_all(True):
        if tag.name in NEVER_IN_CELLS:
            found.append(f"<{tag.name}> in a cell")
        for name, value in tag.attrs.items():
            text = re.sub(r"[\s\x00-\x1f]", "", " ".join(value) if isinstance(value, list) else str(value)).lower()
            if name.lower().startswith("on") or name.lower() == "srcdoc":
                found.append(f"<{tag.name} {name}> in a cell")
            elif name.lower() in URL_ATTRIBUTES and text.startswith(("javascript:", "vbscript:", "data:text/html")):
                found.append(f"<{tag.name} {name}={text[:60]!r}> in a cell")
    # MathJax turns \href{URL}{text} in prose, HTML, markdown and LaTeX outputs into a link (pre/code is skipped)
    for block in cells.select(".text_cell_render, .output_html, .output_markdown, .output_latex"):
        for text in block.find_all(string=True):
            if text.parent.name not in ("pre", "code") and MATHJAX_LINK.search(text):
                found.append(f"MathJax link {MATHJAX_LINK.search(text).group(0)!r} in a cell")
    return found


def honest_content_missing(html: str, png: str) -> list[str]:
    """What of the honest cells a page lost: the markdown table, the LaTeX (as MathJax's input text, outside code),
    the matplotlib plot (``png``, its base64) as an image, and pandas' table."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    missing = []
    tables = [[c.get_text(strip=True) for c in t.find_all(["th", "td"])] for t in soup.find_all("table")]
    if ["policy", "return", "greedy", "12"] not in tables:
        missing.append("the markdown table")
    prose = " ".join(t.get_text() for t in soup.select(".text_cell_render"))
    for latex in ("$\\hat A_t = \\sum_l (\\gamma\\lambda)^l \\delta_{t+l}$", "$$\\delta_t = r_t"):
        if latex not in prose:
            missing.append(f"the LaTeX {latex}")
    if not any(img.get("src", "").replace("\n", "") == f"data:image/png;base64,{png}".replace("\n", "")
               for img in soup.find_all("img")):
        missing.append("the matplotlib plot")
    if not any("discounted_return" in cells for cells in tables):
        missing.append("the pandas table")
    return missing


def honest_png(notebook: Path) -> str:
    """The base64 PNG the honest code cell displayed in ``notebook``."""
    nb = nbformat.read(notebook, as_version=4)
    cell = next(c for c in nb.cells if c.get("id") == "honest-code")
    return next(o["data"]["image/png"] for o in cell.outputs if "image/png" in o.get("data", {}))
