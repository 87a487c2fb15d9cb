from __future__ import annotations

import pytest

from rlprep.errors import RlprepError
from rlprep.profiles import PROFILES, get_profile


def test_env_var_overrides(monkeypatch):
    monkeypatch.setenv("RLPREP_PROFILE", "cpu")
    assert get_profile().name == "cpu"
    assert get_profile("smoke").name == "smoke"


def test_unknown_profile(monkeypatch):
    monkeypatch.setenv("RLPREP_PROFILE", "tiny")
    with pytest.raises(RlprepError, match="unknown profile"):
        get_profile()


def test_heads_divide_hidden_size():
    for profile in PROFILES.values():
        assert profile.n_embd % profile.n_head == 0, profile.name
