"""Inputs a real batch carries that the happy path never sees: -inf log-probs on padding, -inf logits from a masked
vocabulary, a group whose rewards tie. Each test failed on the code before the fix (issue 35's code defects).

Padding must never count: a loss with -inf on its padding positions must have the value and the gradient it has
when the padding holds any finite number, with a gradient of exactly 0 there ("select before exp").
"""

from __future__ import annotations

import pytest
import torch

from rlprep.algos.grpo import group_advantages, grpo_loss
from rlprep.algos.pg_losses import PG_LOSSES
from rlprep.demos.grpo import softmax_entropy
from rlprep.trainers.sequences import logprobs_and_entropy

F64 = torch.float64
KL_VARIANTS = ("grpo", "dr_grpo", "dapo", "cispo", "sapo")  # the PG_LOSSES entries with a k3 term


def _padded(fill: float):
    """logp_new (a leaf), logp_old, ref_logp [2, 3] with ``fill`` on the one padding position, mask, advantages."""
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]], dtype=F64)
    new = torch.tensor([[-0.3, -1.2, -2.0], [-0.7, -0.1, fill]], dtype=F64, requires_grad=True)
    old = torch.tensor([[-0.4, -1.0, -2.2], [-0.6, -0.2, fill]], dtype=F64)
    ref = torch.tensor([[-0.5, -1.1, -1.9], [-0.9, -0.3, fill]], dtype=F64)
    return new, old, ref, mask, torch.tensor([1.0, -0.5], dtype=F64)


def _value_and_grad(loss_fn):
    """(value, gradient on logp_new) with -inf padding, and the same with a finite padding value."""
    out = []
    for fill in (float("-inf"), -3.0):
        new, old, ref, mask, adv = _padded(fill)
        value = loss_fn(new, old, adv, mask, ref)
        (grad,) = torch.autograd.grad(value, new)
        out.append((value.detach(), grad))
    return out


def _assert_padding_never_counts(loss_fn):
    (value, grad), (finite_value, finite_grad) = _value_and_grad(loss_fn)
    assert torch.isfinite(value) and torch.isfinite(grad).all(), (value, grad)
    torch.testing.assert_close(value, finite_value)
    torch.testing.assert_close(grad, finite_grad)
    assert grad[1, 2] == 0


@pytest.mark.parametrize("aggregation", ["token", "sequence"])
def test_grpo_loss_with_kl_ignores_minus_inf_padding(aggregation):
    _assert_padding_never_counts(lambda new, old, adv, mask, ref: grpo_loss(
        new, old, adv, mask, beta=0.04, ref_logp=ref, aggregation=aggregation))


@pytest.mark.parametrize("name", KL_VARIANTS)
def test_every_kl_variant_ignores_minus_inf_padding(name):
    _assert_padding_never_counts(lambda new, old, adv, mask, ref: PG_LOSSES[name](
        new, old, adv, mask, beta=0.04, ref_logp=ref))


def _masked_logits():
    """[2, 3, 5] logits with a masked vocabulary (-inf) on some entries; labels never masked."""
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 3, 5, generator=gen, dtype=F64)
    logits[0, :, 3:] = float("-inf")
    logits[1, 1, 0] = float("-inf")
    return logits, torch.tensor([[0, 1, 2], [4, 1, 3]])


def _entropy_value_and_grad(entropy_fn, logits):
    leaf = logits.clone().requires_grad_(True)
    entropy = entropy_fn(leaf)
    (grad,) = torch.autograd.grad(entropy.sum(), leaf)
    return entropy.detach(), grad


@pytest.mark.parametrize("entropy_fn", [lambda z: logprobs_and_entropy(z, _masked_logits()[1])[1], softmax_entropy],
                         ids=["logprobs_and_entropy", "demos.grpo.softmax_entropy"])
def test_entropy_with_a_masked_vocabulary_is_categoricals(entropy_fn):
    logits, _ = _masked_logits()
    value, grad = _entropy_value_and_grad(entropy_fn, logits)
    want, want_grad = _entropy_value_and_grad(lambda z: torch.distributions.Categorical(logits=z).entropy(), logits)
    assert torch.isfinite(value).all() and torch.isfinite(grad).all()
    torch.testing.assert_close(value, want)
    torch.testing.assert_close(grad, want_grad)


def test_logprobs_with_a_masked_vocabulary_are_finite_for_the_labels():
    logits, labels = _masked_logits()
    leaf = logits.clone().requires_grad_(True)
    logp, _ = logprobs_and_entropy(leaf, labels)
    (grad,) = torch.autograd.grad(logp.sum(), leaf)
    torch.testing.assert_close(logp, torch.distributions.Categorical(logits=logits).log_prob(labels))
    assert torch.isfinite(grad).all()


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
@pytest.mark.parametrize("eps", [0.0, 1e-4])
def test_a_tied_group_gets_exactly_zero_advantage(scale, eps):
    # [0.3] * 6 in float32: the group mean is not exactly 0.3, so "centred / (std + eps)" is rounding noise
    # (3e-4 at the default eps, 0.91 at eps = 0), not the 0 the docstring promises
    rewards = torch.cat([torch.full((6,), 0.3), torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0, 0.5])])
    adv = group_advantages(rewards, 6, scale=scale, eps=eps)
    assert torch.isfinite(adv).all()
    assert torch.equal(adv[:6], torch.zeros(6))
    assert (adv[6:] != 0).any()


def test_group_advantages_refuses_a_negative_eps():
    with pytest.raises(ValueError, match="eps must be >= 0"):
        group_advantages(torch.tensor([1.0, 0.0, 0.5, 0.5]), 2, eps=-0.1)
