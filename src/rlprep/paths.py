"""Where rlprep keeps things: the checkpoint cache, the learner's data, the repository."""

from __future__ import annotations

import os
from pathlib import Path

from rlprep.errors import RlprepError


def _user_dir(kind: str) -> str:
    """The user's cache or data dir from platformdirs; without it (a bare GPU image), the XDG defaults that
    platformdirs gives on Linux."""
    try:
        import platformdirs
    except ImportError:
        sub = ".cache" if kind == "cache" else ".local/share"
        return str(Path.home() / sub / "rlprep")
    return platformdirs.user_cache_dir("rlprep") if kind == "cache" else platformdirs.user_data_dir("rlprep")


def ensure_dir(path: Path, variable: str) -> Path:
    """``path`` as an existing folder, created if needed; a file in the way is an error that names ``variable``."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in [path, *path.parents] if p.exists() and not p.is_dir()), path)
        where = "is a file" if blocker == path else f"lies under {blocker}, which is a file"
        raise RlprepError(f"{path} ({variable}) {where}, not a folder",
                          f"point {variable} at a folder (export {variable}=$HOME/rlprep-data), or move {blocker} "
                          "aside") from None
    except PermissionError as err:
        raise RlprepError(f"cannot create {path} ({variable}): {err.strerror}",
                          f"point {variable} at a folder you can write to") from None
    return path


def cache_dir() -> Path:
    """Checkpoints and gradebooks: ``$RLPREP_CACHE``, else the user's cache dir."""
    path = Path(os.environ.get("RLPREP_CACHE") or _user_dir("cache")).expanduser().resolve()
    return ensure_dir(path, "RLPREP_CACHE")


def data_dir() -> Path:
    """The learner's own data (mock-interview history, grades): ``$RLPREP_HOME``, else the user's data dir."""
    path = Path(os.environ.get("RLPREP_HOME") or _user_dir("data")).expanduser().resolve()
    return ensure_dir(path, "RLPREP_HOME")


def repo_root() -> Path | None:
    """The course checkout (holding notebooks/, labs/, solutions/), or None for a plain install."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "solutions").is_dir():
            return parent
    return None


def course_root(root=None) -> Path:
    """``root`` (default: :func:`repo_root`) when it holds ``solutions/``; else an error naming the fix."""
    root = Path(root) if root else repo_root()
    if root is None or not (root / "solutions").is_dir():
        raise RlprepError("no solutions/ folder found: rlprep release works on a course checkout",
                          "run it from the rlprep repository (the folder holding solutions/ and labs/)")
    return root
