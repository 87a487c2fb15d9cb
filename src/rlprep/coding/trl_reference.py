"""TRL 1.16's own loss code on given tensors, for the coding bank's library cross-checks.

Each TRL trainer method is called unbound (``DPOTrainer._compute_loss(stand_in, ...)``) with ``self`` a namespace
holding only the attributes it reads and a stand-in model that returns the given log-probabilities, the way
``tests/test_algos_trl.py`` checks ``rlprep.algos`` against TRL. TRL is imported on first use (it is slow to import).
"""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import torch


def _stand_in(**attrs):
    identity = lambda x, **_: x  # noqa: E731 - one process: gather and reduce are the identity
    accelerator = SimpleNamespace(device=torch.device("cpu"), gather=identity, gather_for_metrics=identity,
                                  reduce=identity, num_processes=1, sync_gradients=True)
    base = dict(model=SimpleNamespace(training=True), accelerator=accelerator, aux_loss_enabled=False,
                _metrics=defaultdict(lambda: defaultdict(list)), _total_train_tokens=0, _tp_size=1)
    return SimpleNamespace(**{**base, **attrs})


def dpo_sigmoid_loss(chosen, rejected, ref_chosen, ref_rejected, beta: float) -> torch.Tensor:
    """``trl.DPOTrainer._compute_loss`` (sigmoid loss, precomputed reference log-probs) on [B] sequence log-probs."""
    from trl.trainer.dpo_trainer import DPOTrainer

    logps = torch.cat([chosen, rejected]).unsqueeze(1)  # (2B, 1): one "token" whose log-prob is the sequence's

    def model(**kwargs):
        zeros = torch.zeros_like(logps)
        return SimpleNamespace(log_probs=logps, entropy=zeros, mean_logits=zeros, is_top1=zeros.bool())

    trainer = _stand_in(precompute_ref_logps=True, ld_alpha=None, f_divergence_type="reverse_kl", loss_types=["sigmoid"],
                        loss_weights=[1.0], beta=beta, label_smoothing=0.0, use_weighting=False)
    n = logps.shape[0]
    inputs = dict(input_ids=torch.zeros(n, 2, dtype=torch.long), attention_mask=torch.ones(n, 2, dtype=torch.long),
                  completion_mask=torch.ones(n, 2, dtype=torch.long), ref_chosen_logps=ref_chosen,
                  ref_rejected_logps=ref_rejected)
    return DPOTrainer._compute_loss(trainer, model, inputs, return_outputs=False)


def reward_model_loss(chosen_rewards, rejected_rewards) -> torch.Tensor:
    """``trl.RewardTrainer.compute_loss`` on [B] rewards (TRL batches [chosen..., rejected...])."""
    from trl.trainer.reward_trainer import RewardTrainer

    rewards = torch.cat([chosen_rewards, rejected_rewards]).unsqueeze(1)  # (2B, 1)
    trainer = _stand_in(args=SimpleNamespace(center_rewards_coefficient=None))
    n = rewards.shape[0]
    inputs = dict(input_ids=torch.zeros(n, 2, dtype=torch.long), attention_mask=torch.ones(n, 2, dtype=torch.long))
    return RewardTrainer.compute_loss(trainer, lambda **kw: SimpleNamespace(logits=rewards), inputs)


def grpo_loss(loss_type: str, logp_new, logp_old, advantages, mask, eps_low: float, eps_high: float,
              beta: float = 0.0, ref_logp=None) -> torch.Tensor:
    """``trl.GRPOTrainer._compute_loss`` on given per-token log-probs [B, T] and advantages [B]."""
    from trl.trainer import grpo_trainer as trl_grpo

    ref_logp = logp_old if ref_logp is None else ref_logp
    trainer = _stand_in(
        top_entropy_quantile=1.0, off_policy_mask_threshold=None, importance_sampling_level="token", beta=beta,
        loss_type=loss_type, epsilon_low=eps_low, epsilon_high=eps_high, use_vllm=False,
        vllm_importance_sampling_correction=False, current_gradient_accumulation_steps=1,
        _entropy_bonus_enabled=False, max_completion_length=mask.shape[1],
        args=SimpleNamespace(use_bias_correction_kl=False, delta=None, steps_per_generation=1,
                             sapo_temperature_pos=1.0, sapo_temperature_neg=1.05),
        _get_per_token_logps_and_entropies=lambda *a, **k: (logp_new, torch.zeros_like(logp_new), None))
    B, T = mask.shape
    inputs = dict(prompt_ids=torch.zeros(B, 2, dtype=torch.long), prompt_mask=torch.ones(B, 2, dtype=torch.long),
                  completion_ids=torch.zeros(B, T, dtype=torch.long), completion_mask=mask, advantages=advantages,
                  old_per_token_logps=logp_old, ref_per_token_logps=ref_logp, num_items_in_batch=mask.sum())
    return trl_grpo.GRPOTrainer._compute_loss(trainer, None, inputs)


def group_advantages(rewards: torch.Tensor, group_size: int, scale: str = "group") -> torch.Tensor:
    """The advantage lines of ``trl.GRPOTrainer._generate_and_score_completions``, run on ``rewards`` [N*G]."""
    import inspect
    import textwrap

    from trl.trainer import grpo_trainer as trl_grpo
    from trl.trainer.utils import nanstd

    src = inspect.getsource(trl_grpo.GRPOTrainer._generate_and_score_completions).splitlines()
    start = next(i for i, line in enumerate(src) if "mean_grouped_rewards = torch.nanmean(" in line)
    end = next(i for i, line in enumerate(src) if "advantages = advantages / (std_rewards + 1e-4)" in line)
    namespace = dict(torch=torch, nanstd=nanstd, rewards=rewards.clone(), num_generations=group_size,
                     self=SimpleNamespace(scale_rewards=scale))
    exec(textwrap.dedent("\n".join(src[start:end + 1])), namespace)  # TRL's own installed source
    return namespace["advantages"]
