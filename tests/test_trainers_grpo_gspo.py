"""GSPO (importance_level="sequence") and per-token advantages in ``grpo_loss``, and the GSPO-with-beta bug:
the k3 KL must be taken from the policy's real per-token log-probs, not from a synthetic
``logp_old + sequence log-ratio`` that only carries GSPO's ratio (it failed on commit b2ab551)."""

from __future__ import annotations

import copy

import pytest
import torch

from rlprep.algos.grpo import grpo_loss, gspo_sequence_ratio, kl_k3
from rlprep.tinyworld import get_task, load_policy
from rlprep.trainers.grpo import GRPOConfig, GRPOTrainer
from rlprep.trainers.sequences import completion_logprobs


@pytest.fixture(scope="module")
def sft():
    return load_policy("arithmetic", "smoke")


def test_gspo_with_beta_computes_its_kl_on_the_real_log_probs(sft):
    """Zero advantages leave only beta * k3 in the loss, so the step's gradient must be that of
    beta * (masked token mean of k3(logp, ref_logp)) (GRPO arXiv 2402.03300 Eq. 4; GSPO arXiv 2507.18071 Eq. 7
    changes only the ratio). The reference is moved away from the policy so the KL has a gradient at all."""
    policy, tokenizer = copy.deepcopy(sft[0]), sft[1]
    beta = 0.5
    cfg = GRPOConfig.for_profile("smoke", steps=1, importance_level="sequence", beta=beta, aggregation="token",
                                 prompts_per_step=4, group_size=4, eval_size=4, max_grad_norm=1e9)
    trainer = GRPOTrainer(cfg, policy, tokenizer, get_task("arithmetic"),
                          group_advantages=lambda rewards, group_size, scale="group", eps=1e-4: torch.zeros_like(rewards))
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in trainer.reference.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    prompts = [ex.prompt for ex in get_task("arithmetic").sample(4, split="train", seed=3)]
    batch = trainer.sample(prompts)
    trainer.sample = lambda _prompts: batch  # the step trains on this very batch

    rollout = batch[0]
    C = rollout.completion_ids.shape[1]
    mask = rollout.completion_mask.float()  # (B, C)
    logp = completion_logprobs(trainer.policy, rollout.input_ids, rollout.attention_mask, C)  # (B, C)
    with torch.no_grad():
        ref_logp = completion_logprobs(trainer.reference, rollout.input_ids, rollout.attention_mask, C)  # (B, C)
    expected_loss = beta * (kl_k3(logp, ref_logp) * mask).sum() / mask.sum()
    grads = torch.autograd.grad(expected_loss, [p for p in trainer.policy.parameters()], allow_unused=True)
    expected_norm = torch.sqrt(sum((g ** 2).sum() for g in grads if g is not None))
    assert expected_norm > 1e-4  # the KL really pulls: the test can tell the two gradients apart

    row = trainer.step()
    assert row["loss/policy"] == pytest.approx(float(expected_loss.detach()), rel=1e-4)
    assert row["stats/grad_norm"] == pytest.approx(float(expected_norm), rel=1e-3)


def _batch(seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    old = -1.5 + 0.5 * torch.randn(3, 4, generator=gen, dtype=torch.float64)
    new = (old + 0.3 * torch.randn(3, 4, generator=gen, dtype=torch.float64)).requires_grad_(True)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.float64)
    return new, old, mask


def test_per_token_advantages_equal_to_the_row_value_match_per_row_advantages():
    new, old, mask = _batch()
    adv = torch.tensor([1.0, -0.5, 2.0], dtype=torch.float64)
    for aggregation in ("token", "sequence"):
        row = grpo_loss(new, old, adv, mask, aggregation=aggregation)
        token = grpo_loss(new, old, adv.unsqueeze(1).expand(3, 4), mask, aggregation=aggregation)
        torch.testing.assert_close(row, token)
    # a per-token weight changes the value: the last valid token of row 0 counts double
    weighted = adv.unsqueeze(1).repeat(1, 4)
    weighted[0, 3] *= 2
    assert float(grpo_loss(new, old, weighted, mask).detach()) != pytest.approx(float(grpo_loss(new, old, adv, mask).detach()))
    with pytest.raises(ValueError, match="advantages"):
        grpo_loss(new, old, adv[:2], mask)


def test_sequence_importance_level_clips_gspo_ratio_per_row_by_hand():
    """GSPO (arXiv 2507.18071, Eq. 7): per row, -min(s A, clip(s) A) with s = exp(mean log-ratio of the row)."""
    new, old, mask = _batch(1)
    adv = torch.tensor([1.0, -1.0, 0.5], dtype=torch.float64)
    s = gspo_sequence_ratio(new, old, mask)  # (B,)
    per_row = -torch.min(s * adv, s.clamp(0.9, 1.1) * adv)  # (B,) every token of a row has the same term
    loss = grpo_loss(new, old, adv, mask, eps_low=0.1, eps_high=0.1, aggregation="sequence", importance_level="sequence")
    torch.testing.assert_close(loss, per_row.mean())
    token_mean = (per_row * mask.sum(1)).sum() / mask.sum()
    torch.testing.assert_close(grpo_loss(new, old, adv, mask, eps_low=0.1, eps_high=0.1, importance_level="sequence"),
                               token_mean)
    with pytest.raises(ValueError, match="importance_level"):
        grpo_loss(new, old, adv, mask, importance_level="seq")


def test_sequence_importance_level_keeps_the_kl_per_token():
    """With zero advantages only beta * k3 remains, and it must not depend on the importance level."""
    new, old, mask = _batch(2)
    ref = old + 0.2
    zero = torch.zeros(3, dtype=torch.float64)
    token = grpo_loss(new, old, zero, mask, beta=0.1, ref_logp=ref)
    sequence = grpo_loss(new, old, zero, mask, beta=0.1, ref_logp=ref, importance_level="sequence")
    torch.testing.assert_close(sequence, token)
    (g_token,) = torch.autograd.grad(token, new)
    (g_sequence,) = torch.autograd.grad(sequence, new)
    torch.testing.assert_close(g_sequence, g_token)
