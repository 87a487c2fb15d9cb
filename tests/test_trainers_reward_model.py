"""Reward model on the smoke reviews policy: padding invariance, it learns, injection is wired, best-of-N invariants."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from rlprep.algos.reward_model import bradley_terry_loss
from rlprep.tinyworld import get_task, load_policy
from rlprep.trainers.reward_model import (RewardModel, RewardModelConfig, best_of_n, load_reward_model,
                                         train_reward_model)


@pytest.fixture(scope="module")
def sft():
    return load_policy("reviews", "smoke")


@pytest.fixture(scope="module")
def trained(sft):
    """The smoke reward model, trained once per test cache and shared with the PPO tests."""
    policy, tokenizer = sft
    return load_reward_model("smoke", policy=policy, tokenizer=tokenizer)


def test_config_validation():
    with pytest.raises(ValueError, match="n_train_pairs"):
        RewardModelConfig(n_train_pairs=8, batch_size=32)
    with pytest.raises(ValueError, match="n_eval_pairs"):
        RewardModelConfig(n_eval_pairs=1)


def test_score_reads_the_last_real_token_whatever_the_padding(sft):
    policy, tokenizer = sft
    rm = RewardModel.from_policy(policy).eval()
    prompts = ["Review of the lamp:", "Review of the mug:"]
    completions = [" it is good.", " the price is very very lovely. it is bad."]
    together = rm.score(tokenizer, prompts, completions)  # row 0 is left-padded here
    alone = torch.cat([rm.score(tokenizer, [p], [c]) for p, c in zip(prompts, completions)])
    torch.testing.assert_close(together, alone, atol=1e-5, rtol=1e-5)
    # the trunk is a copy: training the RM never touches the policy
    assert rm.trunk is not policy.transformer
    assert rm.trunk.wte.weight.data_ptr() != policy.transformer.wte.weight.data_ptr()


def test_reward_model_beats_chance_on_held_out_pairs_and_tracks_gold(trained):
    meta = trained.meta
    assert meta["loss_first"] == pytest.approx(math.log(2), abs=0.2)  # small head at init: r_c ~ r_r
    assert meta["accuracy_start"] < 0.65 < meta["accuracy"], meta
    assert meta["pearson_gold"] > 0.3, meta


def test_a_sign_flipped_loss_trains_the_rm_backwards(sft):
    policy, tokenizer = sft

    def flipped(chosen, rejected):  # the learner swapped chosen and rejected
        return bradley_terry_loss(rejected, chosen)

    cfg = RewardModelConfig.for_profile("smoke", steps=20, eval_every=20)
    _, h = train_reward_model(cfg, policy=policy, tokenizer=tokenizer, bradley_terry_loss=flipped, live=False)
    assert not h.interrupted and {"loss/bt", "rewards/accuracy", "eval/pearson_gold"} <= set(h.keys())
    assert h.meta["accuracy"] < 0.4 and h.meta["pearson_gold"] < 0, h.meta


def test_best_of_n_proxy_reward_never_falls_with_n(sft, trained):
    policy, tokenizer = sft
    rm = trained
    prompts = [e.prompt for e in get_task("reviews").sample(12, split="test", seed=3)]
    result = best_of_n(copy.deepcopy(policy), rm, tokenizer, prompts, ns=(1, 2, 4, 8), seed=0)
    assert result["n"] == [1, 2, 4, 8]
    rm_curve = result["reward/rm"]
    assert all(b >= a - 1e-6 for a, b in zip(rm_curve, rm_curve[1:]))  # max over a superset
    assert result["kl_bound"][0] == 0.0 and result["kl_bound"][-1] == pytest.approx(math.log(8) - 7 / 8)
    assert len(result["reward/gold"]) == 4 and all(math.isfinite(g) for g in result["reward/gold"])
    with pytest.raises(ValueError, match="positive"):
        best_of_n(policy, rm, tokenizer, prompts, ns=(0, 2))


@pytest.mark.slow
def test_cpu_profile_reaches_85_percent_held_out_accuracy():
    """Slow (minutes, cpu profile): ``python -m rlprep.trainers.reward_model --profile cpu``."""
    _, h = train_reward_model(RewardModelConfig.for_profile("cpu"), live=False)
    assert h.meta["accuracy"] >= 0.85, h.meta
