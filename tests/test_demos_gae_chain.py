"""Lab 1's demos, by name: the λ chain experiment and the PPO λ sweep (smoke)."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from rlprep.algos.gae import compute_gae  # noqa: E402
from rlprep.demos.gae_chain import Chain, bias_variance, check_limits, plot_bias_variance  # noqa: E402


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


@pytest.mark.timeout(600)
class _Run:
    """The slice of ``History`` the sweep reads: ``meta``, ``interrupted`` and ``series``."""

    interrupted = False

    def __init__(self, lam: float, steps: int):
        self.meta = {"gold_start": -0.2, "gold_end": lam, "gold_end_se": 0.1, "wall_s": 1.0, "kl_end": 0.5}
        self._steps = steps

    def series(self, key):
        return list(range(1, self._steps + 1)), [0.0] * self._steps


def test_ppo_lambda_sweep_passes_the_function_and_each_lambda_and_records(tmp_path, monkeypatch, capsys):
    """The sweep's composition and record; its real PPO training runs in lab 1's own cells (test_labs_123)."""
    from rlprep import tinyworld
    from rlprep.demos import ppo_lambda
    from rlprep.trainers import ppo, reward_model

    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    monkeypatch.setattr(plt, "show", lambda: None)
    monkeypatch.setattr(tinyworld, "load_policy", lambda task, profile: ("policy", "tokenizer"))
    monkeypatch.setattr(reward_model, "load_reward_model", lambda profile, policy, tokenizer: "rm")
    seen = []

    def train(config, *, policy, tokenizer, reward_model, compute_gae, live, label):
        seen.append((config.gae_lambda, compute_gae, label))
        return _Run(config.gae_lambda, config.steps)

    monkeypatch.setattr(ppo, "train_ppo", train)
    monkeypatch.setattr(ppo_lambda.copy, "deepcopy", lambda x: x)
    runs = ppo_lambda.lambda_sweep(compute_gae, "smoke", lambdas=(0.0, 0.95), live=False, record=True)
    out = capsys.readouterr().out
    assert "too small and the runs too short to learn" in out and "λ = 0.95" in out
    assert [(lam, fn) for lam, fn, _ in seen] == [(0.0, compute_gae), (0.95, compute_gae)]
    assert [label for *_, label in seen] == ["ppo λ=0", "ppo λ=0.95"] and list(runs) == [0.0, 0.95]
    doc = json.loads((tmp_path / "lab01_ppo_lambda.json").read_text())
    assert doc["profile"] == "smoke" and "--record" in doc["command"]
    values = doc["values"]
    assert values["steps"] == ppo_lambda.STEPS["smoke"] and values["lam095_gold_end"] == 0.95
    assert abs(values["gap_095_vs_0_se"] - 0.95 / (2 ** 0.5 * 0.1)) < 1e-9
