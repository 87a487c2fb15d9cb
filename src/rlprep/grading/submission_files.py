"""Which of a hand-in's other files stay where formgrader serves them (grader security, issue #33).

nbgrader's autograde copies every file of ``submitted/<student>/<lab>/`` into ``autograded/<student>/<lab>/``, and
formgrader serves that folder from the instructor's own Jupyter server (``/formgrader/submissions/<id>/<file>``,
nbgrader 0.9.6's ``SubmissionFilesHandler``, a tornado ``StaticFileHandler``); generate_feedback copies it on into
``feedback/``. A learner's ``page.html`` or ``drawing.svg`` there runs its script as the instructor when that address
is opened. ``DropUnsafeFiles`` (an autograde preprocessor, ``apply_grading_config``) deletes from the autograded
folder every file a browser would not just show or download: kept are the notebooks, the instructor's own files
(those of the lab's source folder, unchanged) and files tornado sends as plain text, CSV, JSON, Python, markdown,
PNG/JPEG/GIF or a download (``application/octet-stream``), judged by the Content-Type tornado derives from the name.
``submitted/`` is not touched by autograde; ``SAFE_NAMES`` (``CourseDirectory.include``) keeps such files out of it
when nbgrader's exchange copies a hand-in (``collect``, and ``submit`` where the course's config is loaded).
"""

from __future__ import annotations

import filecmp
import mimetypes
from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

SHOWN_AS_IS = frozenset({
    "application/octet-stream", "application/gzip", "text/plain", "text/csv", "text/x-python", "text/markdown",
    "application/json", "image/png", "image/jpeg", "image/gif",
})

# CourseDirectory.include: the names nbgrader's exchange copies (submit, collect); each is served as SHOWN_AS_IS.
SAFE_NAMES = ("*.ipynb", "*.py", "*.txt", "*.md", "*.csv", "*.json", "*.png", "*.jpg", "*.jpeg", "*.gif", "*.npy",
              "*.npz")


def served_type(name: str) -> str:
    """The Content-Type tornado's ``StaticFileHandler.get_content_type`` sends for a file called ``name``."""
    mime, encoding = mimetypes.guess_type(name)
    if encoding == "gzip":
        return "application/gzip"
    return "application/octet-stream" if encoding is not None or mime is None else mime


def unsafe_files(folder: Path, source: Path | None) -> list[Path]:
    """The files under ``folder`` a browser might run: not a notebook, not the instructor's (the same bytes at the
    same place under ``source``), and not of a type in ``SHOWN_AS_IS``. A link counts as unsafe."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        if not path.is_symlink() and (path.suffix == ".ipynb" or served_type(path.name) in SHOWN_AS_IS):
            continue
        theirs = source / path.relative_to(folder) if source is not None else None
        if theirs is not None and theirs.is_file() and not path.is_symlink() and filecmp.cmp(theirs, path, False):
            continue
        found.append(path)
    return found


class DropUnsafeFiles(NbGraderPreprocessor):
    """Delete the unsafe files (``unsafe_files``) from the autograded folder of the notebook being graded; does
    nothing where that folder is not the course's ``autograded/<student>/<assignment>``."""

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        here = resources.get("metadata", {}).get("path")
        coursedir = CourseDirectory(config=self.config)
        folder = Path(coursedir.format_path(coursedir.autograded_directory, info.get("student", "."),
                                            info.get("assignment", "."))).resolve()
        if not here or Path(here).resolve() != folder:
            self.log.warning("not removing a hand-in's other files: %s is not the autograded folder %s", here, folder)
            return nb, resources
        source = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"])).resolve()
        for path in unsafe_files(folder, source if source.is_dir() else None):
            self.log.warning("removed %s from the autograded folder: formgrader would serve it as %s",
                             path.relative_to(folder), served_type(path.name))
            path.unlink()
        return nb, resources
