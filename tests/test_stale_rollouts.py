"""rlprep.demos.stale_rollouts: config checks, the weighted surrogate by hand, and a short stale run's invariants."""

from __future__ import annotations

import pytest
import torch

from rlprep.algos.grpo import grpo_loss
from rlprep.demos.stale_rollouts import StaleGRPOConfig, run_stale_grpo
from rlprep.live import History


@pytest.mark.parametrize("bad,match", [
    (dict(staleness=-1), "staleness"), (dict(correction="ppo"), "correction"), (dict(clip=0.0), "clip"),
    (dict(group_size=1), "group_size"), (dict(lr=0.0), "lr"),
])
def test_config_rejects_bad_values(bad, match):
    with pytest.raises(ValueError, match=match):
        StaleGRPOConfig(**bad)


def test_profiles_size_the_run():
    assert StaleGRPOConfig.for_profile("cpu").steps > StaleGRPOConfig.for_profile("smoke").steps
    assert StaleGRPOConfig.for_profile("smoke", staleness=3).staleness == 3


def test_weighted_token_advantages_give_the_weighted_reinforce_gradient_by_hand():
    """What the stale trainer hands ``grpo_loss``: advantages A_b * w_bt with logp_old = logp.detach() (ratio 1)."""
    logp = torch.tensor([[-1.0, -2.0], [-0.5, -3.0]], requires_grad=True)
    adv = torch.tensor([1.0, -2.0])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])  # 3 valid tokens
    weights = torch.tensor([[0.5, 2.0], [1.0, 9.0]])  # the masked 9.0 must not count
    loss = grpo_loss(logp, logp.detach(), adv.unsqueeze(1) * weights, mask)
    # ratio 1 in value: -(0.5*1 + 2*1 + 1*-2) / 3
    assert float(loss.detach()) == pytest.approx(-0.5 / 3)
    loss.backward()
    assert torch.allclose(logp.grad, torch.tensor([[-0.5, -2.0], [2.0, 0.0]]) / 3)  # -w A m / n


@pytest.fixture(scope="module")
def sft():
    from rlprep.tinyworld import load_policy

    return load_policy("arithmetic", "smoke")


def test_stale_run_lags_by_k_and_uses_the_injected_weights(sft):
    policy, tokenizer = sft
    policy = type(policy)(policy.config)
    policy.load_state_dict(sft[0].state_dict())
    calls = []

    def spy_weights(logp_target, logp_behavior, clip=None):
        calls.append(clip)
        return torch.exp(logp_target - logp_behavior) if clip is None else torch.exp(logp_target - logp_behavior).clamp(max=clip)

    cfg = StaleGRPOConfig.for_profile("smoke", staleness=2, correction="tis", clip=1.5, steps=4, prompts_per_step=4,
                                      group_size=4, eval_every=100, eval_size=8, lr=1e-3)
    hist = run_stale_grpo(cfg, policy, tokenizer, importance_weights=spy_weights)
    assert isinstance(hist, History) and [r["step"] for r in hist] == [0, 1, 2, 3, 4]  # one format for every run
    assert hist.series("eval/accuracy")[0] == [0, 4]
    _, kl = hist.series("stats/kl_behavior")
    _, ess = hist.series("stats/ess")
    # steps 1 and 2 sample with the initial weights, and step 1 updates those very weights: on-policy exactly
    assert abs(kl[0]) < 1e-5 and ess[0] == pytest.approx(1.0, abs=1e-6)
    assert abs(kl[1]) > 1e-4 or ess[1] < 1.0  # from step 2 on the sampler lags the learner
    assert calls.count(1.5) == 4 and calls.count(None) == 4  # truncated for the loss, raw for the ESS stats
    assert all(0.0 <= f <= 1.0 for f in hist.series("stats/truncfrac")[1])
