"""Attack: a hostile submission opened in the formgrader that ``rlprep lab --instructor`` starts (issue #33).

The pages that show a submission are sanitised by the course's grading config (``autograder/nbgrader_config.py``:
``apply_grading_config`` configures formgrader's HTMLExporter). ``rlprep lab --instructor`` serves the repository
root, which holds no ``nbgrader_config.py``, so its formgrader read none of that: the learner's markdown and outputs
reached the instructor's page unsanitised. Its formgrader must load the course's config.
"""

from __future__ import annotations

import argparse
import shutil

import pytest
from harness import SRC

from rlprep import lab_cli

ROOT = SRC.parent


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A course checkout as ``rlprep lab`` sees it: the start page and ``autograder/nbgrader_config.py``."""
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    (root / lab_cli.START_PAGE).write_text("{}")
    (root / "autograder").mkdir()
    shutil.copy(ROOT / "autograder" / "nbgrader_config.py", root / "autograder" / "nbgrader_config.py")
    monkeypatch.setattr(lab_cli, "repo_root", lambda: root)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "user-config"))  # the instructor's own, empty
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    return root


def start_lab(instructor: bool, capsys) -> str:
    """``rlprep lab [--instructor] --dry-run``; returns the JUPYTER_CONFIG_PATH JupyterLab would get."""
    args = argparse.Namespace(port=8888, no_browser=True, instructor=instructor, dry_run=True)
    assert lab_cli.run(args) == 0
    out = capsys.readouterr().out
    return next(line for line in out.splitlines() if line.startswith("JUPYTER_CONFIG_PATH=")).split("=", 1)[1]


def formgrader_exporter(root, config_path: str, monkeypatch):
    """The HTMLExporter formgrader builds for a submission page, in a server started as ``rlprep lab`` starts it
    (working folder: the repository root; JUPYTER_CONFIG_PATH as it sets it)."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension

    monkeypatch.setenv("JUPYTER_CONFIG_PATH", config_path)
    monkeypatch.chdir(root)
    extension = FormgradeExtension()
    extension.root_dir = str(root)
    extension.initialize([])
    return extension, HTMLExporter(config=extension.config)


def test_the_instructors_formgrader_loads_the_course_grading_config(checkout, capsys, monkeypatch):
    from rlprep.grading.sanitize import SanitizeSubmission

    extension, exporter = formgrader_exporter(checkout, start_lab(True, capsys), monkeypatch)
    assert any(isinstance(p, SanitizeSubmission) for p in exporter._preprocessors), exporter._preprocessors
    assert exporter.sanitize_html is True
    assert extension.coursedir.root == str(checkout / "autograder")  # the course formgrader manages


def test_learner_mode_leaves_the_course_config_out_again(checkout, capsys, monkeypatch):
    start_lab(True, capsys)
    config_path = start_lab(False, capsys)
    assert not (checkout / "build" / "jupyter-learner" / "nbgrader_config.py").exists()
    assert "jupyter-learner" in config_path


def test_a_checkout_without_the_course_config_is_refused_with_the_fix(checkout, capsys):
    from rlprep.errors import RlprepError

    (checkout / "autograder" / "nbgrader_config.py").unlink()
    with pytest.raises(RlprepError, match="autograder/nbgrader_config.py"):
        start_lab(True, capsys)
