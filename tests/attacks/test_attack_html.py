"""Attack: a submission's markdown and outputs carry HTML that runs in the pages showing it (issue #33, first row).

Formgrader's submission page runs in the instructor's Jupyter server, so a script there can open a terminal (code as
the instructor, outside any sandbox) or edit grades through formgrader's API; the feedback page opens in the learner's
browser. The payloads (``tests/hostile_html.py``) are graded by nbgrader's own autograde with ``autograder/``'s
config, then shown by generate_feedback and by formgrader's exporter. Two layers are checked apart: the autograded
notebook holds no active content (rendered by a plain, unsanitising exporter), and the pages stay safe for a
notebook that reached ``autograded/`` unsanitised (graded before this fix, or edited there).
The same pages in Chromium: ``tests/e2e/test_review_pages.py``.
"""

from __future__ import annotations

import re
import shutil

import nbformat
import pytest

from grading_helpers import ROOT
from hostile_html import (HONEST_MARKDOWN, HOSTILE_MARKDOWN, HOSTILE_OUTPUTS, LAB, STUDENT, formgrader_page,
                          honest_content_missing, honest_png, raw_hostile_outputs, review, unsafe_parts)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    work = tmp_path_factory.mktemp("html-attack")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RLPREP_HOME", str(work / "home"))
        mp.delenv("RLPREP_GRADEBOOK_URL", raising=False)
        mp.delenv("RLPREP_COURSE_ID", raising=False)
        yield review(work)


def test_the_honest_answer_still_gets_full_marks(graded):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded.course / 'gradebook.db'}", "rlprep") as gb:
        sub = gb.find_submission_notebook(LAB, LAB, STUDENT)
        assert sub.score == sub.max_score > 0, [(g.name, g.score, g.max_score) for g in sub.grades]


def test_autograded_notebook_holds_nothing_that_runs(graded):
    # Layer 1: whatever renders autograded/ later (formgrader, feedback, an export, JupyterLab) starts from clean
    # cells. Rendered here by nbconvert's plain classic exporter, which sanitises nothing.
    from nbconvert.exporters import HTMLExporter

    exporter = HTMLExporter(template_name="classic")
    html, _ = exporter.from_filename(str(graded.autograded()))
    assert unsafe_parts(html) == []
    assert honest_content_missing(html, honest_png(graded.autograded())) == []
    kinds = {key for c in nbformat.read(graded.autograded(), as_version=4).cells for o in c.get("outputs", [])
             for key in o.get("data", {})}
    assert not kinds & {"application/javascript", "application/vnd.jupyter.widget-view+json", "image/svg+xml"}, kinds


def test_feedback_page_runs_nothing_from_the_learner(graded):
    html = graded.feedback().read_text(encoding="utf-8")
    assert unsafe_parts(html) == []
    assert honest_content_missing(html, honest_png(graded.autograded())) == []


def test_formgrader_submission_page_runs_nothing_from_the_learner(graded):
    html = formgrader_page(graded.course, graded.autograded())
    assert unsafe_parts(html) == []
    assert honest_content_missing(html, honest_png(graded.autograded())) == []


@pytest.fixture(scope="module")
def unsanitised(graded, tmp_path_factory):
    """The graded course copied, with s01's autograded notebook put back as the kernel and the learner left it:
    the hostile markdown sources and the raw outputs (a notebook graded before the fix, or edited in place)."""
    from rlprep.classroom.cycle import Classroom

    work = tmp_path_factory.mktemp("html-attack-raw")
    shutil.copytree(graded.course, work / "course", ignore=shutil.ignore_patterns("feedback"))
    (work / "solutions").symlink_to(ROOT / "solutions")
    path = work / "course" / "autograded" / STUDENT / LAB / f"{LAB}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.get("id") in HOSTILE_MARKDOWN:
            cell.source = HOSTILE_MARKDOWN[cell.id]
        elif cell.get("id") == "hostile-code":
            cell.outputs = raw_hostile_outputs()
    nbformat.write(nb, path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RLPREP_HOME", str(work / "home"))
        mp.delenv("RLPREP_GRADEBOOK_URL", raising=False)
        mp.delenv("RLPREP_COURSE_ID", raising=False)
        room = Classroom(work, config_file=work / "course" / "nbgrader_config.py")
        feedback = room.feedback(LAB, STUDENT)
    return path, feedback


def test_pages_sanitise_a_notebook_that_reached_autograded_unsanitised(unsanitised):
    # Layer 2: the exporters formgrader and generate_feedback build from the course's config sanitise as they render.
    path, feedback = unsanitised
    for page in (formgrader_page(path.parents[3], path), feedback.read_text(encoding="utf-8")):
        assert unsafe_parts(page) == []
        assert honest_content_missing(page, honest_png(path)) == []


def test_templates_alone_clean_markdown_and_html(unsanitised, tmp_path):
    # The third net, under the preprocessor: with it removed, formgrader's templates still clean the markdown cells
    # (nbgrader's templates skip nbconvert's clean_html there; the course config cleans after strip_files_prefix)
    # and the HTML, markdown, JavaScript and widget outputs. Not the image metadata or MathJax: the preprocessor's.
    path, _ = unsanitised
    outputs = [nbformat.v4.new_output("display_data", data=data) for data, meta in HOSTILE_OUTPUTS
               if not meta and not {"image/png", "text/latex"} & set(data)]
    cells = [nbformat.v4.new_markdown_cell(src) for name, src in HOSTILE_MARKDOWN.items() if "math" not in name]
    nb = nbformat.v4.new_notebook(cells=[*cells, nbformat.v4.new_markdown_cell(HONEST_MARKDOWN),
                                         nbformat.v4.new_code_cell("", outputs=outputs)])
    nbformat.write(nb, tmp_path / "raw.ipynb")
    page = formgrader_page(path.parents[3], tmp_path / "raw.ipynb", preprocessors=[])
    assert unsafe_parts(page) == []
    lost = honest_content_missing(page, "")  # this notebook has no plot and no pandas table
    assert lost == ["the matplotlib plot", "the pandas table"], lost


def test_the_labs_markdown_is_shown_as_written():
    # Honest content is left alone: every markdown cell of every lab and solution passes through unchanged.
    from rlprep.grading.sanitize import clean_markdown

    paths = sorted(ROOT.glob("labs/*/*.ipynb")) + sorted(ROOT.glob("solutions/*/*.ipynb"))
    cells = [c for p in paths for c in nbformat.read(p, as_version=4).cells if c.cell_type == "markdown"]
    assert len(paths) >= 2 and cells
    assert [c.source[:80] for c in cells if clean_markdown(c.source, c.get("attachments")) != c.source] == []


@pytest.mark.parametrize("html", [
    '<a href="JaVaScRiPt:alert(1)">x</a>', '<a href="java&#09;script:alert(1)">x</a>',
    '<a href="&#106;avascript:alert(1)">x</a>', '<a href=" javascript:alert(1)">x</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>', '<a href="vbscript:x">x</a>',
    '<a href="page.html">a learner file formgrader serves</a>', '<img src="javascript:alert(1)">',
    '<img src="data:image/svg+xml;base64,PHN2Zy8+">', '<span style="background:u\\72l(x)">x</span>',
    '<span style="color:red;background-image:url(/x)">x</span>', '<span style="position:fixed;top:0">x</span>',
    '<div id="submission_id">x</div>', '<svg><a href="javascript:alert(1)"><text>x</text></a></svg>',
    '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    '<!--><img src=x onerror=alert(1)>-->', '<table><tr><td><form><input formaction="javascript:alert(1)"></form>',
])
def test_clean_html_keeps_no_active_markup(html):
    from rlprep.grading.sanitize import ALLOWED_TAGS, clean_html

    from bs4 import BeautifulSoup

    cleaned = clean_html(html)
    assert unsafe_parts(f'<div id="notebook-container">{cleaned}</div>') == [], cleaned
    for tag in BeautifulSoup(cleaned, "html.parser").find_all(True):
        assert tag.name in ALLOWED_TAGS, cleaned
        for name, value in tag.attrs.items():
            assert not name.startswith("on") and name not in ("id", "action", "formaction", "srcdoc"), cleaned
            if name in ("href", "src", "style"):
                assert not re.search(r"script:|data:text|data:image/svg|url\(|\\|position|page\.html", value,
                                     re.I), cleaned


def test_past_its_budget_a_notebook_shows_markdown_as_source_and_drops_html():
    # A notebook of many large cells cannot keep the grader rendering and cleaning for minutes.
    from rlprep.grading.sanitize import MAX_CLEANED, MAX_MARKDOWN, clean_notebook

    cells = [nbformat.v4.new_markdown_cell("x" * (MAX_MARKDOWN - 1)) for _ in range(MAX_CLEANED // MAX_MARKDOWN + 2)]
    html = nbformat.v4.new_output("display_data", data={"text/html": "<b>late</b>", "text/plain": "late"})
    nb = clean_notebook(nbformat.v4.new_notebook(cells=[*cells, nbformat.v4.new_code_cell("", outputs=[html])]))
    shown = [c.source == "x" * (MAX_MARKDOWN - 1) for c in nb.cells[:-1]]
    assert shown == [True] * (MAX_CLEANED // MAX_MARKDOWN) + [False] * 2
    assert dict(nb.cells[-1].outputs[0].data) == {"text/plain": "late"}
