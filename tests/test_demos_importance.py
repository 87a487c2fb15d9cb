"""Importance-sampling demo (notebook 04): closed forms, unbiasedness, truncation bias, ESS, mismatch sampler."""

import math

import pytest
import torch

from rlprep.demos.importance import (effective_sample_size, estimator_errors, gaussian_samples,
                                     gaussian_weight_moments, mismatch_logprobs)


def test_weight_second_moment_matches_closed_form():
    s = gaussian_samples(0.8, n=200_000, trials=1, seed=0)
    w = torch.exp(s["logp_target"] - s["logp_behavior"])[0]
    m = gaussian_weight_moments(0.8)
    assert float(w.mean()) == pytest.approx(1.0, abs=0.01)
    assert float((w ** 2).mean()) == pytest.approx(m["second_moment"], rel=0.03)
    assert m["second_moment"] == pytest.approx(math.exp(2 * m["kl"]))


def test_ordinary_unbiased_truncated_biased():
    err = estimator_errors(0.7, n=200, trials=300, clip=1.0, seed=1)
    assert abs(err["ordinary"]["bias"]) < 3 * err["ordinary"]["std"] / math.sqrt(300)
    assert err["truncated"]["bias"] < -0.1  # capping weights under-counts what pi prefers
    assert err["truncated"]["std"] < err["ordinary"]["std"]
    assert err["self_normalized"]["std"] < err["ordinary"]["std"]


def test_ess():
    assert effective_sample_size(torch.ones(10)) == pytest.approx(10)
    assert effective_sample_size(torch.tensor([1.0, 0.0, 0.0])) == pytest.approx(1)
    with pytest.raises(ValueError):
        effective_sample_size(torch.tensor([-1.0]))


def test_mismatch_noise_zero_gives_ratio_one():
    m = mismatch_logprobs(4, 8, noise=0.0)
    assert torch.allclose(m["logp_train"], m["logp_rollout"])
    m = mismatch_logprobs(4, 8, noise=0.1)
    assert m["logp_train"].shape == (4, 8) and not torch.allclose(m["logp_train"], m["logp_rollout"])


def test_variance_vs_kl_follows_the_closed_form_with_the_given_weights(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlprep.algos.importance_sampling import importance_weights
    from rlprep.demos.importance import variance_vs_kl

    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    out = variance_vs_kl(importance_weights, n_samples=50_000)
    kl, var = out["gauss_kl"], out["gauss_var"]
    assert var[0] == pytest.approx(0.0, abs=1e-12)
    assert var[2] == pytest.approx(math.expm1(2 * kl[2]), rel=0.1)  # KL 0.125: the sample variance is reliable
    assert all(b > a for a, b in zip(out["seq_kl"], out["seq_kl"][1:]))
    ax = plt.gcf().axes[0]
    assert "nats" in ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    plt.close("all")
    ones = variance_vs_kl(lambda lt, lb, clip=None: torch.ones_like(lt), n_samples=100, show=False)
    assert max(ones["gauss_var"] + ones["seq_var"]) == 0.0  # it uses the function it is given


def test_truncation_tradeoff_trades_bias_for_variance(capsys):
    from rlprep.algos.importance_sampling import is_estimate
    from rlprep.demos.importance import truncation_tradeoff

    out = truncation_tradeoff(is_estimate, n_batches=200, show=False)
    assert out["clip"][-1] is None and out["bias2"][0] > 10 * out["bias2"][-1] and out["var"][-1] > 10 * out["var"][0]
    assert capsys.readouterr().out == ""  # show=False draws and prints nothing
