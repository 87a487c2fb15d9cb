"""Attack: a hand-in carries other files beside the notebook (issue #33, review pages).

Formgrader serves every file of a submission's autograded folder from the instructor's origin
(``/formgrader/submissions/<id>/<file>``: nbgrader 0.9.6's ``SubmissionFilesHandler``, a tornado static file handler
on ``autograded/<student>/<lab>/``), and nbgrader's autograde copies every file of ``submitted/`` there. A learner's
``evil.html`` or ``evil.svg`` would run its script as the instructor the moment that address is opened. After
autograde, that folder must hold only what a browser shows without running anything (the notebooks, text, data,
PNG/JPEG/GIF images), whatever the file's name, case or folder; the learner's hand-in in ``submitted/`` stays as it
was. Served over HTTP by formgrader itself: ``tests/e2e/test_review_pages.py``.
"""

from __future__ import annotations

import mimetypes

import nbformat
import pytest
from hostile_html import LAB, STUDENT, instructor_course

from grading_helpers import reference_answer, release, variant

SCRIPT = "<script>window.__pwned = 1; fetch('/pwned/file')</script>"
SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>window.__pwned = 1</script></svg>'
HOSTILE_FILES = {  # path in the hand-in: content
    "evil.html": SCRIPT, "evil.svg": SVG, "EVIL.HTM": SCRIPT, "page.xhtml": SCRIPT, "data.xml": SVG,
    ".hidden.html": SCRIPT, "sub/evil.html": SCRIPT, "sub/deeper/evil.svg": SVG, "evil.shtml": SCRIPT,
}
RUN_EVERYWHERE = ("evil.html", "evil.svg", "EVIL.HTM", ".hidden.html", "sub/evil.html", "sub/deeper/evil.svg")
HARMLESS_FILES = {"notes.txt": "my notes", "results.csv": "a,b\n1,2\n", "helper.py": "x = 1\n",
                  "plot.png": "\x89PNG\r\n\x1a\n",
                  "no_extension": SCRIPT}  # a script, but sent as application/octet-stream: a download, never run
SCRIPTABLE_TYPES = {"text/html", "image/svg+xml", "application/xhtml+xml", "text/xml", "application/xml"}


def served_type(name: str) -> str:
    """The Content-Type tornado's StaticFileHandler (formgrader's file handler) sends for ``name``."""
    mime, encoding = mimetypes.guess_type(name)
    if encoding == "gzip":
        return "application/gzip"
    return "application/octet-stream" if encoding or mime is None else mime


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """lab01 generated in an instructor's course (autograder/'s config), one hand-in with extra files, autograded."""
    from rlprep.classroom.cycle import Classroom

    work = tmp_path_factory.mktemp("submission-files")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RLPREP_HOME", str(work / "home"))
        mp.delenv("RLPREP_GRADEBOOK_URL", raising=False)
        mp.delenv("RLPREP_COURSE_ID", raising=False)
        course = instructor_course(work)
        room = Classroom(work, config_file=course / "nbgrader_config.py")
        room.generate(LAB)
        hand_in = course / "submitted" / STUDENT / LAB
        hand_in.mkdir(parents=True)
        nbformat.write(variant(reference_answer(), base=release()), hand_in / f"{LAB}.ipynb")
        for rel, text in {**HOSTILE_FILES, **HARMLESS_FILES}.items():
            (hand_in / rel).parent.mkdir(parents=True, exist_ok=True)
            (hand_in / rel).write_text(text, encoding="latin-1")
        room.autograde(LAB, STUDENT)
        room.feedback(LAB, STUDENT)
    return course


def files_under(folder) -> dict[str, str]:
    return {str(p.relative_to(folder)): served_type(p.name) for p in folder.rglob("*") if p.is_file()}


def test_autograde_leaves_nothing_scriptable_where_formgrader_serves_files(course):
    served = files_under(course / "autograded" / STUDENT / LAB)
    assert f"{LAB}.ipynb" in served
    assert not set(RUN_EVERYWHERE) & set(served), served
    # the other names run where the system's mime.types maps them (Debian's does); elsewhere they are downloads
    assert all(served[name] == "application/octet-stream" for name in set(HOSTILE_FILES) & set(served)), served
    assert not {name: kind for name, kind in served.items() if kind in SCRIPTABLE_TYPES}, served
    assert set(HARMLESS_FILES) <= set(served), served  # data the instructor may want to look at stays


def test_the_feedback_folder_gets_none_of_them_either(course):
    given = files_under(course / "feedback" / STUDENT / LAB)
    assert not set(RUN_EVERYWHERE) & set(given), given
    others = {name: kind for name, kind in given.items() if name != f"{LAB}.html"}  # the feedback page itself
    assert not {name: kind for name, kind in others.items() if kind in SCRIPTABLE_TYPES}, given


def test_the_hand_in_itself_is_left_as_it_was(course):
    kept = files_under(course / "submitted" / STUDENT / LAB)
    assert set(HOSTILE_FILES) | set(HARMLESS_FILES) <= set(kept)


def test_the_allow_list_is_by_what_the_browser_is_sent():
    assert served_type("evil.html") == "text/html" and served_type("evil.svg") == "image/svg+xml"  # they would run
    assert served_type("no_extension") == "application/octet-stream"  # a download, never rendered


def test_the_exchange_copies_none_of_them_into_submitted(tmp_path):
    # nbgrader's exchange (submit, collect) copies a hand-in with the course's CourseDirectory.include, so with
    # autograder/'s config the hostile files never reach submitted/ either (formgrader's file handler serves any
    # file under the course root to a crafted URL: docs/grading.md)
    import shutil

    from nbgrader.utils import ignore_patterns
    from traitlets.config import Config

    from rlprep.grading.release import apply_grading_config
    from rlprep.grading.submission_files import SHOWN_AS_IS, served_type

    config = Config()
    apply_grading_config(config)
    hand_in = tmp_path / "outbound"
    for rel, text in {**HOSTILE_FILES, **HARMLESS_FILES, f"{LAB}.ipynb": "{}"}.items():
        (hand_in / rel).parent.mkdir(parents=True, exist_ok=True)
        (hand_in / rel).write_text(text, encoding="latin-1")
    shutil.copytree(hand_in, tmp_path / "submitted", ignore=ignore_patterns(
        exclude=config.CourseDirectory.ignore, include=config.CourseDirectory.include))
    copied = files_under(tmp_path / "submitted")
    assert not set(HOSTILE_FILES) & set(copied), copied
    assert {f"{LAB}.ipynb", "notes.txt", "results.csv", "helper.py", "plot.png"} <= set(copied)
    assert all(served_type("x" + glob[1:]) in SHOWN_AS_IS for glob in config.CourseDirectory.include)
