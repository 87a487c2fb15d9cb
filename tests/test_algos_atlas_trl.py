"""The atlas registries (rlprep.algos.pg_losses / preference_losses / distill_losses) against TRL 1.16's own code.

Every variant TRL has is run through TRL's loss code on the same float64 inputs, and values and gradients must agree
to 1e-6:
- policy gradient: ``GRPOTrainer._compute_loss`` (unbound, per-token log-probs patched in; see trl_stand_ins) for
  grpo, dr_grpo, dapo, gspo (importance_sampling_level="sequence"), cispo and sapo; ``RLOOTrainer._compute_loss`` and
  the advantage lines of ``RLOOTrainer._generate_and_score_completions`` for rloo;
- preference: ``DPOTrainer._compute_loss`` for ipo, hinge and robust; ``CPOTrainer.cpo_loss`` for simpo;
  ``ORPOTrainer.odds_ratio_loss`` for orpo; ``KTOTrainer._compute_loss`` for kto;
- distillation: ``GKDTrainer.generalized_jsd_loss`` for forward KL (beta 0), reverse KL (beta 1) and the JSD.
REINFORCE, which TRL has no loss for, is checked against values worked by hand in tests/test_algos_atlas.py. Each
comparison also checks that the inputs tell variants apart (a neighbouring variant's TRL value is far off), so a
registry entry wired to the wrong formula fails.
"""

from __future__ import annotations

import inspect
import textwrap
from types import SimpleNamespace

import pytest
import torch

trl = pytest.importorskip("trl")
from trl.experimental.cpo import CPOTrainer  # noqa: E402
from trl.experimental.gkd import GKDTrainer  # noqa: E402
from trl.experimental.orpo import ORPOTrainer  # noqa: E402
from trl.trainer.dpo_trainer import DPOTrainer  # noqa: E402
from trl.trainer.kto_trainer import KTOTrainer  # noqa: E402
from trl.trainer.rloo_trainer import RLOOTrainer  # noqa: E402
from trl.trainer.utils import nanstd  # noqa: E402

from rlprep.algos.distill_losses import DISTILL_LOSSES  # noqa: E402
from rlprep.algos.pg_losses import PG_ADVANTAGES, PG_LOSSES  # noqa: E402
from rlprep.algos.preference_losses import PREFERENCE_LOSSES  # noqa: E402
from trl_stand_ins import mask_from_lengths, stand_in_self, trl_grpo_loss  # noqa: E402

TOL = 1e-6
F64 = torch.float64


def _value_and_grad(fn, leaf):
    """(value, d value / d leaf) of fn() for a leaf tensor that requires grad."""
    leaf.grad = None
    value = fn()
    (grad,) = torch.autograd.grad(value, leaf)
    return value.detach(), grad


def _agree(ours, theirs):
    (v1, g1), (v2, g2) = ours, theirs
    return (v1 - v2).abs().item() <= TOL and (g1 - g2).abs().max().item() <= TOL


# Policy gradient -----------------------------------------------------------------------------------------------
def _pg_batch(spread, seed=0):
    g = torch.Generator().manual_seed(seed)
    B, T = 8, 7
    mask = mask_from_lengths([7, 3, 5, 1, 7, 6, 2, 4], T, F64)
    logp_old = -torch.rand(B, T, generator=g, dtype=F64) * 3
    logp_new = (logp_old + spread * torch.randn(B, T, generator=g, dtype=F64)).requires_grad_(True)
    ref_logp = logp_old + 0.3 * torch.randn(B, T, generator=g, dtype=F64)
    rewards = torch.tensor([1, 0, 0, 1, 0.5, 0.2, 0.9, 0.1], dtype=F64)  # two groups of G = 4
    return logp_new, logp_old, ref_logp, rewards, mask


# name -> (TRL loss_type, TRL keyword arguments, our keyword arguments, log-ratio spread)
TRL_PG = {
    "grpo": ("grpo", dict(eps_low=0.2, eps_high=0.2), dict(eps_low=0.2, eps_high=0.2), 0.4),
    "dr_grpo": ("dr_grpo", dict(eps_low=0.2, eps_high=0.2), dict(eps_low=0.2, eps_high=0.2), 0.4),
    "dapo": ("dapo", dict(eps_low=0.2, eps_high=0.28), dict(eps_low=0.2, eps_high=0.28), 0.4),
    "gspo": ("grpo", dict(eps_low=3e-4, eps_high=4e-4, importance_sampling_level="sequence"), {}, 4e-4),
    "cispo": ("cispo", dict(eps_low=0.2, eps_high=1.2), dict(eps_high=0.2), 0.4),
    "sapo": ("sapo", dict(eps_low=0.2, eps_high=0.2, sapo_temperature_pos=1.0, sapo_temperature_neg=1.05),
             dict(tau_pos=1.0, tau_neg=1.05), 0.4),
}


@pytest.mark.parametrize("name,beta", [(name, beta) for name in sorted(TRL_PG) for beta in (0.0, 0.04)
                                       if not (name == "gspo" and beta)])  # TRL's GSPO recipe sets beta = 0
def test_pg_losses_match_trl_grpo_trainer(name, beta):
    loss_type, trl_kwargs, our_kwargs, spread = TRL_PG[name]
    logp_new, logp_old, ref_logp, rewards, mask = _pg_batch(spread)
    advantages = PG_ADVANTAGES[name](rewards, 4)
    if beta:
        our_kwargs = dict(our_kwargs, beta=beta, ref_logp=ref_logp)
    ours = _value_and_grad(lambda: PG_LOSSES[name](logp_new, logp_old, advantages, mask, **our_kwargs), logp_new)
    theirs = _value_and_grad(lambda: trl_grpo_loss(loss_type, logp_new, logp_old, ref_logp, advantages, mask,
                                                   beta=beta, **trl_kwargs), logp_new)
    assert _agree(ours, theirs)
    # the inputs discriminate: every other TRL loss type gives another value or gradient on this batch
    for other, (other_type, other_kwargs, _, _) in TRL_PG.items():
        if other_type != loss_type or other_kwargs != trl_kwargs:
            other_value = _value_and_grad(lambda: trl_grpo_loss(other_type, logp_new, logp_old, ref_logp, advantages,
                                                                mask, beta=beta, **other_kwargs), logp_new)
            assert not _agree(ours, other_value), f"{name} also matches TRL's {other_type}"


def test_pg_advantages_use_each_variants_baseline():
    rewards = torch.tensor([1, 0, 0, 1, 0.5, 0.2, 0.9, 0.1], dtype=F64)
    grpo = PG_ADVANTAGES["grpo"](rewards, 4)
    dr = PG_ADVANTAGES["dr_grpo"](rewards, 4)
    assert torch.allclose(dr, rewards - rewards.view(2, 4).mean(1).repeat_interleave(4))
    assert not torch.allclose(grpo, dr)  # the std division is what Dr. GRPO drops


def _trl_rloo_advantage_code():
    """The lines of TRL's RLOOTrainer._generate_and_score_completions that turn rewards into advantages."""
    src = inspect.getsource(RLOOTrainer._generate_and_score_completions).splitlines()
    start = next(i for i, line in enumerate(src) if "grouped_rewards = rewards.view(-1, num_generations)" in line)
    end = next(i for i, line in enumerate(src) if "advantages = torch.nan_to_num(advantages, nan=0.0)" in line)
    return textwrap.dedent("\n".join(src[start:end + 1]))


def test_rloo_advantages_match_trl():
    rewards = torch.tensor([1, 0, 0, 1, 0.5, 0.2, 0.9, 0.1, 1, 1, 1, 1], dtype=F64)
    namespace = dict(torch=torch, nanstd=nanstd, rewards=rewards.clone(), num_generations=4,
                     self=SimpleNamespace(normalize_advantages=False))
    exec(_trl_rloo_advantage_code(), namespace)
    ours = PG_ADVANTAGES["rloo"](rewards, 4)
    assert (ours - namespace["advantages"]).abs().max() <= TOL
    assert not torch.allclose(ours, PG_ADVANTAGES["grpo"](rewards, 4))


@pytest.mark.parametrize("spread", [0.0, 0.3])
def test_rloo_loss_matches_trl_rloo_trainer(spread):
    logp_new, logp_old, _, rewards, mask = _pg_batch(spread, seed=1)
    advantages = PG_ADVANTAGES["rloo"](rewards, 4)
    B, T = mask.shape
    trainer = stand_in_self(epsilon_low=0.2, epsilon_high=0.2,
                            _get_per_token_logps_and_entropies=lambda *a, **k: (logp_new, torch.zeros_like(logp_new),
                                                                                 None))
    inputs = dict(prompt_ids=torch.zeros(B, 2, dtype=torch.long), prompt_mask=torch.ones(B, 2, dtype=torch.long),
                  completion_ids=torch.zeros(B, T, dtype=torch.long), completion_mask=mask,
                  old_logps=(logp_old * mask).sum(1), advantages=advantages)
    theirs = _value_and_grad(lambda: RLOOTrainer._compute_loss(trainer, None, inputs), logp_new)
    ours = _value_and_grad(lambda: PG_LOSSES["rloo"](logp_new, logp_old, advantages, mask), logp_new)
    assert _agree(ours, theirs)


# Preference ----------------------------------------------------------------------------------------------------
def _pairs(seed=2):
    """Per-token completion log-probs of B pairs, rows [chosen..., rejected...] as TRL batches them."""
    g = torch.Generator().manual_seed(seed)
    B, P, C = 4, 3, 6
    completion_mask = torch.zeros(2 * B, P + C, dtype=torch.long)
    for row, n in enumerate([6, 4, 5, 1, 3, 6, 2, 5]):
        completion_mask[row, P:P + n] = 1
    shift_mask = completion_mask[:, 1:].to(F64)
    per_token = (-torch.rand(2 * B, P + C - 1, generator=g, dtype=F64) * 2 * shift_mask).requires_grad_(True)
    ref_per_token = -torch.rand(2 * B, P + C - 1, generator=g, dtype=F64) * 2 * shift_mask
    return B, completion_mask, shift_mask, per_token, ref_per_token


def _tensors(B, shift_mask, per_token, ref_per_token):
    logps, ref, lengths = per_token.sum(1), ref_per_token.sum(1), shift_mask.sum(1)
    return dict(policy_chosen_logps=logps[:B], policy_rejected_logps=logps[B:], ref_chosen_logps=ref[:B],
                ref_rejected_logps=ref[B:], chosen_lengths=lengths[:B], rejected_lengths=lengths[B:])


def _call(name, tensors, **hyper):
    fn = PREFERENCE_LOSSES[name]
    names = [p.name for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty]
    return fn(**{k: tensors[k] for k in names}, **hyper)


def _trl_dpo(loss_type, B, completion_mask, per_token, ref_per_token, beta, label_smoothing=0.0):
    def stand_in_model(**kwargs):  # what TRL's fused LM head returns
        zeros = torch.zeros_like(per_token)
        return SimpleNamespace(log_probs=per_token, entropy=zeros, mean_logits=zeros, is_top1=zeros.bool())

    trainer = stand_in_self(precompute_ref_logps=True, ld_alpha=None, f_divergence_type="reverse_kl",
                            loss_types=[loss_type], loss_weights=[1.0], beta=beta, label_smoothing=label_smoothing,
                            use_weighting=False)
    ref = ref_per_token.sum(1)
    inputs = dict(input_ids=torch.zeros_like(completion_mask), attention_mask=torch.ones_like(completion_mask),
                  completion_mask=completion_mask, ref_chosen_logps=ref[:B], ref_rejected_logps=ref[B:])
    return DPOTrainer._compute_loss(trainer, stand_in_model, inputs, return_outputs=False)


# name -> (TRL loss_type, beta, label_smoothing, our hyper-parameters)
TRL_DPO = {
    "dpo": ("sigmoid", 0.1, 0.0, dict(beta=0.1)),
    "ipo": ("ipo", 0.1, 0.0, dict(beta=0.1)),
    "hinge": ("hinge", 0.5, 0.0, dict(beta=0.5)),
    "robust_dpo": ("robust", 0.1, 0.2, dict(beta=0.1, label_smoothing=0.2)),
}


@pytest.mark.parametrize("name", sorted(TRL_DPO))
def test_paired_losses_match_trl_dpo_trainer(name):
    B, completion_mask, shift_mask, per_token, ref_per_token = _pairs()
    loss_type, beta, smoothing, hyper = TRL_DPO[name]
    ours = _value_and_grad(lambda: _call(name, _tensors(B, shift_mask, per_token, ref_per_token), **hyper), per_token)
    theirs = _value_and_grad(lambda: _trl_dpo(loss_type, B, completion_mask, per_token, ref_per_token, beta,
                                              smoothing), per_token)
    assert _agree(ours, theirs)
    for other_type, other_beta, other_smoothing, _ in TRL_DPO.values():
        if other_type != loss_type:
            other = _value_and_grad(lambda: _trl_dpo(other_type, B, completion_mask, per_token, ref_per_token,
                                                     other_beta, other_smoothing), per_token)
            assert not _agree(ours, other), f"{name} also matches TRL's {other_type}"


@pytest.mark.parametrize("gamma", [0.0, 0.5])
def test_simpo_matches_trl_cpo_trainer(gamma):
    B, _, shift_mask, per_token, ref_per_token = _pairs(seed=3)
    trainer = stand_in_self(alpha=0.0, loss_type="simpo", simpo_gamma=gamma, beta=2.0, label_smoothing=0.0)

    def trl_simpo():
        avg = per_token.sum(1) / shift_mask.sum(1)  # TRL's average_log_prob=True for simpo
        losses, _, _ = CPOTrainer.cpo_loss(trainer, avg[:B], avg[B:])
        return losses.mean()

    tensors = _tensors(B, shift_mask, per_token, ref_per_token)
    ours = _value_and_grad(lambda: _call("simpo", tensors, beta=2.0, gamma=gamma), per_token)
    assert _agree(ours, _value_and_grad(trl_simpo, per_token))
    trainer.loss_type = "sigmoid"  # CPO without the length normalisation's margin: a different value when gamma > 0
    assert gamma == 0 or not _agree(ours, _value_and_grad(trl_simpo, per_token))


def test_orpo_matches_trl_orpo_trainer():
    B, _, shift_mask, per_token, ref_per_token = _pairs(seed=4)
    nll = torch.tensor(1.3, dtype=F64)
    trainer = stand_in_self(beta=0.25)

    def trl_orpo():
        avg = per_token.sum(1) / shift_mask.sum(1)  # TRL's average_log_prob=True
        losses, *_ = ORPOTrainer.odds_ratio_loss(trainer, avg[:B], avg[B:])
        return nll - losses.mean()  # ORPOTrainer.get_batch_loss_metrics: policy_nll_loss - losses.mean()

    tensors = dict(_tensors(B, shift_mask, per_token, ref_per_token), chosen_nll=nll)
    ours = _value_and_grad(lambda: _call("orpo", tensors, lam=0.25), per_token)
    theirs = _value_and_grad(trl_orpo, per_token)
    # TRL casts to float32 inside odds_ratio_loss, so the agreement is float32's, still far inside 1e-6 here
    assert _agree(ours, theirs)
    assert not _agree(_value_and_grad(lambda: _call("orpo", tensors, lam=0.5), per_token), theirs)


@pytest.mark.parametrize("kl_shift", [-2.0, 0.7])  # a negative batch KL is clamped to 0 (z0 >= 0)
def test_kto_matches_trl_kto_trainer(kl_shift):
    g = torch.Generator().manual_seed(5)
    B, L = 6, 8
    completion_mask = torch.zeros(B, L, dtype=torch.long)
    completion_mask[:, 3:] = 1
    per_token = (-torch.rand(B, L - 1, generator=g, dtype=F64) * completion_mask[:, 1:]).requires_grad_(True)
    ref_logps = per_token.detach().sum(1) + 0.5 * torch.randn(B, generator=g, dtype=F64)
    kl_logps = -torch.rand(B, generator=g, dtype=F64) * 5
    ref_kl_logps = kl_logps - kl_shift + 0.1 * torch.randn(B, generator=g, dtype=F64)
    desirable = torch.tensor([True, False, True, True, False, False])

    def stand_in_model(**kwargs):
        zeros = torch.zeros_like(per_token)
        return SimpleNamespace(log_probs=per_token, entropy=zeros, mean_logits=zeros)

    trainer = stand_in_self(calculate_KL=True, precompute_ref_logps=True, loss_type="kto", beta=0.1,
                            desirable_weight=1.0, undesirable_weight=1.33,
                            _compute_kl_logps=lambda model, batch: kl_logps)
    inputs = dict(input_ids=torch.zeros(B, L, dtype=torch.long), attention_mask=torch.ones(B, L, dtype=torch.long),
                  completion_mask=completion_mask, label=desirable, ref_logps=ref_logps, ref_KL_logps=ref_kl_logps)
    theirs = _value_and_grad(lambda: KTOTrainer._compute_loss(trainer, stand_in_model, inputs, False), per_token)
    ours = _value_and_grad(lambda: PREFERENCE_LOSSES["kto"](
        per_token.sum(1), ref_logps, desirable, kl_logps, ref_kl_logps, beta=0.1, undesirable_weight=1.33),
        per_token)
    assert _agree(ours, theirs)
    flipped = _value_and_grad(lambda: PREFERENCE_LOSSES["kto"](
        per_token.sum(1), ref_logps, ~desirable, kl_logps, ref_kl_logps, beta=0.1, undesirable_weight=1.33),
        per_token)
    assert not _agree(flipped, theirs)


# Distillation --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,beta", [("forward_kl", 0.0), ("reverse_kl", 1.0), ("gkd_jsd", 0.5),
                                       ("gkd_jsd", 0.1)])
@pytest.mark.parametrize("temperature", [1.0, 2.0])
def test_distill_losses_match_trl_gkd(name, beta, temperature):
    g = torch.Generator().manual_seed(6)
    student = (torch.randn(3, 5, 11, generator=g, dtype=F64) * 2).requires_grad_(True)
    teacher = torch.randn(3, 5, 11, generator=g, dtype=F64) * 2
    mask = mask_from_lengths([5, 2, 4], 5, F64)
    labels = torch.where(mask.bool(), torch.ones(3, 5, dtype=torch.long), torch.full((3, 5), -100))
    hyper = dict(temperature=temperature) if name != "gkd_jsd" else dict(beta=beta, temperature=temperature)
    ours = _value_and_grad(lambda: DISTILL_LOSSES[name](student, teacher, mask, **hyper), student)
    theirs = _value_and_grad(lambda: GKDTrainer.generalized_jsd_loss(student, teacher, labels=labels, beta=beta,
                                                                     temperature=temperature), student)
    assert _agree(ours, theirs)
    other_beta = 0.3 if beta != 0.3 else 0.7
    other = _value_and_grad(lambda: GKDTrainer.generalized_jsd_loss(student, teacher, labels=labels, beta=other_beta,
                                                                    temperature=temperature), student)
    assert not _agree(ours, other)
