"""Fixtures for the attack tests: a private gradebook cache and learner home per test session."""

from __future__ import annotations

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
