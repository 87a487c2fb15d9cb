"""Honest answers and honest installations the sandbox must let through with full marks: an answer cell that uses
a scratch file, and a learner whose environment is reached through a symbolic link."""

from __future__ import annotations

import sys
from pathlib import Path

from harness import grade, submission

from grading_helpers import reference_answer

SCRATCH = """
import os, tempfile
with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as scratch:  # /tmp
    scratch.write("notes")
os.unlink(scratch.name)
with open(os.path.join(tempfile.mkdtemp(), "notes.txt"), "w") as notes:
    notes.write("more notes")
with open("/tmp/notes.txt", "w") as notes:  # where many scripts write without asking tempfile
    notes.write("notes in /tmp")
with open(os.path.expanduser("~/notes.txt"), "w") as notes:  # the home folder
    notes.write("notes at home")
"""


def test_an_answer_cell_that_writes_scratch_files_keeps_full_marks(tmp_path, env, sandboxed):
    graded = grade(submission(tmp_path, SCRATCH + reference_answer()), env)
    assert graded.score == graded.report["max_score"] == 10, graded.report


def test_an_environment_reached_through_a_symlink_is_sandboxed(tmp_path, env, sandboxed):
    # `.venv` -> the real environment, as `ln -s /data/venvs/rlprep .venv` would make it: the grader (from the
    # command line or from a notebook kernel, both start this interpreter) must find its sandbox, not `none`.
    link = tmp_path / "linked" / ".venv"
    link.parent.mkdir()
    link.symlink_to(Path(sys.prefix).resolve(), target_is_directory=True)
    python = link / "bin" / Path(sys.executable).name
    assert python.exists() and not str(python.resolve()).startswith(str(link))
    graded = grade(submission(tmp_path / "nb", reference_answer()), env, python=str(python))
    assert graded.report["sandbox"] == "bubblewrap", graded.report
    assert graded.score == 10, graded.report
