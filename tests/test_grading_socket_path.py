"""A grader whose temp folder is deep (pytest-xdist's, a class's nested scratch space) still grades: a kernel's
sockets live under it only while their path fits a Unix socket's 107 bytes, else under /tmp; neither: a clear error.
Before, nbgrader failed with a bare traceback and the advice to restore the notebook (CI, 2026-12-05)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rlprep.errors import RlprepError
from rlprep.grading import kernel

REPO = Path(__file__).resolve().parents[1]


def _deep(tmp_path: Path, length: int) -> Path:
    folder = tmp_path
    while len(str(folder)) < length:
        folder = folder / "deeper-folder"
    folder.mkdir(parents=True)
    return folder


def test_socket_base_keeps_a_temp_folder_that_fits(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert kernel.socket_base() == str(tmp_path)


def test_socket_base_moves_to_tmp_when_the_sockets_would_not_fit(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(_deep(tmp_path, 95)))
    assert kernel.socket_base() == "/tmp"


def test_socket_base_names_the_problem_and_the_fix_when_nothing_fits(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(_deep(tmp_path, 95)))
    monkeypatch.setattr(kernel.os, "access", lambda *a: False)
    with pytest.raises(RlprepError) as caught:
        kernel.socket_base()
    assert "too deep" in caught.value.problem and "TMPDIR" in caught.value.fix


def test_a_lab_grades_with_a_deep_temp_folder(tmp_path):
    deep = _deep(tmp_path, 95)
    env = {**os.environ, "TMPDIR": str(deep), "RLPREP_PROFILE": "smoke", "RLPREP_HOME": str(tmp_path / "home"),
           "OMP_NUM_THREADS": "1"}
    nb = REPO / "labs" / "lab01_gae" / "lab01_gae.ipynb"
    done = subprocess.run([sys.executable, "-m", "rlprep", "grade", "--json", str(nb)], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    assert "cells" in report, (report, done.stderr[-2000:])
    assert report["score"] == 0 and len(report["cells"]) > 3, report  # the released lab: graded, every answer missing
