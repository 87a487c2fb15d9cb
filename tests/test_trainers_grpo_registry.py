"""GRPOTrainer with ``loss_type``: the loss and the baseline come from the atlas registries by name (no if/elif)."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from rlprep.algos import pg_losses
from rlprep.tinyworld import load_policy
from rlprep.trainers.grpo import GRPOConfig, train_grpo
from rlprep.trainers.grpo_update import registry_advantages, registry_loss

F64 = torch.float64


@pytest.fixture(scope="module")
def sft():
    return load_policy("arithmetic", "smoke")


def _batch():
    gen = torch.Generator().manual_seed(3)
    old = -1.0 - torch.rand(4, 5, generator=gen, dtype=F64)
    new = old + 0.3 * torch.randn(4, 5, generator=gen, dtype=F64)
    mask = (torch.arange(5)[None, :] < torch.tensor([5, 2, 4, 1])[:, None]).to(F64)
    return new, old, torch.tensor([1.0, -0.5, 0.25, -1.0], dtype=F64), mask


def test_registry_loss_is_the_registry_function_with_its_own_knobs():
    new, old, adv, mask = _batch()
    # the caller's GRPO knobs are not passed on: Dr. GRPO keeps eps 0.2 and divides by the given max_length
    got = registry_loss("dr_grpo", max_length=8)(new, old, adv, mask, eps_low=0.0, eps_high=5.0, aggregation="sequence")
    assert torch.equal(got, pg_losses.dr_grpo_loss(new, old, adv, mask, max_length=8))
    ref = old + 0.1
    got = registry_loss("cispo")(new, old, adv, mask, beta=0.04, ref_logp=ref)
    assert torch.equal(got, pg_losses.cispo_loss(new, old, adv, mask, beta=0.04, ref_logp=ref))
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 2.0, 2.0], dtype=F64)
    assert torch.equal(registry_advantages("rloo")(rewards, 3, scale="group"),
                       pg_losses.leave_one_out_advantages(rewards, 3))
    with pytest.raises(ValueError, match="no KL term"):
        registry_loss("gspo")(new, old, adv, mask, beta=0.04, ref_logp=ref)
    with pytest.raises(ValueError, match="choose one of"):
        registry_loss("dr_grpo2")


def test_config_refuses_an_unknown_variant_and_a_kl_the_variant_lacks():
    with pytest.raises(ValueError, match=r"loss_type must be None or one of \[.*'cispo'"):
        GRPOConfig.for_profile("smoke", loss_type="cispo2")
    with pytest.raises(ValueError, match="the rloo loss has no KL term: set beta=0"):
        GRPOConfig.for_profile("smoke", loss_type="rloo", beta=0.04)


@pytest.mark.parametrize("name", ["dr_grpo", "cispo"])
def test_a_smoke_run_trains_with_the_variant_chosen_by_name(sft, monkeypatch, name):
    calls = {"loss": 0, "advantages": []}
    real_loss, real_advantages = pg_losses.PG_LOSSES[name], pg_losses.PG_ADVANTAGES[name]

    def spy_loss(*args, **kwargs):
        calls["loss"] += 1
        return real_loss(*args, **kwargs)

    def spy_advantages(rewards, group_size):
        calls["advantages"].append((rewards.clone(), real_advantages(rewards, group_size)))
        return calls["advantages"][-1][1]

    monkeypatch.setitem(pg_losses.PG_LOSSES, name, spy_loss)
    monkeypatch.setitem(pg_losses.PG_ADVANTAGES, name, spy_advantages)
    policy, tokenizer = sft
    before = [p.detach().clone() for p in policy.parameters()]
    cfg = GRPOConfig.for_profile("smoke", steps=2, prompts_per_step=4, group_size=4, num_iterations=2,
                                 eval_every=100, eval_size=4, loss_type=name)
    history = train_grpo(cfg, policy=copy.deepcopy(policy), tokenizer=tokenizer, live=False)
    assert calls["loss"] == cfg.steps * cfg.num_iterations and len(calls["advantages"]) == cfg.steps
    for rewards, advantages in calls["advantages"]:  # each variant's own baseline reached the loss
        grouped = rewards.view(-1, 4)
        want = grouped - grouped.mean(dim=1, keepdim=True)  # Dr. GRPO: no std; CISPO: GRPO's std-scaled one
        if name == "cispo":
            want = want / (grouped.std(dim=1, keepdim=True) + 1e-4)
        assert torch.allclose(advantages, want.view(-1))
    losses = [row["loss/policy"] for row in history if "loss/policy" in row]
    assert len(losses) == cfg.steps and all(math.isfinite(v) for v in losses)
    trained = history.trainer.policy
    assert any(not torch.equal(a, b) for a, b in zip(before, trained.parameters())), "the policy did not move"
