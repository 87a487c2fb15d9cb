"""DPO trainer on the smoke reviews policy: ln 2 at step 0, it learns, injection, no redundant reference passes."""

from __future__ import annotations

import copy
import math

import pytest

from rlprep.algos.dpo import dpo_loss, sequence_logprobs
from rlprep.live import History
from rlprep.tinyworld import load_policy
from rlprep.trainers.dpo import DPOConfig, beta_sweep, train_dpo

LOGGED = ("loss/dpo", "reward/implicit_accuracy", "logps/chosen", "logps/rejected")


@pytest.fixture(scope="module")
def sft():
    return load_policy("reviews", "smoke")


def _fresh(sft):
    policy, tokenizer = sft
    return copy.deepcopy(policy), tokenizer


def _small(**kw) -> DPOConfig:
    base = dict(steps=12, batch_size=16, n_train_pairs=48, lr=1e-3, eval_every=12, eval_prompts=16)
    base.update(kw)
    return DPOConfig.for_profile("smoke", **base)


def test_config_validation():
    with pytest.raises(ValueError, match="beta must be > 0"):
        DPOConfig(beta=0)
    with pytest.raises(ValueError, match="n_train_pairs"):
        DPOConfig(n_train_pairs=4, batch_size=8)


def test_loss_starts_at_ln2_then_implicit_accuracy_rises_and_ref_runs_once_per_pair(sft):
    policy, tokenizer = _fresh(sft)
    h = train_dpo(_small(), policy=policy, tokenizer=tokenizer, live=False)
    rows = h[1:]
    for key in LOGGED:
        assert all(key in r for r in rows), key
    assert rows[0]["loss/dpo"] == pytest.approx(math.log(2), abs=1e-5)  # policy == reference at step 0
    assert "stats/kl_k1_seq" in h[0] and "reward/gold" in h[-1] and "stats/kl_k1_seq" in h[-1]
    assert rows[0]["reward/implicit_accuracy"] == 0.0  # implicit rewards are all 0 before the first update
    last_two_epochs = [r["reward/implicit_accuracy"] for r in rows[-6:]]  # each pair seen in 3 earlier steps
    assert sum(last_two_epochs) / 6 > 0.7, last_two_epochs
    assert sum(r["loss/dpo"] for r in rows[-3:]) / 3 < math.log(2) - 0.2
    assert sum(r["reward/implicit_margin"] for r in rows[-6:]) / 6 > 0.5
    assert h.meta["kl"] > 0  # the policy moved away from the reference
    # 12 steps x 16 pairs = 4 epochs over 48 pairs, but each pair's two reference rows were scored once
    assert h.meta["ref_forwards"] == 2 * 48


def test_a_sign_flipped_dpo_loss_drives_implicit_accuracy_down(sft):
    policy, tokenizer = _fresh(sft)

    def flipped(*args, **kwargs):
        return -dpo_loss(*args, **kwargs)

    h = train_dpo(_small(), policy=policy, tokenizer=tokenizer, dpo_loss=flipped, live=False)
    margins = [r["reward/implicit_margin"] for r in h[-6:]]
    assert sum(margins) / 6 < 0, margins  # the implicit reward now prefers the rejected completions
    assert h[-1]["loss/dpo"] < -1.0  # -L is unbounded below: the run chases it and the policy degenerates


def test_injected_sequence_logprobs_is_used(sft):
    policy, tokenizer = _fresh(sft)
    calls = []

    def counting(logits, labels, mask):
        calls.append(tuple(logits.shape))
        return sequence_logprobs(logits, labels, mask)

    train_dpo(_small(steps=2, eval_every=100), policy=policy, tokenizer=tokenizer, sequence_logprobs=counting,
              live=False)
    # each step sees 16 new pairs: one reference call and one policy call, each on 2 x 16 rows
    assert len(calls) == 4 and all(len(s) == 3 and s[0] == 32 for s in calls)


def test_interrupt_saves_checkpoint_and_history(sft, tmp_path):
    policy, tokenizer = _fresh(sft)

    def stop(step, metrics, history):
        if step == 2:
            raise KeyboardInterrupt

    h = train_dpo(_small(steps=30, run_dir=str(tmp_path)), policy=policy, tokenizer=tokenizer, callbacks=[stop],
                  live=False)
    assert h.interrupted and (tmp_path / "checkpoint.pt").exists()
    assert History.from_json(tmp_path / "history.json").interrupted


@pytest.mark.slow
def test_beta_sweep_kl_falls_as_beta_grows():
    """Slow (cpu profile, ~minutes): ``python -m rlprep.trainers.dpo --profile cpu --sweep`` prints the same."""
    rows = beta_sweep(config=DPOConfig.for_profile("cpu"))
    kls = [r["kl"] for r in rows]
    assert all(a >= b for a, b in zip(kls, kls[1:])), kls
