"""Reward model on the smoke reviews policy: padding invariance, it learns, injection is wired, best-of-N invariants."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from rlprep.algos.reward_model import bradley_terry_loss
from rlprep.tinyworld import get_task, load_policy
from rlprep.tinyworld.tasks.reviews import Pair
from rlprep.trainers.reward_model import (RewardModel, RewardModelConfig, best_of_n, evaluate_reward_model,
                                         label_ceiling, load_reward_model, train_reward_model)


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


def test_label_ceiling_by_hand():
    task = get_task("reviews")
    prompt = "Review of the mug:"
    # gold: " it is great." = 1.0, " it is bad." = -0.7 (margin 1.7); " it is good." = " it is nice." = 0.6 (tie)
    pairs = [Pair(prompt, " it is great.", " it is bad."), Pair(prompt, " it is bad.", " it is great."),
             Pair(prompt, " it is good.", " it is nice.")]
    c = label_ceiling(task, pairs, beta=3.0)
    bayes = 1 / (1 + math.exp(-3.0 * 1.7))
    assert c["ceiling/expected"] == pytest.approx((2 * bayes + 0.5) / 3)
    assert c["ceiling/gold_on_labels"] == pytest.approx((1 + 0 + 0.5) / 3)  # the second label is the noisy one
    assert c["ceiling/near_tied"] == pytest.approx(1 / 3)


def test_evaluate_separates_noisy_label_accuracy_from_gold_order_agreement():
    task = get_task("reviews")
    prompt = "Review of the mug:"

    class GoldRM:  # scores with the gold scorer itself: agrees with the gold order on every untied pair
        def score(self, tokenizer, prompts, completions):
            return torch.tensor([task.gold_score(p, c) for p, c in zip(prompts, completions)])

    pairs = [Pair(prompt, " it is great.", " it is bad."), Pair(prompt, " it is bad.", " it is great."),
             Pair(prompt, " it is good.", " it is nice."), Pair(prompt, " it is very good.", " it is dull.")]
    m = evaluate_reward_model(GoldRM(), None, task, pairs)
    assert m["eval/accuracy"] == pytest.approx(0.5)  # the flipped label and the tie (r_c > r_r is False)
    assert m["eval/accuracy_se"] == pytest.approx(math.sqrt(0.25 / 4))
    assert m["eval/accuracy_gold"] == pytest.approx(1.0)  # the tie is left out
    assert m["eval/pearson_gold"] == pytest.approx(1.0)


def test_a_sign_flipped_loss_trains_the_rm_backwards(sft):
    policy, tokenizer = sft

    def flipped(chosen, rejected):  # the learner swapped chosen and rejected
        return bradley_terry_loss(rejected, chosen)

    cfg = RewardModelConfig.for_profile("smoke", steps=20, eval_every=20)
    _, h = train_reward_model(cfg, policy=policy, tokenizer=tokenizer, bradley_terry_loss=flipped, live=False)
    assert not h.interrupted and {"loss/bt", "reward/rm_accuracy", "eval/pearson_gold"} <= set(h.keys())
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
def test_cpu_profile_rm_is_within_five_points_of_the_label_noise_ceiling():
    """Slow (minutes, cpu profile). Measured 2026-11-30: 83.6% against a ceiling of 86.2%, gold order 92.5%."""
    _, h = train_reward_model(RewardModelConfig.for_profile("cpu"), live=False)
    m = h.meta
    assert m["accuracy"] >= m["ceiling/expected"] - 0.05 and m["accuracy_gold"] >= 0.9, m
