"""``rlprep train``: every bad option is an error:/fix: with exit 2, found before any training starts; help names
the trainer's own usage and explains every option (issue #18, items 10 and 14)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rlprep.cli import main
from rlprep.trainers import cli as train_cli

TRAIN_FUNCTIONS = {"grpo": ("rlprep.trainers.grpo", "train_grpo"), "dpo": ("rlprep.trainers.dpo", "train_dpo"),
                   "ppo": ("rlprep.trainers.ppo", "train_ppo"),
                   "reward_model": ("rlprep.trainers.reward_model", "train_reward_model")}


@pytest.fixture
def no_training(monkeypatch):
    """Any call into a trainer fails the test: a bad option must be rejected before training starts."""
    import importlib

    for module, name in TRAIN_FUNCTIONS.values():
        def started(*args, _name=name, **kwargs):
            raise AssertionError(f"{_name} started before the bad option was rejected")

        monkeypatch.setattr(importlib.import_module(module), name, started)


@pytest.mark.parametrize("argv, problem", [
    (["grpo", "--steps", "-1"], "steps must be >= 0"),
    (["grpo", "--set", "nonsense=1"], "GRPOConfig has no field 'nonsense'"),
    (["grpo", "--set", "lr=abc"], "lr must be float"),
    (["grpo", "--set", "lr"], "expected KEY=VALUE"),
    (["grpo", "--steps", "many"], "invalid int value"),
    (["grpo", "--frobnicate"], "unrecognized arguments"),
    (["dpo", "--beta", "-1"], "beta must be > 0"),
    (["ppo", "--kl-coef", "-1"], "kl_coef must be >= 0"),
    (["reward_model", "--best-of-n", "-3"], "--best-of-n must be >= 0"),
    (["reward_model", "--set", "steps=-2"], "steps must be >= 0"),
])
def test_bad_option_is_an_error_with_a_fix_before_training(argv, problem, capsys, no_training):
    assert main(["train", *argv]) == 2
    err = capsys.readouterr().err
    assert f"error: " in err and problem in err, err
    assert "fix: " in err and "Traceback" not in err


def test_every_trainer_option_has_help(monkeypatch):
    """Capture each trainer's parser as it is about to parse, and check every option it defines is explained."""
    seen = {}

    class Captured(Exception):
        pass

    def capture(self, argv=None, namespace=None):
        seen[self.prog] = self
        raise Captured

    monkeypatch.setattr(train_cli.TrainerArgumentParser, "parse_args", capture)
    for name, trainer_main in train_cli.MAINS.items():
        with pytest.raises(Captured):
            trainer_main([], f"rlprep train {name}")
    assert set(seen) == {f"rlprep train {name}" for name in train_cli.TRAINERS}
    for prog, parser in seen.items():
        for action in parser._actions:
            assert action.help and action.help.strip(), (prog, action.option_strings)


def test_help_names_the_trainer_and_the_real_entry_point_reports_errors_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "rlprep", "train", "grpo", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: rlprep train grpo "), proc.stdout[:200]
    assert "--set KEY=VALUE" in proc.stdout and "--sft-curve" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "rlprep.trainers.dpo", "--beta", "-1"], capture_output=True,
                          text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "error: DPOConfig: beta must be > 0" in proc.stderr and "fix: " in proc.stderr


def test_set_is_typed_from_the_config_fields_of_every_trainer():
    from rlprep.errors import RlprepError
    from rlprep.trainers.dpo import DPOConfig
    from rlprep.trainers.ppo import PPOConfig

    assert train_cli.parse_overrides(DPOConfig, ["beta=0.2", "steps=3"]) == {"beta": 0.2, "steps": 3}
    assert train_cli.parse_overrides(PPOConfig, ["kl_coef=0"]) == {"kl_coef": 0.0}
    with pytest.raises(RlprepError, match="PPOConfig has no field 'lr_critic_typo'"):
        train_cli.parse_overrides(PPOConfig, ["lr_critic_typo=1"])
