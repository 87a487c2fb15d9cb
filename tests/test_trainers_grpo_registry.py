"""GRPOTrainer with ``loss_type``: the loss and the baseline come from the atlas registries by name (no if/elif), every
registry entry takes the same keywords, and a setting the chosen variant would ignore is refused (error:/fix:)."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from rlprep.algos import pg_losses
from rlprep.algos.grpo import grpo_loss
from rlprep.profiles import PROFILES
from rlprep.tinyworld import load_policy
from rlprep.trainers.grpo import GRPOConfig, loss_choice, train_grpo

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


def test_every_registry_entry_takes_the_same_keywords_and_refuses_what_it_ignores():
    new, old, adv, mask = _batch()
    ref = old + 0.1
    shared = dict(eps_low=None, eps_high=None, beta=0.0, ref_logp=None, max_length=8)
    for name, loss in pg_losses.PG_LOSSES.items():  # one call shape for all; None keeps the variant's own settings
        assert torch.isfinite(loss(new, old, adv, mask, **shared)), name
        variant = pg_losses.PG_VARIANTS[name]
        if "eps_low" in variant.settings:
            assert loss(new, old, adv, mask, eps_low=0.05, eps_high=0.05) != loss(new, old, adv, mask), name
        else:
            with pytest.raises(ValueError, match=f"the {name} loss has no eps_low"):
                loss(new, old, adv, mask, eps_low=0.2)
        if variant.kl_mean is None:
            with pytest.raises(ValueError, match=f"the {name} loss has no beta"):
                loss(new, old, adv, mask, beta=0.04, ref_logp=ref)
        else:
            assert loss(new, old, adv, mask, beta=0.04, ref_logp=ref) != loss(new, old, adv, mask), name
    # max_length is a fact of the batch: Dr. GRPO divides by it, the others do not read it
    assert torch.equal(pg_losses.PG_LOSSES["dr_grpo"](new, old, adv, mask, max_length=8),
                       pg_losses.dr_grpo_loss(new, old, adv, mask, max_length=8))
    assert torch.equal(pg_losses.PG_LOSSES["dapo"](new, old, adv, mask, max_length=8),
                       pg_losses.PG_LOSSES["dapo"](new, old, adv, mask))


def test_each_variants_defaults_are_its_surrogates_signature():
    import inspect

    for name, variant in pg_losses.PG_VARIANTS.items():
        params = inspect.signature(variant.surrogate).parameters
        assert set(variant.settings) <= set(params), name
        if variant.clip is not None:  # the clip the statistic assumes is the one the loss applies by default
            assert (params["eps_low"].default, params["eps_high"].default) == variant.clip[1:], name
    grpo_params = inspect.signature(grpo_loss).parameters  # grpo_loss's own clip is GRPO's
    assert (grpo_params["eps_low"].default, grpo_params["eps_high"].default) == pg_losses.PG_VARIANTS["grpo"].clip[1:]


def test_config_refuses_an_unknown_variant_and_every_setting_the_variant_ignores():
    with pytest.raises(ValueError, match=r"loss_type must be None or one of \[.*'cispo'"):
        GRPOConfig.for_profile("smoke", loss_type="cispo2")
    with pytest.raises(ValueError, match=r"the rloo loss has no beta and would ignore it: set beta=0"):
        GRPOConfig.for_profile("smoke", loss_type="rloo", beta=0.04)
    with pytest.raises(ValueError, match=r"the reinforce loss has no eps_low or eps_high .* set eps_low=None and "):
        GRPOConfig.for_profile("smoke", loss_type="reinforce", eps_low=0.1, eps_high=0.3)
    for knob, value in (("aggregation", "token"), ("importance_level", "sequence"), ("scale_rewards", "none")):
        with pytest.raises(ValueError, match=f"loss_type='gspo' has its own {knob} and would ignore yours: "
                                             f"set {knob}=None"):
            GRPOConfig.for_profile("smoke", loss_type="gspo", **{knob: value})
    # what a variant has is passed on: GSPO's clip from the config, the gpu profile's clip-higher dropped
    cfg = GRPOConfig.for_profile("smoke", loss_type="gspo", eps_low=1e-3)
    assert loss_choice(cfg)[3] == pg_losses.ClipRange("sequence", 1e-3, 4e-4)
    assert GRPOConfig.for_profile(PROFILES["gpu"]).eps_high == 0.28  # the gpu budget clips higher, a variant drops it
    assert GRPOConfig.for_profile(PROFILES["gpu"], loss_type="reinforce").eps_high is None


def test_rlprep_train_refuses_an_ignored_setting_with_error_and_fix(rlprep_home, capsys):
    from rlprep.cli import main

    assert main(["train", "grpo", "--profile", "smoke", "--set", "loss_type=sapo", "--set", "eps_high=0.28"]) == 2
    err = capsys.readouterr().err
    assert "error: GRPOConfig: the sapo loss has no eps_high and would ignore it: set eps_high=None" in err
    assert "fix: " in err


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
