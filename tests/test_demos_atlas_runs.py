"""Notebook 13's side-by-side runs (rlprep.demos.atlas_runs): every PG_LOSSES variant trains the same warm start with
the same budget and seeds, the summary is the mean and spread over seeds, the plot is labelled, and --record writes
records/atlas_runs.json with the command that remakes it."""

from __future__ import annotations

import json
import math
import statistics

import pytest

from rlprep.algos.pg_losses import PG_LOSSES
from rlprep.live import History


def _history(accuracy_end: float, kl: list[float], seed: int) -> History:
    rows = [{"step": s, "stats/kl_k3_token": k, "stats/entropy": 1.0, "stats/completion_len": 4.0 + seed}
            for s, k in enumerate(kl, start=1)]
    config = {"steps": len(kl), "prompts_per_step": 2, "group_size": 4, "num_iterations": 2, "eval_size": 20}
    return History(rows, meta={"accuracy_start": 0.5, "accuracy_end": accuracy_end, "config": config})


def test_summary_is_the_mean_and_spread_over_seeds_worked_by_hand():
    from rlprep.demos.atlas_runs import summarise

    # 8 steps: the end state is the mean of the last quarter (steps 7 and 8)
    runs = {"grpo": [_history(0.6, [0, 0, 0, 0, 0, 0, 1.0, 3.0], 0), _history(0.8, [9] * 6 + [3.0, 5.0], 1)]}
    values = summarise(runs)
    assert values["grpo/accuracy_mean"] == pytest.approx(0.7)
    assert values["grpo/accuracy_spread"] == pytest.approx(statistics.stdev([0.6, 0.8]))  # 0.1414...
    assert values["grpo/kl_mean"] == pytest.approx(3.0)  # (2.0 + 4.0) / 2
    assert values["grpo/kl_spread"] == pytest.approx(math.sqrt(2.0))
    assert values["grpo/length_mean"] == pytest.approx(4.5) and values["grpo/entropy_spread"] == 0.0
    assert values["seeds"] == 2 and values["steps"] == 8 and values["completions_per_step"] == 8


def test_unknown_variant_is_refused():
    from rlprep.demos.atlas_runs import side_by_side

    with pytest.raises(ValueError, match="choose from"):
        side_by_side("smoke", variants=("grpo", "ppo2"))


def test_every_variant_trains_by_name_with_the_same_budget_and_is_recorded(monkeypatch, tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlprep.demos import atlas_runs
    from rlprep.trainers import grpo as grpo_trainer

    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    monkeypatch.setenv("RLPREP_NO_BAR", "1")
    configs = []
    real = grpo_trainer.train_grpo

    def spy(config, **kwargs):
        configs.append(config)
        return real(config, **kwargs)

    monkeypatch.setattr(atlas_runs, "train_grpo", spy)
    assert atlas_runs.main(["--record", "--profile", "smoke"]) == 0
    assert [c.loss_type for c in configs] == list(PG_LOSSES)
    shared = {(c.steps, c.prompts_per_step, c.group_size, c.seed, c.num_iterations, c.lr) for c in configs}
    assert len(shared) == 1 and configs[0].num_iterations == 2  # the same budget; mu = 2 so the clips act
    doc = json.loads((tmp_path / "atlas_runs.json").read_text())
    assert doc["command"] == "RLPREP_PROFILE=smoke python -m rlprep.demos.atlas_runs --record"
    values = doc["values"]
    for name in PG_LOSSES:
        for quantity in ("accuracy", "kl", "entropy", "length"):
            assert math.isfinite(values[f"{name}/{quantity}_mean"]), (name, quantity)
    # the variants really differ: not one loss run eight times
    assert len({round(values[f"{name}/kl_mean"], 9) for name in PG_LOSSES}) > 1
    assert values["seeds"] == 1 and values["steps"] == configs[0].steps and values["wall_s"] > 0

    runs = atlas_runs.side_by_side("smoke", variants=("grpo", "cispo"), seeds=(0, 1))
    assert [h.meta["config"]["seed"] for h in runs["cispo"]] == [0, 1]
    fig = atlas_runs.plot_runs(runs, "smoke", show=False)
    assert "smoke profile" in fig._suptitle.get_text() and "2 seeds" in fig._suptitle.get_text()
    for ax in fig.axes:
        assert ax.get_title() and ax.get_xlabel() and "(" in ax.get_ylabel()  # a unit
        assert [line.get_label() for line in ax.get_lines()] == ["grpo", "cispo"]
    plt.close("all")


def test_a_bad_profile_is_an_error_fix_message(monkeypatch, tmp_path, capsys):
    from rlprep.demos import atlas_runs

    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    assert atlas_runs.main(["--record", "--profile", "laptop"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "fix:" in err and not (tmp_path / "atlas_runs.json").exists()
