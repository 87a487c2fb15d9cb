"""Fixtures for the attack tests: a private gradebook cache and learner home per test session."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    """One gradebook cache for the attacks that do not touch it (built by the first grade, then reused)."""
    return tmp_path_factory.mktemp("attack-cache")


@pytest.fixture
def env(shared_cache, tmp_path):
    """The grader's environment: private RLPREP_CACHE (shared) and RLPREP_HOME (per test)."""
    home = tmp_path / "learner-home"
    home.mkdir()
    return {"RLPREP_CACHE": str(shared_cache), "RLPREP_HOME": str(home)}


@pytest.fixture
def sandboxed():
    """Skip an attack that only the sandbox stops where bubblewrap cannot run, except in CI, which must have it
    (`make test` installs bubblewrap when it runs as root)."""
    from rlprep.grading.sandbox import probe

    kind = probe()
    if kind != "bubblewrap":
        if os.environ.get("CI"):
            pytest.fail(f"CI must grade in the sandbox, but {kind}")
        pytest.skip(f"this attack is stopped by the sandbox, and here {kind}")
    return kind
