"""Lab 1's demos, by name: the λ chain experiment and the PPO λ sweep (smoke)."""

from __future__ import annotations

import json
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from rlprep.algos.gae import compute_gae
from rlprep.demos.gae_chain import Chain, bias_variance, check_limits, plot_bias_variance


def test_lambda_trades_bias_for_variance_on_the_chain():
    chain = Chain(n_episodes=1000)
    bias0, var0, _ = bias_variance(compute_gae, chain, 0.0, 1.0)
    bias1, var1, _ = bias_variance(compute_gae, chain, 1.0, 1.0)
    assert bias0 > 10 * bias1 and var1 > 5 * var0
    perfect = bias_variance(compute_gae, chain, 0.0, 0.0)[0]
    assert perfect < bias0 / 10  # a perfect critic leaves λ = 0 (nearly) unbiased


def test_check_limits_tells_a_right_answer_from_a_wrong_one(capsys):
    chain = Chain(n_episodes=10)
    assert check_limits(compute_gae, chain) == (True, True)
    wrong = lambda r, v, d, last, gamma=0.99, lam=0.95: compute_gae(r, v, d, last, gamma, 1.0)  # noqa: E731
    assert check_limits(wrong, chain) == (False, True)
    assert "lam=0 equals the TD residual" in capsys.readouterr().out


def test_the_plot_has_titles_labels_and_units():
    fig = plot_bias_variance(compute_gae, Chain(n_episodes=50), lams=[0.0, 1.0])
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("λ") and "reward units" in ax.get_ylabel() and ax.get_title()
    assert fig.axes[1].get_xlabel() and fig.axes[1].get_title()
    plt.close(fig)


class _Run:
    """The slice of ``History`` the sweep reads: ``meta``, ``interrupted`` and ``series``."""

    interrupted = False

    def __init__(self, lam: float, seed: int, steps: int, gold_end: float):
        self.meta = {"gold_start": -0.2 - 0.01 * seed, "gold_end": gold_end, "gold_end_se": 0.1, "wall_s": 1.0 + seed,
                     "kl_end": 0.5, "config": {"seed": seed, "gae_lambda": lam}}
        self._steps = steps

    def series(self, key):
        return list(range(1, self._steps + 1)), [0.0] * self._steps


# Held-out gold at the end of each stand-in (λ, seed) run: a spread between seeds, so the intervals are not zero.
GOLD = {(0.0, 0): -0.10, (0.0, 1): 0.05, (0.0, 2): -0.02, (0.95, 0): 0.40, (0.95, 1): 0.31, (0.95, 2): 0.45,
        (1.0, 0): 0.38, (1.0, 1): 0.36, (1.0, 2): 0.52}


def t_interval(values):
    """Mean and 95% Student-t half-width for three values, by hand (t_{0.975, 2} = 4.303)."""
    mean = sum(values) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / 2)
    return mean, 4.303 * sd / math.sqrt(3)


@pytest.fixture
def stand_in_training(tmp_path, monkeypatch):
    """PPO training replaced by :class:`_Run` (values from ``GOLD``); returns the list of calls it saw."""
    from rlprep import tinyworld
    from rlprep.demos import ppo_lambda
    from rlprep.trainers import ppo, reward_model

    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    monkeypatch.setattr(plt, "show", lambda: None)
    monkeypatch.setattr(tinyworld, "load_policy", lambda task, profile: ("policy", "tokenizer"))
    monkeypatch.setattr(reward_model, "load_reward_model", lambda profile, policy, tokenizer: "rm")
    seen = []

    def train(config, *, policy, tokenizer, reward_model, compute_gae, live, label):
        seen.append((config.gae_lambda, config.seed, compute_gae, label))
        return _Run(config.gae_lambda, config.seed, config.steps, GOLD[config.gae_lambda, config.seed])

    monkeypatch.setattr(ppo, "train_ppo", train)
    monkeypatch.setattr(ppo_lambda.copy, "deepcopy", lambda x: x)
    return seen


def test_ppo_lambda_sweep_passes_the_function_and_each_lambda_and_records(tmp_path, stand_in_training, capsys):
    """The sweep's composition and record; its real PPO training runs in lab 1's own cells (test_labs_123)."""
    from rlprep.demos import ppo_lambda

    seen = stand_in_training
    runs = ppo_lambda.lambda_sweep(compute_gae, "smoke", lambdas=(0.0, 0.95), live=False, record=True)
    out = capsys.readouterr().out
    assert "too small and the runs too short to learn" in out and "λ = 0.95" in out
    assert [(lam, seed, fn) for lam, seed, fn, _ in seen] == [(0.0, 0, compute_gae), (0.95, 0, compute_gae)]
    assert [label for *_, label in seen] == ["ppo λ=0", "ppo λ=0.95"] and list(runs) == [0.0, 0.95]
    assert all(isinstance(h, _Run) for h in runs.values())  # one seed: {λ: History}, as the lab cell reads it
    doc = json.loads((tmp_path / "lab01_ppo_lambda.json").read_text())
    assert doc["profile"] == "smoke" and "--record" in doc["command"]
    values = doc["values"]
    assert values["steps"] == ppo_lambda.STEPS["smoke"] and values["lam095_gold_end"] == 0.40
    assert values["n_seeds"] == 1 and values["interval"] == "evaluation samples" and values["seeds"] == [0]
    assert values["lam095_gold_end_ci95"] == pytest.approx(1.96 * 0.1)  # one seed: the prompts' spread only
    assert values["gap_095_vs_0"] == pytest.approx(0.50)
    assert values["gap_095_vs_0_ci95"] == pytest.approx(1.96 * math.hypot(0.1, 0.1))


def test_ppo_lambda_sweep_over_seeds_records_means_intervals_and_paired_gaps(tmp_path, stand_in_training, capsys):
    from rlprep.demos import ppo_lambda

    seen = stand_in_training
    runs = ppo_lambda.lambda_sweep(compute_gae, "smoke", seeds=(0, 1, 2), live=False, record=True)
    assert sorted((lam, seed) for lam, seed, *_ in seen) == sorted(GOLD)  # every (λ, seed) once, with its seed
    assert all(fn is compute_gae for _, _, fn, _ in seen) and "ppo λ=0.95 seed=2" in [label for *_, label in seen]
    assert {lam: sorted(by_seed) for lam, by_seed in runs.items()} == {lam: [0, 1, 2] for lam in ppo_lambda.LAMBDAS}
    assert runs[0.95][1].meta["gold_end"] == GOLD[0.95, 1]
    values = json.loads((tmp_path / "lab01_ppo_lambda.json").read_text())["values"]
    assert values["n_seeds"] == 3 and values["seeds"] == [0, 1, 2] and values["interval"] == "seeds"
    assert values["gold_start"] == pytest.approx(-0.21)
    assert values["gold_start_seeds"] == pytest.approx([-0.2, -0.21, -0.22])
    for lam, key in ((0.0, "lam0"), (0.95, "lam095"), (1.0, "lam1")):
        ends = [GOLD[lam, s] for s in (0, 1, 2)]
        mean, half = t_interval(ends)
        assert values[f"{key}_gold_end_seeds"] == ends and values[f"{key}_n_seeds"] == 3
        assert values[f"{key}_gold_end"] == pytest.approx(mean)
        assert values[f"{key}_gold_end_ci95"] == pytest.approx(half)
        assert values[f"{key}_wall_s"] == pytest.approx(2.0)
    for name, a, b in (("gap_095_vs_0", 0.95, 0.0), ("gap_1_vs_095", 1.0, 0.95)):
        diffs = [GOLD[a, s] - GOLD[b, s] for s in (0, 1, 2)]
        mean, half = t_interval(diffs)  # paired: the interval of the per-seed differences
        assert values[f"{name}_seeds"] == pytest.approx(diffs)
        assert values[name] == pytest.approx(mean) and values[f"{name}_ci95"] == pytest.approx(half)
    assert values["gap_1_vs_095_reading"].startswith("the interval contains 0")
    out = capsys.readouterr().out
    assert "over 3 seeds (Student t)" in out
    assert ("λ = 0.95 − λ = 0, paired by seed: +0.410 ± 0.325 (the interval lies above 0: λ = 0.95 ends higher "
            "than λ = 0 at this budget, beyond the spread between seeds)") in out
    assert ("λ = 1 − λ = 0.95, paired by seed: +0.033 ± 0.117 (the interval contains 0: 3 seeds do not rank "
            "λ = 1 and λ = 0.95 at this budget)") in out
    fig = plt.gcf()
    labels = [line.get_label() for line in fig.axes[0].lines]
    assert labels == [f"λ = {lam:g} (mean of 3 seeds)" for lam in ppo_lambda.LAMBDAS]  # one mean line per λ
    plt.close("all")


@pytest.mark.parametrize("seeds", [(), (0, 0), tuple(range(12))])
def test_ppo_lambda_sweep_refuses_seeds_it_cannot_summarize(stand_in_training, seeds):
    from rlprep.demos import ppo_lambda
    from rlprep.errors import RlprepError

    with pytest.raises(RlprepError, match="different seeds"):
        ppo_lambda.lambda_sweep(compute_gae, "smoke", seeds=seeds, live=False, plot=False)
    assert stand_in_training == []  # refused before any training
