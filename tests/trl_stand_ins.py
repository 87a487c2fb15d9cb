"""Stand-ins that let TRL 1.16's trainer loss methods run unbound, without a model, an accelerator or a dataset.

Shared by tests/test_algos_trl.py and tests/test_algos_atlas_trl.py. Each TRL method is called as
``Trainer._compute_loss(stand_in_self, ...)``: ``self`` is a namespace holding only the attributes the method reads.
"""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import torch


def accelerator():
    identity = lambda x, **_: x  # noqa: E731  single process: gather/reduce are the identity
    return SimpleNamespace(device=torch.device("cpu"), gather=identity, gather_for_metrics=identity, reduce=identity,
                           num_processes=1, sync_gradients=True)


def stand_in_self(**attrs):
    base = dict(model=SimpleNamespace(training=True), accelerator=accelerator(), aux_loss_enabled=False,
                _metrics=defaultdict(lambda: defaultdict(list)), _total_train_tokens=0, _tp_size=1)
    base.update(attrs)
    return SimpleNamespace(**base)


def mask_from_lengths(lengths, T, dtype=torch.float32):
    return (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).to(dtype)


def trl_grpo_loss(loss_type, logp_new, logp_old, ref_logp, advantages, mask, eps_low, eps_high, beta,
                  importance_sampling_level="token", sapo_temperature_pos=1.0, sapo_temperature_neg=1.05):
    """``trl.GRPOTrainer._compute_loss`` on given per-token log-probs (patched in for the model's forward)."""
    from trl.trainer import grpo_trainer as trl_grpo

    trainer = stand_in_self(
        top_entropy_quantile=1.0, off_policy_mask_threshold=None, importance_sampling_level=importance_sampling_level,
        beta=beta, loss_type=loss_type, epsilon_low=eps_low, epsilon_high=eps_high, use_vllm=False,
        vllm_importance_sampling_correction=False, current_gradient_accumulation_steps=1,
        _entropy_bonus_enabled=False, max_completion_length=mask.shape[1],
        args=SimpleNamespace(use_bias_correction_kl=False, delta=None, steps_per_generation=1,
                             sapo_temperature_pos=sapo_temperature_pos, sapo_temperature_neg=sapo_temperature_neg),
        _get_per_token_logps_and_entropies=lambda *a, **k: (logp_new, torch.zeros_like(logp_new), None),
    )
    B, T = mask.shape
    inputs = dict(prompt_ids=torch.zeros(B, 2, dtype=torch.long), prompt_mask=torch.ones(B, 2, dtype=torch.long),
                  completion_ids=torch.zeros(B, T, dtype=torch.long), completion_mask=mask, advantages=advantages,
                  old_per_token_logps=logp_old, ref_per_token_logps=ref_logp, num_items_in_batch=mask.sum())
    return trl_grpo.GRPOTrainer._compute_loss(trainer, None, inputs)
