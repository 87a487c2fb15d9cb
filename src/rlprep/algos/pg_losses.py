"""The policy-gradient atlas: one baseline and one loss per variant, chosen by name (notebook 13, bank A01-A08).

Two registries share their keys, so a trainer picks a variant with one name and no if/elif chain::

    advantages = PG_ADVANTAGES[name](rewards, group_size)            # [N*G] -> [N*G]
    loss = PG_LOSSES[name](logp_new, logp_old, advantages, mask)     # scalar

Every ``PG_LOSSES`` entry takes the same keywords: ``eps_low``, ``eps_high`` (the clip), ``beta`` and ``ref_logp``
(GRPO's k3 KL to a reference), ``max_length`` (the generation budget, a fact of the batch that only Dr. GRPO reads).
None (beta 0) leaves a setting at the variant's own default; a setting the variant does not have (REINFORCE's clip,
GSPO's KL) is a ValueError, and ``GRPOConfig.checks()`` refuses it the same way (:func:`unused_settings`). An entry
(:func:`pg_loss`) checks the inputs once, calls the variant's surrogate (one function per variant below, the
graded ``dr_grpo_loss`` and ``cispo_loss`` among them) and adds beta * k3 once, averaged as the variant averages its
surrogate (the aggregation is linear, so this equals adding k3 per token first, as TRL does).

Layout as in ``rlprep.algos.grpo``: ``rewards`` is a flat [N*G] tensor of N consecutive groups of G completions of
one prompt; per-token tensors are [B, T] with B = N*G rows over completion tokens; ``mask`` is 1 on valid completion
tokens. ``logp_new`` carries the gradient; ``logp_old`` (the sampler's log-probs) and ``advantages`` are constants.
What the variants change, side by side:

| variant | baseline | ratio | clipping | aggregation |
|---|---|---|---|---|
| reinforce | batch mean | none (on-policy) | none | mean over sequences of the summed log-prob |
| rloo | leave-one-out group mean | sequence | PPO clip on the sequence ratio | mean over sequences |
| grpo | group mean / std | token | PPO clip | mean over sequences of token means |
| dr_grpo | group mean | token | PPO clip | token sum / (B * max length) |
| dapo | group mean / std | token | clip-higher | token mean over the batch |
| gspo | group mean / std | sequence (geometric mean) | PPO clip, tiny range | mean over sequences |
| cispo | group mean / std | token, clipped and detached | on the weight, not the update | token mean over the batch |
| sapo | group mean / std | token | none: a sigmoid gate | mean over sequences of token means |
"""

from __future__ import annotations

from functools import partial
from typing import Callable, NamedTuple

import torch

from rlprep.algos.grpo import group_advantages, grpo_loss, kl_k3


class ClipRange(NamedTuple):
    """A clip that stops a token's gradient: the ratio it clips and its band [1 - eps_low, 1 + eps_high].

    ``level``: ``"token"`` (each token's ratio), ``"sequence"`` (GSPO: exp of the row's mean log-ratio, shared by its
    tokens) or ``"sequence_sum"`` (RLOO: exp of the row's summed log-ratio, the whole-sequence ratio).
    """

    level: str
    eps_low: float
    eps_high: float


# Baselines -----------------------------------------------------------------------------------------------------
def batch_mean_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """REINFORCE with a baseline (Williams 1992): A_i = r_i - mean of the whole batch's rewards.

    A baseline that does not depend on the sampled action leaves the policy gradient unbiased and lowers its
    variance. The batch mean includes r_i itself, a small bias of order 1/B that the leave-one-out baseline removes.

    Args:
        rewards: [N*G] float rewards. group_size: G (unused: the baseline ignores the groups).

    Returns:
        [N*G] detached advantages.
    """
    if rewards.ndim != 1 or rewards.numel() < 2:
        raise ValueError(f"rewards must be a flat [B] tensor with B >= 2, got shape {tuple(rewards.shape)}")
    r = rewards.detach()
    return r - r.mean()


def leave_one_out_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """RLOO's baseline (Ahmadian et al. 2024, arXiv 2402.14740; Kool et al. 2019): the mean of the other G - 1 rewards.

    A_i = r_i - 1/(G-1) sum_{j != i} r_j = G/(G-1) * (r_i - mean_j r_j). The baseline is independent of y_i, so the
    estimator is unbiased; no std division. Equals TRL 1.16's RLOOTrainer advantages (normalize_advantages=False).

    Args:
        rewards: [N*G] float rewards, groups consecutive. group_size: G >= 2.

    Returns:
        [N*G] detached advantages.
    """
    if rewards.ndim != 1 or group_size < 2 or rewards.numel() % group_size != 0:
        raise ValueError(f"rewards must be a flat [N*G] tensor with G = group_size >= 2 dividing its length; "
                         f"got shape {tuple(rewards.shape)} and group_size={group_size}")
    grouped = rewards.detach().view(-1, group_size)  # (N, G)
    others = (grouped.sum(dim=1, keepdim=True) - grouped) / (group_size - 1)  # (N, G) mean of the other G-1
    return (grouped - others).view(-1)


def group_std_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """GRPO's baseline: (r_i - group mean) / (group std + 1e-4) (arXiv 2402.03300, Sec. 4.1); see group_advantages."""
    return group_advantages(rewards, group_size, scale="group")


def group_mean_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """Dr. GRPO's baseline: r_i - group mean, no std division (Liu et al. 2025, arXiv 2503.20783): a prompt whose
    rewards barely vary is no longer up-weighted."""
    return group_advantages(rewards, group_size, scale="none")


# Surrogates: one per variant, ``(logp_new, logp_old, advantages, mask, *, its settings) -> scalar`` ------------
def reinforce_loss(logp_new, logp_old, advantages, mask) -> torch.Tensor:
    """REINFORCE (Williams 1992, Machine Learning 8: 229-256): -mean_i A_i * log pi(y_i | x), one action per completion.

    Its gradient is the score-function estimator -1/B sum_i A_i grad log pi(y_i|x) with log pi(y_i|x) = sum_t
    mask * logp_new. On-policy only: ``logp_old`` is accepted for the shared signature and not used.

    Args:
        logp_new, logp_old: [B, T] per-token log-probs; advantages: [B]; mask: [B, T].

    Returns:
        Scalar tensor.
    """
    seq_logp = torch.where(mask.bool(), logp_new, torch.zeros_like(logp_new)).sum(dim=1)  # (B,)
    return -(advantages.detach() * seq_logp).mean()


def rloo_loss(logp_new, logp_old, advantages, mask, *, eps_low: float = 0.2, eps_high: float = 0.2) -> torch.Tensor:
    """RLOO's update as TRL 1.16's RLOOTrainer computes it: PPO's clip on the whole-sequence ratio.

    rho_i = pi(y_i|x) / pi_old(y_i|x) = exp(sum_t mask * (logp_new - logp_old)); loss = -mean_i min(rho_i A_i,
    clip(rho_i, 1 - eps_low, 1 + eps_high) A_i). On-policy (rho = 1) its gradient is exactly RLOO's estimator
    1/k sum_i A_i grad log pi(y_i|x) (arXiv 2402.14740) with the leave-one-out A_i; the clip only acts when a batch is
    reused. The KL penalty of RLOO lives in the reward, not here.

    Args:
        logp_new, logp_old: [B, T]; advantages: [B] (leave_one_out_advantages); mask: [B, T].
        eps_low, eps_high: clip range of the sequence ratio.

    Returns:
        Scalar tensor.
    """
    log_ratio = torch.where(mask.bool(), logp_new - logp_old.detach(), torch.zeros_like(logp_new)).sum(dim=1)  # (B,)
    ratio = torch.exp(log_ratio)
    adv = advantages.detach()
    return -torch.min(ratio * adv, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * adv).mean()


def grpo_variant_loss(logp_new, logp_old, advantages, mask, *, eps_low: float = 0.2,
                      eps_high: float = 0.2) -> torch.Tensor:
    """GRPO (Shao et al. 2024, arXiv 2402.03300, Eq. 3): per-token PPO clip, 1/G sum_i 1/|o_i| sum_t.

    The 1/|o_i| is the length bias Dr. GRPO removes: a short correct answer gets a larger per-token push, a long wrong
    one a smaller penalty. Equals TRL's ``loss_type="grpo"``. Shapes: logp_new, logp_old, mask [B, T]; advantages [B].
    """
    return grpo_loss(logp_new, logp_old, advantages, mask, eps_low=eps_low, eps_high=eps_high, aggregation="sequence")


def dr_grpo_loss(logp_new, logp_old, advantages, mask, *, eps_low: float = 0.2, eps_high: float = 0.2,
                 max_length: int | None = None) -> torch.Tensor:
    """Dr. GRPO (Liu et al. 2025, arXiv 2503.20783): GRPO's per-token clip summed, divided by a constant B * max_length.

    The paper drops GRPO's 1/|o_i| (and the std of the advantage); the constant is TRL's ``max_completion_length``.
    Dropping 1/|o_i| makes every token of every completion weigh the same, so a long wrong answer is penalised as much
    per token as a short one (no length bias); the constant keeps the scale of a mean. Equals TRL's
    ``loss_type="dr_grpo"`` with ``max_completion_length = max_length``. Pair it with group_mean_advantages.

    Args:
        logp_new, logp_old, mask: [B, T]; advantages: [B].
        eps_low, eps_high: clip range [1 - eps_low, 1 + eps_high]. max_length: the constant (the generation budget),
            >= T; default T.

    Returns:
        Scalar tensor.
    """
    B, T = mask.shape
    max_length = T if max_length is None else max_length
    if max_length < T:
        raise ValueError(f"max_length ({max_length}) must be >= the completion width T ({T})")
    valid = mask.bool()
    ratio = torch.exp(torch.where(valid, logp_new - logp_old.detach(), torch.zeros_like(logp_new)))  # (B, T)
    adv = advantages.detach().unsqueeze(1)  # (B, 1)
    per_token = -torch.min(ratio * adv, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * adv)  # (B, T) PPO clip
    token_sum = torch.where(valid, per_token, torch.zeros_like(per_token)).sum()  # no 1/|o_i|
    return token_sum / (B * max_length)


def dapo_loss(logp_new, logp_old, advantages, mask, *, eps_low: float = 0.2, eps_high: float = 0.28) -> torch.Tensor:
    """DAPO (Yu et al. 2025, arXiv 2503.14476): clip-higher (eps_high > eps_low) and the token-level loss
    1/sum_i |o_i| sum_i sum_t min(r A, clip(r, 1 - eps_low, 1 + eps_high) A).

    Clip-higher lets a low-probability token that earns a positive advantage grow further before the clip stops it
    (against entropy collapse); the token mean gives long completions weight in proportion to their tokens. Defaults
    0.2 / 0.28 are the paper's. Equals TRL's ``loss_type="dapo"`` on one batch. Shapes as grpo_variant_loss.
    """
    return grpo_loss(logp_new, logp_old, advantages, mask, eps_low=eps_low, eps_high=eps_high, aggregation="token")


def gspo_loss(logp_new, logp_old, advantages, mask, *, eps_low: float = 3e-4, eps_high: float = 4e-4) -> torch.Tensor:
    """GSPO (Zheng et al. 2025, arXiv 2507.18071, Eq. 5): 1/G sum_i min(s_i A_i, clip(s_i, 1 - eps_low, 1 + eps_high) A_i).

    s_i = (pi(y_i|x) / pi_old(y_i|x))^(1/|y_i|), the geometric mean of the token ratios: one ratio and one clip
    decision per sequence, the unit the reward is given to. The clip range is tiny because s_i is a per-token
    geometric mean (the paper sets Eq. 5's ranges to 3e-4 / 4e-4, Sec. 5.1). Equals TRL's
    ``importance_sampling_level="sequence"`` with ``loss_type="grpo"``. Shapes as grpo_variant_loss.
    """
    return grpo_loss(logp_new, logp_old, advantages, mask, eps_low=eps_low, eps_high=eps_high,
                     aggregation="sequence", importance_level="sequence")


def cispo_loss(logp_new, logp_old, advantages, mask, *, eps_low: float | None = None,
               eps_high: float = 4.0) -> torch.Tensor:
    """CISPO (MiniMax-M1, arXiv 2506.13585, the J_CISPO objective): -1/sum|o_i| sum_i sum_t sg(r_hat) A log pi.

    r_hat = clip(r, 1 - eps_low, 1 + eps_high) with r = exp(logp_new - logp_old), detached (sg = stop-gradient). The
    clip bounds the importance weight, never the update: every token keeps a gradient A * r_hat * grad log pi, even
    a rare token whose ratio shot up (PPO/GRPO would drop it). ``eps_low=None`` puts no lower bound, as TRL 1.16;
    the default upper bound 1 + 4.0 = 5.0 is the value TRL's docs recommend after ScaleRL (arXiv 2510.13786).
    Equals TRL's ``loss_type="cispo"`` with ``epsilon_high = 1 + eps_high``.

    Args:
        logp_new, logp_old, mask: [B, T]; advantages: [B].
        eps_low, eps_high: bounds of the weight, [1 - eps_low, 1 + eps_high]; eps_low None: none below.

    Returns:
        Scalar tensor (its value is not 0 on-policy: it is -A log pi, not a ratio).
    """
    valid = mask.bool()
    ratio = torch.exp(torch.where(valid, logp_new - logp_old.detach(), torch.zeros_like(logp_new)))  # (B, T)
    lower = None if eps_low is None else 1 - eps_low
    clipped_weight = torch.clamp(ratio, min=lower, max=1 + eps_high).detach()  # (B, T) sg(r_hat)
    per_token = -clipped_weight * advantages.detach().unsqueeze(1) * logp_new  # (B, T)
    token_sum = torch.where(valid, per_token, torch.zeros_like(per_token)).sum()
    return token_sum / mask.to(logp_new.dtype).sum().clamp(min=1.0)  # token mean over the batch


def sapo_loss(logp_new, logp_old, advantages, mask, *, tau_pos: float = 1.0, tau_neg: float = 1.05) -> torch.Tensor:
    """SAPO (Gao et al. 2025, arXiv 2511.20347): a temperature-controlled soft gate replaces the hard clip.

    Per token -f(r) A with f(r) = sigmoid(tau (r - 1)) * 4 / tau as TRL 1.16 implements it, tau = tau_pos when A > 0,
    else tau_neg. d f / d r = 4 sigma (1 - sigma) is 1 at r = 1
    (on-policy it is the plain policy gradient) and decays smoothly as r leaves 1: a continuous trust region instead of
    a hard band, token by token. tau_neg > tau_pos damps negative-advantage updates faster (defaults 1.0 / 1.05 are
    TRL 1.16's). Aggregated per sequence, as TRL 1.16's ``loss_type="sapo"``.

    Args:
        logp_new, logp_old, mask: [B, T]; advantages: [B]. tau_pos, tau_neg: the gate's temperatures (> 0).

    Returns:
        Scalar tensor.
    """
    if tau_pos <= 0 or tau_neg <= 0:
        raise ValueError(f"tau_pos and tau_neg must be > 0, got {tau_pos}, {tau_neg}")
    ratio = torch.exp(torch.where(mask.bool(), logp_new - logp_old.detach(), torch.zeros_like(logp_new)))  # (B, T)
    adv = advantages.detach().unsqueeze(1)  # (B, 1)
    tau = torch.where(adv > 0, torch.full_like(adv, tau_pos), torch.full_like(adv, tau_neg))  # (B, 1)
    gate = torch.sigmoid(tau * (ratio - 1)) * 4 / tau  # (B, T)
    return sequence_mean(-gate * adv, mask)


# How a variant averages a per-token [B, T] term (its surrogate's aggregation; its k3 KL is averaged the same way) ---
def sequence_mean(per_token: torch.Tensor, mask: torch.Tensor, max_length: int | None = None) -> torch.Tensor:
    """Mean over rows of each row's masked token mean (GRPO's 1/G sum_i 1/|o_i| sum_t)."""
    m = mask.to(per_token.dtype)
    masked = torch.where(m > 0, per_token, torch.zeros_like(per_token))  # (B, T)
    return (masked.sum(dim=1) / m.sum(dim=1).clamp(min=1.0)).mean()


def token_mean(per_token: torch.Tensor, mask: torch.Tensor, max_length: int | None = None) -> torch.Tensor:
    """Sum over the batch's valid tokens / their number (DAPO's 1/sum_i |o_i| sum_i sum_t)."""
    masked = torch.where(mask.bool(), per_token, torch.zeros_like(per_token))  # (B, T)
    return masked.sum() / mask.to(per_token.dtype).sum().clamp(min=1.0)


def constant_mean(per_token: torch.Tensor, mask: torch.Tensor, max_length: int | None = None) -> torch.Tensor:
    """Sum over the batch's valid tokens / (B * max_length), max_length defaulting to T (Dr. GRPO's constant)."""
    B, T = mask.shape
    masked = torch.where(mask.bool(), per_token, torch.zeros_like(per_token))  # (B, T)
    return masked.sum() / (B * (T if max_length is None else max_length))


# The registry ----------------------------------------------------------------------------------------------------
class Variant(NamedTuple):
    """What a variant does with the shared keywords."""

    surrogate: Callable
    """Its loss without the KL term: ``(logp_new, logp_old, advantages, mask, **settings) -> scalar``."""
    settings: tuple[str, ...]
    """The keywords its surrogate takes, among ``eps_low``, ``eps_high``, ``max_length``."""
    kl_mean: Callable | None
    """How it averages beta * k3 per token (:func:`sequence_mean`, ...); None: it has no KL term (beta must be 0)."""
    clip: ClipRange | None
    """Its gradient-stopping clip at its defaults (``stats/clipfrac_one_sided``); None: no clip stops a gradient
    (REINFORCE; CISPO's clip bounds a detached weight; SAPO's gate is smooth)."""


CLIP = ("eps_low", "eps_high")
PG_VARIANTS = {
    "reinforce": Variant(reinforce_loss, (), None, None),
    "rloo": Variant(rloo_loss, CLIP, None, ClipRange("sequence_sum", 0.2, 0.2)),
    "grpo": Variant(grpo_variant_loss, CLIP, sequence_mean, ClipRange("token", 0.2, 0.2)),
    "dr_grpo": Variant(dr_grpo_loss, CLIP + ("max_length",), constant_mean, ClipRange("token", 0.2, 0.2)),
    "dapo": Variant(dapo_loss, CLIP, token_mean, ClipRange("token", 0.2, 0.28)),
    "gspo": Variant(gspo_loss, CLIP, None, ClipRange("sequence", 3e-4, 4e-4)),
    "cispo": Variant(cispo_loss, CLIP, token_mean, None),
    "sapo": Variant(sapo_loss, (), sequence_mean, None),
}
"""Each variant's surrogate, the settings it takes, how it averages its KL term and its clip (defaults as in its
surrogate's signature: tests/test_algos_atlas.py checks that they agree)."""


def unused_settings(name: str, eps_low: float | None = None, eps_high: float | None = None,
                    beta: float = 0.0) -> list[str]:
    """The settings given (not None, beta not 0) that variant ``name`` does not have; [] when all are used."""
    variant = PG_VARIANTS[name]
    given = {"eps_low": eps_low is not None, "eps_high": eps_high is not None, "beta": beta != 0}
    has = set(variant.settings) | ({"beta"} if variant.kl_mean else set())
    return [key for key, is_set in given.items() if is_set and key not in has]


def check_pg_inputs(logp_new, logp_old, advantages, mask, beta: float = 0.0, ref_logp=None) -> None:
    """The checks every ``PG_LOSSES`` entry makes once: [B, T] log-probs and mask, [B] advantages, no NaN on a valid
    token, beta >= 0 with a [B, T] ``ref_logp`` when beta > 0."""
    if logp_new.ndim != 2 or not (logp_new.shape == logp_old.shape == mask.shape) \
            or advantages.shape != logp_new.shape[:1]:
        raise ValueError(f"need logp_new, logp_old, mask [B, T] and advantages [B]; got {tuple(logp_new.shape)}, "
                         f"{tuple(logp_old.shape)}, {tuple(mask.shape)}, {tuple(advantages.shape)}")
    valid = mask.bool()
    if torch.isnan(logp_new[valid]).any() or torch.isnan(logp_old[valid]).any() or torch.isnan(advantages).any():
        raise ValueError("logp_new, logp_old or advantages contain NaN on a valid token: check the forward pass")
    if not beta >= 0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    if beta > 0 and (ref_logp is None or ref_logp.shape != logp_new.shape):
        raise ValueError("beta > 0 needs ref_logp with the same [B, T] shape as logp_new")


def pg_loss(name: str, logp_new, logp_old, advantages, mask, *, eps_low: float | None = None,
            eps_high: float | None = None, beta: float = 0.0, ref_logp: torch.Tensor | None = None,
            max_length: int | None = None, **own) -> torch.Tensor:
    """``PG_LOSSES[name]``: variant ``name``'s surrogate plus beta * k3(pi || pi_ref) (GRPO, arXiv 2402.03300, Eq. 4).

    Args:
        logp_new: [B, T] log-probs under the current policy (carries the gradient); logp_old: [B, T] under the
            sampling policy; advantages: [B] (the variant's ``PG_ADVANTAGES``); mask: [B, T] 1 on valid tokens.
        eps_low, eps_high: the clip; None keeps the variant's own. beta, ref_logp: the KL term (ref_logp [B, T]).
        max_length: the generation budget (Dr. GRPO's constant; the others do not read it).
        own: a setting only this variant's surrogate takes (SAPO's ``tau_pos``, ``tau_neg``), passed on.

    Returns:
        Scalar tensor. A setting the variant does not have raises ValueError, as does a bad input.
    """
    unused = unused_settings(name, eps_low=eps_low, eps_high=eps_high, beta=beta)
    if unused:
        raise ValueError(f"the {name} loss has no {' or '.join(unused)}: leave it unset (its KL, if any, belongs in "
                         "the reward) or pick a variant that has it")
    check_pg_inputs(logp_new, logp_old, advantages, mask, beta=beta, ref_logp=ref_logp)
    variant = PG_VARIANTS[name]
    given = {"eps_low": eps_low, "eps_high": eps_high, "max_length": max_length}
    loss = variant.surrogate(logp_new, logp_old, advantages, mask, **own,
                             **{k: v for k, v in given.items() if k in variant.settings and v is not None})
    if beta > 0:  # k3 on the valid tokens only (selected before its exp), averaged as the surrogate
        loss = loss + beta * variant.kl_mean(kl_k3(logp_new, ref_logp.detach(), mask), mask, max_length)
    return loss


def pg_clip(name: str, eps_low: float | None = None, eps_high: float | None = None) -> ClipRange | None:
    """Variant ``name``'s gradient-stopping clip with the given bounds (None keeps its own); None if it has none."""
    clip = PG_VARIANTS[name].clip
    if clip is None:
        return None
    return clip._replace(eps_low=clip.eps_low if eps_low is None else eps_low,
                         eps_high=clip.eps_high if eps_high is None else eps_high)


PG_ADVANTAGES = {
    "reinforce": batch_mean_advantages,
    "rloo": leave_one_out_advantages,
    "grpo": group_std_advantages,
    "dr_grpo": group_mean_advantages,
    "dapo": group_std_advantages,
    "gspo": group_std_advantages,
    "cispo": group_std_advantages,
    "sapo": group_std_advantages,
}

PG_LOSSES = {name: partial(pg_loss, name) for name in PG_VARIANTS}
"""``PG_LOSSES[name](logp_new, logp_old, advantages, mask, eps_low=None, eps_high=None, beta=0.0, ref_logp=None,
max_length=None)`` -> scalar: :func:`pg_loss` for that variant."""
