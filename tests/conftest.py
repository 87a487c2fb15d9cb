"""Shared test setup: every test runs offline, in the smoke profile, with its HOME-like dirs isolated."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config):
    os.environ.setdefault("RLPREP_PROFILE", "smoke")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("MPLBACKEND", "Agg")
    # A shared checkpoint cache for the whole run, so SFT warm starts are built once.
    os.environ.setdefault("RLPREP_CACHE", str(ROOT / "build" / "test-cache"))
    # Jupyter, IPython and matplotlib write into $HOME: keep them in build/.
    home = ROOT / "build" / "test-home"
    home.mkdir(parents=True, exist_ok=True)
    for var, sub in [("JUPYTER_CONFIG_DIR", "jupyter"), ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "mpl"),
                     ("JUPYTER_DATA_DIR", "jupyter-data"), ("JUPYTER_RUNTIME_DIR", "jupyter-runtime")]:
        os.environ.setdefault(var, str(home / sub))


@pytest.fixture
def rlprep_home(tmp_path, monkeypatch):
    """A private RLPREP_HOME for tests that write learner data (history, grades)."""
    monkeypatch.setenv("RLPREP_HOME", str(tmp_path / "home"))
    return tmp_path / "home"
