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
    assert "error: " in err and problem in err, err
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


def test_ctrl_c_stops_a_real_train_run_with_130_and_keeps_its_files(tmp_path):
    """A real `rlprep train` process gets SIGINT mid-run: it saves the run, prints its summary and exits 130,
    the same status as every other rlprep command (rlprep mock included)."""
    import json
    import os
    import signal
    import threading
    import time

    run_dir = tmp_path / "run"
    env = dict(os.environ)
    env.pop("RLPREP_NO_BAR", None)  # the test waits for the progress bar
    proc = subprocess.Popen([sys.executable, "-m", "rlprep", "train", "grpo", "--profile", "smoke", "--steps", "100000",
                             "--set", "eval_every=100000", "--run-dir", str(run_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(iter(lambda: proc.stderr.read(1), "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 600  # the smoke warm start may have to be built first
    while "grpo:" not in "".join(err) or "2/100000" not in "".join(err):  # two GRPO steps done
        assert proc.poll() is None and time.monotonic() < deadline, "".join(err)[-2000:]
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=300)
    reader.join(timeout=30)
    out, stderr = proc.stdout.read(), "".join(err)
    assert proc.returncode == 130, (proc.returncode, out, stderr[-2000:])
    assert "Traceback" not in stderr and "interrupted: nothing already saved was lost" in stderr
    assert f"run files: {run_dir}/" in out and "(interrupted)" in out and "interrupted after" in out
    saved = json.loads((run_dir / "history.json").read_text())
    assert saved["interrupted"] is True and len(saved["rows"]) >= 3 and (run_dir / "checkpoint.pt").is_file()


def test_every_run_gets_a_new_folder_and_a_used_one_is_refused(tmp_path, monkeypatch, capsys, no_training):
    monkeypatch.setenv("RLPREP_HOME", str(tmp_path / "home"))
    first, second = train_cli.run_folder("grpo", None), train_cli.run_folder("grpo", None)
    assert first != second and first.parent == second.parent == tmp_path / "home" / "runs"
    assert first.name.startswith("grpo-") and first.is_dir() and second.is_dir()
    (first / "history.json").write_text("{}")
    assert main(["train", "grpo", "--run-dir", str(first)]) == 2
    err = capsys.readouterr().err
    assert f"error: --run-dir {first} already holds a run (history.json)" in err
    assert f"fix: pass a new folder (e.g. --run-dir {first}-2)" in err and "Traceback" not in err
    assert train_cli.run_folder("grpo", str(tmp_path / "fresh")) == tmp_path / "fresh"


def test_smoke_grpo_says_it_is_too_small_to_learn_and_where_its_files_are(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert main(["train", "grpo", "--profile", "smoke", "--steps", "2", "--run-dir", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"run files: {run_dir}/{{checkpoint.pt,history.json,plot.png}}")
    import math
    import re

    summary = next(line for line in out.splitlines() if line.startswith("profile=smoke steps=2 accuracy "))
    start, start_se, end, end_se = map(float, re.search(r"accuracy ([\d.]+) ± ([\d.]+) -> ([\d.]+) ± ([\d.]+)",
                                                        summary).groups())
    assert ("within noise" in summary) == (abs(end - start) <= 2 * math.hypot(start_se, end_se) + 1e-3), summary
    note = next(line for line in out.splitlines() if line.startswith("note: smoke checks that the pieces run"))
    assert "0.25M-parameter GPT-2, 2 steps of 64 completions" in note and "Too small and too short to learn" in note
    assert "run --profile cpu (400 steps of 128 completions" in note
    assert {p.name for p in run_dir.iterdir()} == {"checkpoint.pt", "history.json", "plot.png"}
