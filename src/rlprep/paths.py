"""Where rlprep keeps things: the checkpoint cache, the learner's data, the repository."""

from __future__ import annotations

import os
from pathlib import Path


def _user_dir(kind: str) -> str:
    """The user's cache or data dir from platformdirs; without it (a bare GPU image), the XDG defaults that
    platformdirs gives on Linux."""
    try:
        import platformdirs
    except ImportError:
        sub = ".cache" if kind == "cache" else ".local/share"
        return str(Path.home() / sub / "rlprep")
    return platformdirs.user_cache_dir("rlprep") if kind == "cache" else platformdirs.user_data_dir("rlprep")


def cache_dir() -> Path:
    """Checkpoints and gradebooks: ``$RLPREP_CACHE``, else the user's cache dir."""
    path = Path(os.environ.get("RLPREP_CACHE") or _user_dir("cache")).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    """The learner's own data (mock-interview history, grades): ``$RLPREP_HOME``, else the user's data dir."""
    path = Path(os.environ.get("RLPREP_HOME") or _user_dir("data")).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def repo_root() -> Path | None:
    """The course checkout (holding notebooks/, labs/, solutions/), or None for a plain install."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "solutions").is_dir():
            return parent
    return None
