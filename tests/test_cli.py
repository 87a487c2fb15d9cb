"""The CLI's contract: help lists the commands, bad input exits 2 with a fix, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

from rlprep.cli import COMMANDS, main


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


def test_unknown_command_is_a_clear_error(capsys):
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert "unknown command" in err and "fix:" in err


def test_unknown_profile_names_the_fix():
    proc = subprocess.run([sys.executable, "-m", "rlprep", "profile", "--profile", "huge"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "unknown profile 'huge'" in proc.stderr
    assert "smoke, cpu, gpu" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_every_command_has_a_working_help():
    for name in COMMANDS:
        proc = subprocess.run([sys.executable, "-m", "rlprep", name, "--help"], capture_output=True, text=True)
        assert proc.returncode == 0, (name, proc.stderr)


def test_lab_dry_run_uses_learner_config(tmp_path, capsys, monkeypatch):
    import json

    from rlprep.paths import repo_root

    assert main(["lab", "--dry-run", "--no-browser"]) == 0
    out = capsys.readouterr().out
    assert "notebooks/00_start_here.ipynb" in out and "--no-browser" in out
    # headless, the printed URL is all a learner has: it must lead to the start page, not an empty launcher
    assert "--LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb" in out
    # JupyterLab's terminals find this interpreter's `rlprep` without an activated venv
    assert f"PATH={os.path.dirname(sys.executable)}{os.pathsep}" in out
    if os.name != "nt":  # and its terminals are not login shells, whose /etc/profile would reset PATH
        assert "--ServerApp.terminado_settings=shell_command=" in out
    page = json.loads((repo_root() / "build" / "jupyter-learner" / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"]["@jupyter/nbgrader:formgrader"] is True
    assert page["disabledExtensions"]["@jupyterlab/apputils-extension:announcements"] is True
