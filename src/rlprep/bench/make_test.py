"""The ``tests`` section: the ``make test`` wall time that the Makefile's test target leaves in
``build/make-test-seconds`` (read, never measured here: a benchmark must not run the suite)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path


def make_test_time(root: Path) -> dict:
    """``{"seconds", "written"}`` from ``build/make-test-seconds``, or a ``skipped`` note saying how to get it."""
    f = root / "build" / "make-test-seconds"
    if not f.exists():
        return {"skipped": "no build/make-test-seconds yet: run `make test` first (its target writes it)"}
    written = datetime.fromtimestamp(f.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return {"seconds": float(f.read_text().split()[0]), "written": written}
