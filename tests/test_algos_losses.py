"""Oracle, hand-worked and invariant tests for the RM, PPO, DPO, GRPO, IS and InfoNCE reference functions."""

from __future__ import annotations

import math

import pytest
import torch

from rlprep.algos.dpo import dpo_loss, sequence_logprobs
from rlprep.algos.grpo import diagnose_zero_loss, grpo_loss, group_advantages, gspo_sequence_ratio, kl_k3
from rlprep.algos.importance_sampling import importance_weights, is_estimate
from rlprep.algos.infonce import infonce_loss
from rlprep.algos.ppo import compute_gae_tokens, kl_penalized_rewards, masked_mean, ppo_clip_loss, value_loss
from rlprep.algos.reward_model import bradley_terry_loss


def _g(seed):
    return torch.Generator().manual_seed(seed)


def _mask(lengths, T):
    return (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).float()


# PPO -----------------------------------------------------------------------------------------------------------
def test_ratio_one_clips_nothing_and_gradient_is_minus_advantage():
    mask = _mask([5, 3, 1], 5)
    logp = torch.randn(3, 5, generator=_g(0)).requires_grad_(True)
    adv = torch.randn(3, 5, generator=_g(1))
    loss = ppo_clip_loss(logp, logp.detach().clone(), adv, mask, clip_eps=0.2)
    loss.backward()
    n = mask.sum()
    assert torch.allclose(loss, -(adv * mask).sum() / n)
    # d/dlogp of -rho*A at rho = 1 is -A/N on valid tokens, 0 on padding: no token is clipped.
    assert torch.allclose(logp.grad, -adv * mask / n)


def test_clipped_tokens_pass_no_gradient():
    mask = torch.ones(1, 2)
    old = torch.zeros(1, 2)
    new = torch.tensor([[math.log(1.5), math.log(0.5)]], requires_grad=True)  # both outside [0.8, 1.2]
    adv = torch.tensor([[1.0, -1.0]])  # rho > 1+eps with A > 0, rho < 1-eps with A < 0: both clipped
    ppo_clip_loss(new, old, adv, mask, 0.2).backward()
    assert torch.all(new.grad == 0)


def test_gae_lambda_zero_is_one_step_td_and_padding_values_are_ignored():
    mask = _mask([4, 2], 5)
    rewards = torch.randn(2, 5, generator=_g(2))
    values = torch.randn(2, 5, generator=_g(3))
    adv, ret = compute_gae_tokens(rewards, values, mask, gamma=0.9, lam=0.0)
    for b, n in enumerate([4, 2]):
        for t in range(n):
            nxt = values[b, t + 1] if t + 1 < n else 0.0
            assert torch.isclose(adv[b, t], rewards[b, t] + 0.9 * nxt - values[b, t])
    assert torch.all(adv[mask == 0] == 0)
    garbage = values.clone()
    garbage[mask == 0] = 1e6
    adv2, _ = compute_gae_tokens(rewards, garbage, mask, gamma=0.9, lam=0.95)
    adv3, _ = compute_gae_tokens(rewards, values, mask, gamma=0.9, lam=0.95)
    assert torch.allclose(adv2, adv3)
    assert torch.allclose(ret, adv + values)


def test_kl_rewards_with_zero_coef_is_the_score_at_the_last_token():
    mask = _mask([3, 5, 1], 5)
    score = torch.tensor([1.0, 2.0, 3.0])
    rewards = kl_penalized_rewards(score, torch.randn(3, 5), torch.randn(3, 5), mask, kl_coef=0.0)
    want = torch.zeros(3, 5)
    want[0, 2], want[1, 4], want[2, 0] = 1.0, 2.0, 3.0
    assert torch.equal(rewards, want)


def test_value_loss_inside_clip_range_is_half_mse():
    mask = _mask([2, 4], 4)
    old, ret = torch.randn(2, 4, generator=_g(4)), torch.randn(2, 4, generator=_g(5))
    values = old + 0.05  # within +-0.2 of old: the clipped value equals V
    assert torch.isclose(value_loss(values, old, ret, mask, 0.2), 0.5 * masked_mean((values - ret) ** 2, mask))


@pytest.mark.parametrize("call", [
    lambda: masked_mean(torch.zeros(2, 3), torch.zeros(2, 3)),
    lambda: masked_mean(torch.zeros(2, 3), torch.ones(3, 2)),
    lambda: ppo_clip_loss(torch.zeros(2, 3), torch.zeros(2, 4), torch.zeros(2, 3), torch.ones(2, 3)),
    lambda: ppo_clip_loss(torch.full((1, 2), float("nan")), torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2)),
    lambda: kl_penalized_rewards(torch.zeros(2), torch.zeros(2, 3), torch.zeros(2, 3),
                                 torch.tensor([[1, 0, 0], [0, 0, 0]]), 0.1),
    lambda: compute_gae_tokens(torch.zeros(2, 3), torch.zeros(2, 3), torch.ones(2, 3), gamma=1.5),
    lambda: value_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(3), torch.ones(2, 3)),
    lambda: bradley_terry_loss(torch.zeros(2, 1), torch.zeros(2, 1)),
    lambda: bradley_terry_loss(torch.tensor([float("nan")]), torch.zeros(1)),
    lambda: dpo_loss(torch.zeros(2), torch.zeros(3), torch.zeros(2), torch.zeros(2)),
    lambda: dpo_loss(torch.zeros(2), torch.zeros(2), torch.zeros(2), torch.zeros(2), beta=0.0),
    lambda: sequence_logprobs(torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.long), torch.ones(2, 3)),
    lambda: group_advantages(torch.zeros(7), 4),
    lambda: group_advantages(torch.zeros(8), 4, scale="groups"),
    lambda: grpo_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2), torch.ones(2, 3), beta=0.1),
    lambda: grpo_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2), torch.ones(2, 3), aggregation="seq"),
    lambda: grpo_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2, 4), torch.ones(2, 3)),  # [B, T] is fine
    lambda: grpo_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(3), torch.ones(2, 3)),
    lambda: diagnose_zero_loss({"loss": 0.0}),
    lambda: importance_weights(torch.zeros(3), torch.zeros(4)),
    lambda: importance_weights(torch.zeros(3), torch.zeros(3), clip=0.0),
    lambda: is_estimate(torch.zeros(3), torch.zeros(3), torch.full((3,), float("nan"))),
    lambda: masked_mean(torch.tensor([[float("nan"), 1.0]]), torch.ones(1, 2)),
    lambda: kl_penalized_rewards(torch.zeros(1), torch.tensor([[float("nan")]]), torch.zeros(1, 1), torch.ones(1, 1),
                                 0.1),
    lambda: compute_gae_tokens(torch.zeros(1, 2), torch.tensor([[0.0, float("nan")]]), torch.ones(1, 2)),
    lambda: value_loss(torch.full((1, 2), float("nan")), torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2)),
    lambda: kl_k3(torch.tensor([float("nan")]), torch.zeros(1)),
    lambda: grpo_loss(torch.tensor([[float("nan")]]), torch.zeros(1, 1), torch.zeros(1), torch.ones(1, 1)),
    lambda: infonce_loss(torch.zeros(4, 3), torch.zeros(4, 2)),
    lambda: infonce_loss(torch.ones(4, 3), torch.ones(4, 3), temperature=0.0),
], ids=lambda f: "")
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


# DPO and the reward model --------------------------------------------------------------------------------------
def test_dpo_is_ln2_at_step_zero_and_its_gradient_separates_the_pair():
    pc = torch.tensor([-12.0, -7.5], requires_grad=True)
    pr = torch.tensor([-9.0, -8.0], requires_grad=True)
    loss = dpo_loss(pc, pr, pc.detach().clone(), pr.detach().clone(), beta=0.1)
    assert abs(loss.item() - math.log(2)) < 1e-7
    loss.backward()
    # d/d pi_c of -log sigma(beta * delta) at delta = 0 is -beta * sigma(0) / B = -0.1 * 0.5 / 2.
    assert torch.allclose(pc.grad, torch.full((2,), -0.025)) and torch.allclose(pr.grad, torch.full((2,), 0.025))


def test_sequence_logprobs_matches_the_causal_lm_loss():
    logits = torch.randn(2, 6, 11, generator=_g(6))
    labels = torch.randint(0, 11, (2, 6), generator=_g(7))
    mask = _mask([6, 4], 6)
    got = sequence_logprobs(logits, labels, mask)
    nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels.masked_fill(mask == 0, -100),
                                            reduction="none")  # (B, T)
    assert torch.allclose(got, -nll.sum(1), atol=1e-5)


def test_bradley_terry_is_ln2_for_ties_and_stable_for_huge_margins():
    assert abs(bradley_terry_loss(torch.zeros(3), torch.zeros(3)).item() - math.log(2)) < 1e-7
    assert abs(bradley_terry_loss(torch.tensor([-1000.0]), torch.tensor([0.0])).item() - 1000.0) < 1e-3


# GRPO ----------------------------------------------------------------------------------------------------------
def test_on_policy_sequence_loss_is_zero_but_gradient_is_not():
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0])
    adv = group_advantages(rewards, 4)
    logp = torch.randn(8, 5, generator=_g(8)).requires_grad_(True)
    mask = _mask([5, 3, 4, 2, 5, 5, 1, 3], 5)
    loss = grpo_loss(logp, logp.detach(), adv, mask, aggregation="sequence")
    assert abs(loss.item()) < 1e-6  # -(1/B) sum_i A_i = 0: advantages are centred per group
    loss.backward()
    assert logp.grad.norm() > 0.1


def test_zero_advantage_groups_give_zero_gradient():
    adv = group_advantages(torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]), 3)
    assert torch.equal(adv, torch.zeros(6))
    logp = torch.randn(6, 4, generator=_g(9)).requires_grad_(True)
    grpo_loss(logp, logp.detach() - 0.1, adv, torch.ones(6, 4), aggregation="token").backward()
    assert torch.all(logp.grad == 0)


def test_nan_in_padding_never_leaks():
    mask = _mask([2, 1], 3)
    logp = torch.tensor([[-1.0, -2.0, float("nan")], [-0.5, float("nan"), float("nan")]])
    assert torch.isfinite(masked_mean(logp, mask))
    assert torch.isfinite(ppo_clip_loss(logp, logp, torch.ones(2, 3), mask))
    assert torch.isfinite(grpo_loss(logp, logp, torch.ones(2), mask, aggregation="sequence"))
    adv, _ = compute_gae_tokens(torch.ones(2, 3), logp, mask)
    assert torch.isfinite(adv).all()


def test_inf_and_nan_in_padding_reach_neither_the_value_nor_the_gradient():
    """Padding log-probs of -inf (a pad token's log-prob) or NaN: 0 * inf would make NaN in a masked product."""
    mask = _mask([2, 1], 3)
    inf, nan = float("inf"), float("nan")
    logp_new = torch.tensor([[-1.0, -2.0, -inf], [-0.5, nan, -inf]], requires_grad=True)
    logp_old = torch.tensor([[-1.1, -1.8, -inf], [-0.6, -inf, nan]])
    adv = torch.tensor([[1.0, -1.0, nan], [2.0, inf, nan]])
    loss = ppo_clip_loss(logp_new, logp_old, adv, mask)
    loss.backward()
    clean = ppo_clip_loss(torch.where(mask > 0, logp_new, 0.0).detach(), torch.where(mask > 0, logp_old, 0.0),
                          torch.where(mask > 0, adv, 0.0), mask)
    assert torch.isfinite(loss) and loss.item() == pytest.approx(clean.item())
    assert torch.isfinite(logp_new.grad).all() and (logp_new.grad[mask == 0] == 0).all()

    values = torch.tensor([[0.5, 1.0, nan], [2.0, inf, -inf]], requires_grad=True)
    old_values = torch.tensor([[0.4, 0.0, inf], [1.0, nan, 0.0]])
    loss = value_loss(values, old_values, torch.tensor([[0.0, 1.0, nan], [1.0, nan, inf]]), mask)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(values.grad).all() and (values.grad[mask == 0] == 0).all()


@pytest.mark.parametrize("loss_fn", [ppo_clip_loss, value_loss])
def test_validate_false_skips_the_host_side_checks(loss_fn, monkeypatch):
    """validate=False (what the trainer passes) reads nothing on the host: no isnan, no empty-mask test."""
    calls = []
    real_isnan = torch.isnan
    monkeypatch.setattr(torch, "isnan", lambda x: calls.append(1) or real_isnan(x))
    a, b, c = (torch.randn(2, 3, generator=_g(i)) for i in range(3))
    mask = _mask([3, 2], 3)
    checked = loss_fn(a, b, c, mask)
    assert calls, "the default (validate=True) must check for NaN"
    calls.clear()
    unchecked = loss_fn(a, b, c, mask, validate=False)
    assert not calls and unchecked.item() == checked.item()
    monkeypatch.undo()
    # where learners call it (the default), bad input still gets the clear error
    with pytest.raises(ValueError, match="NaN"):
        loss_fn(torch.full((2, 3), float("nan")), b, c, mask)
    with pytest.raises(ValueError, match="no valid token"):
        loss_fn(a, b, c, torch.zeros(2, 3))


def test_no_valid_tokens_gives_zero_loss_not_nan():
    loss = grpo_loss(torch.randn(2, 3), torch.randn(2, 3), torch.tensor([1.0, -1.0]), torch.zeros(2, 3))
    assert loss.item() == 0.0


def test_k3_is_nonnegative_and_zero_only_at_equality():
    logp, ref = torch.randn(1000, generator=_g(10)), torch.randn(1000, generator=_g(11))
    assert torch.all(kl_k3(logp, ref) >= 0)
    assert torch.all(kl_k3(logp, logp) == 0)


def test_k3_is_an_unbiased_kl_estimate():
    p = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
    q = torch.tensor([0.2, 0.2, 0.6], dtype=torch.float64)
    exact = (p * (p / q).log()).sum()  # KL(p || q)
    expected_k3 = (p * kl_k3(p.log(), q.log())).sum()  # E_{x ~ p}[k3(x)], exactly over the support
    assert torch.isclose(exact, expected_k3)


def test_gspo_ratio_is_the_geometric_mean_token_ratio():
    mask = _mask([3, 1], 3)
    old = torch.randn(2, 3, generator=_g(12))
    new = old + torch.tensor([[0.3, -0.1, 0.1], [0.6, 5.0, 5.0]])
    ratio = gspo_sequence_ratio(new, old, mask)
    assert torch.allclose(ratio, torch.tensor([math.exp(0.1), math.exp(0.6)]))
    assert torch.allclose(gspo_sequence_ratio(old, old, mask), torch.ones(2))


def test_diagnosis_refuses_an_unexplained_zero_gradient():
    with pytest.raises(ValueError, match="grad_norm is 0"):
        diagnose_zero_loss(dict(loss=0.0, grad_norm=0.0, frac_zero_std_groups=0.2, frac_valid_tokens=0.9,
                                clip_frac=0.1, beta=0.0, num_iterations=1))


# Importance sampling and InfoNCE -------------------------------------------------------------------------------
def test_ordinary_is_is_exact_over_the_full_support_and_sn_stays_in_range():
    target = torch.tensor([0.1, 0.2, 0.7], dtype=torch.float64)
    behavior = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
    f = torch.tensor([1.0, -2.0, 4.0], dtype=torch.float64)
    w = importance_weights(target.log(), behavior.log())
    assert torch.isclose((behavior * w * f).sum(), (target * f).sum())  # E_b[w f] = E_t[f]
    g = _g(13)
    x = torch.multinomial(behavior.float(), 200, replacement=True, generator=g)
    sn = is_estimate(f[x], target.log()[x], behavior.log()[x], self_normalized=True)
    assert f.min() <= sn <= f.max()


def test_truncation_lowers_the_variance_of_the_estimate():
    target = torch.tensor([0.05, 0.05, 0.9], dtype=torch.float64)
    behavior = torch.tensor([0.45, 0.45, 0.1], dtype=torch.float64)
    f = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64)
    g = _g(14)
    plain, truncated = [], []
    for _ in range(200):
        x = torch.multinomial(behavior.float(), 20, replacement=True, generator=g)
        plain.append(is_estimate(f[x], target.log()[x], behavior.log()[x]))
        truncated.append(is_estimate(f[x], target.log()[x], behavior.log()[x], clip=2.0))
    assert torch.tensor(truncated).var() < torch.tensor(plain).var()


def test_infonce_is_ln_b_for_uninformative_embeddings_and_small_for_aligned_ones():
    B = 5
    same = torch.ones(B, 4)
    assert abs(infonce_loss(same, same).item() - math.log(B)) < 1e-5  # every logit equal: log B per direction
    eye = torch.eye(B) * 7.0  # aligned, orthogonal pairs at any scale
    assert infonce_loss(eye, eye, temperature=0.05).item() < 1e-6
    assert infonce_loss(eye, eye.roll(1, 0), temperature=0.05).item() > 10  # every pair mismatched
