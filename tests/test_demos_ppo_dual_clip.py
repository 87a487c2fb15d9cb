"""G09's dual-clip and log-ratio clamp (rlprep.demos.ppo_dual_clip): equal to the reference PPO-Clip loss where
neither guard acts, a constant −c·A with zero gradient where dual-clip acts, finite where exp would overflow."""

from __future__ import annotations

import pytest
import torch

from rlprep.algos.ppo import ppo_clip_loss
from rlprep.demos.ppo_dual_clip import dual_clip_ppo_loss


def _batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    logp_old = -torch.rand(3, 5, generator=g, dtype=torch.float64)
    logp_new = (logp_old + 0.3 * torch.randn(3, 5, generator=g, dtype=torch.float64)).requires_grad_()
    adv = torch.randn(3, 5, generator=g, dtype=torch.float64)
    mask = torch.ones(3, 5, dtype=torch.float64)
    mask[2, 3:] = 0
    return logp_new, logp_old, adv, mask


def test_equals_the_reference_where_no_guard_acts():
    logp_new, logp_old, adv, mask = _batch()
    ref = ppo_clip_loss(logp_new, logp_old, adv, mask, clip_eps=0.2)
    ours = dual_clip_ppo_loss(logp_new, logp_old, adv, mask, clip_eps=0.2, dual_clip=3.0, max_log_ratio=20.0)
    assert (logp_new - logp_old).abs().max() < torch.log(torch.tensor(3.0))  # every ratio below c: dual-clip idle
    assert torch.allclose(ours, ref)
    g_ref, = torch.autograd.grad(ref, logp_new)
    g_ours, = torch.autograd.grad(ours, logp_new)
    assert torch.allclose(g_ours, g_ref)


def test_dual_clip_floors_a_negative_advantage_at_large_ratio():
    # one token, A = -1, rho = e^2 = 7.39 > c = 3: plain PPO keeps rho*A (loss 7.39, gradient 7.39);
    # dual-clip gives the constant -c*A = 3 with zero gradient
    logp_new = torch.tensor([[2.0]], requires_grad=True)
    args = (torch.tensor([[0.0]]), torch.tensor([[-1.0]]), torch.ones(1, 1))
    plain = dual_clip_ppo_loss(logp_new, *args, dual_clip=None)
    floored = dual_clip_ppo_loss(logp_new, *args, dual_clip=3.0)
    assert plain.item() == pytest.approx(torch.e ** 2) and floored.item() == pytest.approx(3.0)
    assert float(torch.autograd.grad(plain, logp_new)[0]) == pytest.approx(torch.e ** 2)
    assert float(torch.autograd.grad(floored, logp_new)[0]) == 0.0
    # a positive advantage is never touched by the floor: there the clip already caps the ratio at 1 + eps
    pos = (torch.tensor([[0.0]]), torch.tensor([[1.0]]), torch.ones(1, 1))
    assert dual_clip_ppo_loss(logp_new, *pos, dual_clip=3.0).item() == pytest.approx(-1.2)


def test_the_log_ratio_clamp_keeps_the_loss_finite_and_padding_is_ignored():
    logp_new = torch.tensor([[0.0, 0.0]], requires_grad=True)
    logp_old = torch.tensor([[-200.0, float("nan")]])  # an old log-prob from another engine; NaN in padding
    adv, mask = torch.tensor([[-1.0, 5.0]]), torch.tensor([[1.0, 0.0]])
    unclamped = dual_clip_ppo_loss(logp_new, logp_old, adv, mask, dual_clip=None, max_log_ratio=None)
    assert torch.isinf(unclamped)  # exp(200) overflows float32
    clamped = dual_clip_ppo_loss(logp_new, logp_old, adv, mask, dual_clip=None, max_log_ratio=20.0)
    assert clamped.item() == pytest.approx(float(torch.exp(torch.tensor(20.0))))
    both = dual_clip_ppo_loss(logp_new, logp_old, adv, mask, dual_clip=3.0, max_log_ratio=20.0)
    assert both.item() == pytest.approx(3.0)
    assert torch.isfinite(torch.autograd.grad(both, logp_new)[0]).all()


def test_bad_arguments_are_named():
    logp_new, logp_old, adv, mask = _batch()
    for kwargs in (dict(dual_clip=1.0), dict(clip_eps=0.0), dict(max_log_ratio=0.0)):
        with pytest.raises(ValueError):
            dual_clip_ppo_loss(logp_new, logp_old, adv, mask, **kwargs)
    with pytest.raises(ValueError, match="no valid token"):
        dual_clip_ppo_loss(logp_new, logp_old, adv, torch.zeros_like(mask))


@pytest.mark.parametrize("max_log_ratio", [None, 20.0])
def test_padding_at_minus_inf_reaches_neither_the_loss_nor_the_gradient(max_log_ratio):
    # a pad token's log-prob is -inf under both policies: -inf - (-inf) = NaN; masking after exp would keep the value
    # clean but send 0 * exp(NaN) = NaN into the gradient (PyTorch issue #52248)
    logp_new = torch.tensor([[-0.5, -1.0, float("-inf")]], requires_grad=True)
    logp_old = torch.tensor([[-0.7, -1.0, float("-inf")]])
    adv, mask = torch.tensor([[1.0, -2.0, float("nan")]]), torch.tensor([[1.0, 1.0, 0.0]])
    loss = dual_clip_ppo_loss(logp_new, logp_old, adv, mask, dual_clip=3.0, max_log_ratio=max_log_ratio)
    grad, = torch.autograd.grad(loss, logp_new)
    assert torch.isfinite(loss) and torch.isfinite(grad).all()
    assert grad[0, 2] == 0.0
    ref = ppo_clip_loss(logp_new, logp_old, adv, mask, clip_eps=0.2)
    assert torch.allclose(loss, ref) and torch.allclose(grad, torch.autograd.grad(ref, logp_new)[0])
