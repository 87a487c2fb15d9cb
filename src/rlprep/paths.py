"""Where rlprep keeps things: the checkpoint cache, the learner's data, the repository."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def cache_dir() -> Path:
    """Checkpoints and gradebooks: ``$RLPREP_CACHE``, else the user's cache dir."""
    path = Path(os.environ.get("RLPREP_CACHE") or platformdirs.user_cache_dir("rlprep")).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    """The learner's own data (mock-interview history, grades): ``$RLPREP_HOME``, else the user's data dir."""
    path = Path(os.environ.get("RLPREP_HOME") or platformdirs.user_data_dir("rlprep")).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def repo_root() -> Path | None:
    """The course checkout (holding notebooks/, labs/, solutions/), or None for a plain install."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "solutions").is_dir():
            return parent
    return None
