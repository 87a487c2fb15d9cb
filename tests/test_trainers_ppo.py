"""PPO-RLHF trainer on the smoke reviews policy: smoke run, it improves the RM reward, injection, the lab01 GAE hook."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from rlprep.algos.ppo import compute_gae_tokens, ppo_clip_loss
from rlprep.live import History
from rlprep.tinyworld import load_policy
from rlprep.trainers.ppo import PPOConfig, gae_tokens_from_rowwise, train_ppo
from rlprep.trainers.reward_model import load_reward_model

LOGGED = ("reward/rm", "reward/gold", "stats/kl_k1_seq", "stats/clipfrac_two_sided", "stats/entropy", "loss/policy", "loss/value",
          "stats/approx_kl")


def loop_compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """A plain-loop GAE (Schulman et al. 2015, Eq. 16), the test's oracle for the row-wise hook."""
    T = len(rewards)
    advantages = np.zeros(T)
    next_adv, next_value = 0.0, last_value
    for t in reversed(range(T)):
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * nonterminal - values[t]
        next_adv = delta + gamma * lam * nonterminal * next_adv
        advantages[t] = next_adv
        next_value = values[t]
    return advantages, advantages + values


@pytest.fixture(scope="module")
def setup():
    policy, tokenizer = load_policy("reviews", "smoke")
    rm = load_reward_model("smoke", policy=policy, tokenizer=tokenizer)
    return policy, tokenizer, rm


def _run(setup, **kw):
    policy, tokenizer, rm = setup
    functions = {k: kw.pop(k) for k in list(kw) if k in ("ppo_clip_loss", "compute_gae", "callbacks", "text_metrics")}
    cfg = PPOConfig.for_profile("smoke", **kw)
    return train_ppo(cfg, policy=copy.deepcopy(policy), tokenizer=tokenizer, reward_model=rm, live=False, **functions)


def test_config_validation():
    with pytest.raises(ValueError, match="minibatch_size"):
        PPOConfig(batch_size=16, minibatch_size=5)
    with pytest.raises(ValueError, match="gae_lambda"):
        PPOConfig(gae_lambda=1.5)


def test_rowwise_gae_hook_matches_the_token_reference():
    g = torch.Generator().manual_seed(0)
    rewards, values = torch.randn(4, 6, generator=g), torch.randn(4, 6, generator=g)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]).float()
    for lam in (0.0, 0.95, 1.0):
        adv, ret = gae_tokens_from_rowwise(loop_compute_gae)(rewards * mask, values * mask, mask, gamma=1.0, lam=lam)
        ref_adv, ref_ret = compute_gae_tokens(rewards * mask, values * mask, mask, gamma=1.0, lam=lam)
        torch.testing.assert_close(adv * mask, ref_adv * mask)
        torch.testing.assert_close(ret * mask, ref_ret * mask)


def test_the_training_loop_skips_the_references_host_side_checks(setup, monkeypatch):
    """The default ppo_clip_loss and value_loss run with validate=False inside the loop: no NaN check (a device sync
    per call on a GPU) is made from either of them during a training step."""
    import sys

    callers = []
    real_isnan = torch.isnan

    def spy(x):
        callers.append(sys._getframe(1).f_code.co_name)
        return real_isnan(x)

    monkeypatch.setattr(torch, "isnan", spy)
    _run(setup, steps=1)
    assert not {"ppo_clip_loss", "value_loss"} & set(callers), callers
    spy(torch.zeros(1))
    assert callers[-1] == "test_the_training_loop_skips_the_references_host_side_checks"  # the spy sees its caller


def test_smoke_run_logs_every_metric(setup):
    h = _run(setup, steps=2)
    for key in LOGGED:
        assert all(key in r for r in h[1:]), key
    assert h[1]["stats/kl_k1_seq"] == pytest.approx(0.0, abs=1e-5)  # first rollouts come from the reference itself
    assert {"gold_start", "gold_end", "gold_gain_se", "kl_end"} <= set(h.meta)


def test_ppo_raises_rm_reward_and_a_sign_flipped_clip_loss_lowers_it(setup):
    h = _run(setup, steps=8, lr=3e-4, kl_coef=0.01)
    good = h.meta["rm_end"] - h.meta["rm_start"]

    def flipped(*args, **kwargs):
        return -ppo_clip_loss(*args, **kwargs)

    h_bad = _run(setup, steps=8, lr=3e-4, kl_coef=0.01, ppo_clip_loss=flipped)
    bad = h_bad.meta["rm_end"] - h_bad.meta["rm_start"]
    assert good > 0.1 and bad < good - 0.2, (good, bad)


def test_lab01_rowwise_gae_trains_and_lambda_changes_the_advantages(setup):
    calls = []

    def counting_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
        calls.append(lam)
        return loop_compute_gae(rewards, values, dones, last_value, gamma, lam)

    h = _run(setup, steps=1, gae_lambda=0.0, compute_gae=counting_gae)
    assert calls and set(calls) == {0.0} and "loss/value" in h[-1]


def test_text_metrics_hook_sees_each_rounds_samples(setup):
    seen = []

    def lengths(prompts, texts):
        seen.append((list(prompts), list(texts)))
        return {"text/n": float(len(texts))}

    h = _run(setup, steps=2, text_metrics=lengths)
    assert len(seen) == 2 and all(len(p) == len(t) == 16 for p, t in seen)
    assert [r["text/n"] for r in h[1:]] == [16.0, 16.0]
    assert all(p.startswith("Review of the ") for p in seen[0][0])


def test_interrupt_saves_checkpoint(setup, tmp_path):
    def stop(step, metrics, history):
        raise KeyboardInterrupt

    h = _run(setup, steps=5, run_dir=str(tmp_path), callbacks=[stop])
    assert h.interrupted and len(h) == 2 and (tmp_path / "checkpoint.pt").exists()
    assert History.from_json(tmp_path / "history.json").interrupted


@pytest.mark.slow
def test_cpu_profile_gold_reward_beats_sft_by_five_standard_errors():
    """Slow (minutes, cpu profile): ``python -m rlprep.trainers.ppo --profile cpu``."""
    h = train_ppo(PPOConfig.for_profile("cpu"), live=False)
    assert h.meta["gold_gain_se"] >= 5, h.meta
