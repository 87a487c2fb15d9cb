"""lab04's GPT-2 demo and W12's recorded sweep (rlprep.demos.dpo_beta_sweep): the learner's functions train, ln 2
is checked, seeds are summarised with t-intervals, "KL falls" is said only when the intervals separate, and
--record writes the figures with the command that remakes them."""

from __future__ import annotations

import json
import math

import pytest


def _run(betas_seen):
    from rlprep.algos.dpo import dpo_loss

    def spy(*args, beta=0.1):
        betas_seen.append(beta)
        return dpo_loss(*args, beta=beta)

    return spy


def test_beta_frontier_runs_every_seed_with_the_given_functions_and_records(monkeypatch, tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlprep.demos.dpo_beta_sweep import beta_frontier, plot_recorded, recorded_table

    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    monkeypatch.setenv("RLPREP_NO_BAR", "1")
    betas = []
    rows = beta_frontier(dpo_loss=_run(betas), profile="smoke", betas=(0.1, 1.0), seeds=(0, 1), steps=2,
                         eval_every=2, record=True, show=False, progress=False)
    assert [r["beta"] for r in rows] == [0.1, 1.0] and {0.1, 1.0} <= set(betas)
    assert all(r["n_seeds"] == 2 and len(r["kl_seeds"]) == 2 and r["interval"] == "seeds" for r in rows)
    assert rows[0]["kl_seeds"][0] != rows[0]["kl_seeds"][1]  # the seeds are different runs
    assert all(math.isfinite(r["kl"]) and r["kl_ci95"] > 0 and math.isfinite(r["gold"]) for r in rows)
    fig = plt.gcf()
    assert "smoke profile" in fig._suptitle.get_text() and "2 seeds" in fig.axes[0].get_title()
    for ax in fig.axes:
        assert ax.get_title() and ax.get_xlabel() and "(" in ax.get_ylabel()  # a unit
    plt.close("all")
    out = capsys.readouterr().out
    assert "too small to learn" in out and "ln 2 = 0.693147   ok" in out and "recorded" in out
    doc = json.loads((tmp_path / "lab04_beta_sweep.json").read_text())
    v = doc["values"]
    assert v["beta_1_kl"] == rows[1]["kl"] and v["beta_0p1_kl_seeds"] == rows[0]["kl_seeds"]
    assert v["steps"] == 2 and v["seeds"] == [0, 1] and len(v["kl_trend"]) == 1
    assert doc["command"] == "RLPREP_PROFILE=smoke python -m rlprep.demos.dpo_beta_sweep --record"
    table = recorded_table()
    assert ", ".join(f"{x:.2f}" for x in rows[1]["kl_seeds"]) in table and "rlprep record dpo_beta_sweep" in table
    assert "per seed" in table and f"± {rows[1]['kl_ci95']:<6.3f}" not in table  # no interval below zero for KL
    assert doc["date"] not in table  # logistics go to the Reproducibility note
    from rlprep.demos.dpo_beta_sweep import recorded_conditions
    assert doc["date"] in recorded_conditions() and "RLPREP_PROFILE=smoke rlprep record dpo_beta_sweep" in recorded_conditions()
    fig = plot_recorded()
    assert "2 seeds" in fig._suptitle.get_text()
    for ax in fig.axes:
        assert ax.get_title() and ax.get_xlabel() and "(" in ax.get_ylabel()
    plt.close("all")


def test_one_seed_keeps_the_evaluation_interval(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from rlprep.demos.dpo_beta_sweep import beta_frontier

    monkeypatch.setenv("RLPREP_NO_BAR", "1")
    (row,) = beta_frontier(profile="smoke", betas=(0.5,), steps=2, eval_every=2, show=False, progress=False)
    hist = row["history"]
    assert row["interval"] == "evaluation samples" and row["n_seeds"] == 1
    assert row["kl_ci95"] == pytest.approx(1.96 * hist.meta["kl_se"])


def test_a_wrong_loss_is_flagged_at_step_0(monkeypatch, capsys):
    import matplotlib

    matplotlib.use("Agg")
    from rlprep.demos.dpo_beta_sweep import beta_frontier

    monkeypatch.setenv("RLPREP_NO_BAR", "1")
    wrong = lambda pc, pr, rc, rr, beta=0.1: (pc - pr).mean() * 0 + 1.0  # noqa: E731 - a constant loss
    beta_frontier(dpo_loss=wrong, profile="smoke", betas=(), show=False, progress=False)
    assert "WRONG: at step 0 the loss must be ln 2" in capsys.readouterr().out


def test_mean_ci95_matches_a_hand_worked_interval():
    from rlprep.demos.dpo_beta_sweep import mean_ci95

    # 1, 2, 3: mean 2, sd 1, t_{0.975, 2} = 4.303 -> half-width 4.303 / sqrt(3)
    mean, half = mean_ci95([1.0, 2.0, 3.0])
    assert mean == 2.0 and half == pytest.approx(4.303 / math.sqrt(3))
    with pytest.raises(ValueError):
        mean_ci95([1.0])


def _row(beta, kl, half):
    return {"beta": beta, "kl": kl, "kl_ci95": half}


def test_kl_falls_only_where_the_intervals_separate():
    from rlprep.demos.dpo_beta_sweep import format_rows, kl_trend

    rows = [_row(0.01, 25.0, 1.0), _row(0.1, 1.34, 0.3), _row(0.5, 1.22, 0.3), _row(1.0, 2.5, 0.2)]
    assert kl_trend(rows) == ["falls", "overlaps", "rises"]
    full = [dict(r, n_seeds=3, interval="seeds", gold=0.0, gold_ci95=0.1, implicit_accuracy=0.9, gold_start=0.0)
            for r in rows]
    text = format_rows(full)
    assert "0.1→0.5 overlaps" in text and "do not show a monotone fall" in text
    assert "falls monotonically" in format_rows(full[:2])


def test_summarize_seeds_takes_the_mean_and_t_interval():
    from rlprep.demos.dpo_beta_sweep import summarize_seeds

    def run(kl, gold, acc):
        return {"beta": 0.1, "kl": kl, "kl_se": 0.1, "gold": gold, "gold_se": 0.1, "gold_start": -0.4,
                "reward/implicit_accuracy": acc, "interrupted": False, "history": None}

    (row,) = summarize_seeds({0: [run(1.0, 0.5, 0.9)], 1: [run(2.0, 0.4, 0.8)], 2: [run(3.0, 0.6, 1.0)]})
    assert row["kl"] == 2.0 and row["kl_ci95"] == pytest.approx(4.303 / math.sqrt(3))
    assert row["gold"] == pytest.approx(0.5) and row["implicit_accuracy"] == pytest.approx(0.9)
    assert row["kl_seeds"] == [1.0, 2.0, 3.0]
    # a β that one seed did not finish (stopped) is left out
    assert summarize_seeds({0: [run(1.0, 0.5, 0.9)], 1: []}) == []
