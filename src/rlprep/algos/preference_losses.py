"""The preference-optimisation atlas: DPO and the variants interviewers compare it with, chosen by name (bank A09-A15).

``PREFERENCE_LOSSES[name]`` is a small function of [B] per-sequence tensors with one naming convention, so a trainer
can fill them from one dict of tensors (:func:`preference_loss`):

- ``policy_chosen_logps``, ``policy_rejected_logps``: [B] log pi_theta(y|x), sums over completion tokens
  (``rlprep.algos.dpo.sequence_logprobs``); they carry the gradient;
- ``ref_chosen_logps``, ``ref_rejected_logps``: [B] the same under the frozen reference (constants);
- ``chosen_lengths``, ``rejected_lengths``: [B] completion token counts |y| (for the length-normalised losses);
- ``chosen_nll``: scalar mean negative log-likelihood of the chosen completions (ORPO's SFT term).

KTO is unpaired and takes its own tensors (one completion per row, a desirable flag, mismatched KL pairs).
Margins below: h = (log pi(y_w) - log ref(y_w)) - (log pi(y_l) - log ref(y_l)), DPO's implicit reward margin / beta.
"""

from __future__ import annotations

import inspect

import torch
import torch.nn.functional as F

from rlprep.algos.dpo import dpo_loss


def _margin(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps) -> torch.Tensor:
    """h = chosen log-ratio - rejected log-ratio, [B]; checks four [B] tensors of one shape."""
    shapes = {tuple(t.shape) for t in (policy_chosen_logps, policy_rejected_logps, ref_chosen_logps,
                                       ref_rejected_logps)}
    if len(shapes) != 1 or len(next(iter(shapes))) != 1:
        raise ValueError(f"the four log-prob tensors must be [B] with one B; got {sorted(shapes)}")
    return (policy_chosen_logps - ref_chosen_logps.detach()) - (policy_rejected_logps - ref_rejected_logps.detach())


def _per_token(logps: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """[B] summed log-probs / [B] lengths (clamped at 1): the average log-prob per token."""
    if lengths.shape != logps.shape:
        raise ValueError(f"lengths {tuple(lengths.shape)} must match the log-probs {tuple(logps.shape)}")
    return logps / lengths.to(logps.dtype).clamp(min=1.0)


def ipo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_lengths,
             rejected_lengths, beta: float = 0.1) -> torch.Tensor:
    """IPO (Azar et al. 2023, arXiv 2310.12036), its sampled loss: mean (h - 1/(2 tau))^2 with tau = beta.

    A squared loss pulls the margin to a finite target 1/(2 beta) instead of pushing it to infinity, so IPO does not
    overfit deterministic preferences the way DPO's sigmoid does. As TRL 1.16's ``loss_type="ipo"``, each log-ratio is
    divided by its completion length (TRL confirmed this with the authors); lengths of 1 give the paper's loss on sums.

    Args:
        the four [B] log-prob sums; chosen_lengths, rejected_lengths: [B] token counts. beta: tau > 0.

    Returns:
        Scalar tensor.
    """
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    tensors = (policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, chosen_lengths,
               rejected_lengths)
    if len({tuple(t.shape) for t in tensors}) != 1 or policy_chosen_logps.ndim != 1:
        raise ValueError(f"the four log-prob sums and the two lengths must be [B] with one B; "
                         f"got {[tuple(t.shape) for t in tensors]}")
    chosen_len = chosen_lengths.to(policy_chosen_logps.dtype).clamp(min=1.0)  # (B,)
    rejected_len = rejected_lengths.to(policy_rejected_logps.dtype).clamp(min=1.0)  # (B,)
    chosen = (policy_chosen_logps - ref_chosen_logps.detach()) / chosen_len  # (B,) log-ratio per token
    rejected = (policy_rejected_logps - ref_rejected_logps.detach()) / rejected_len  # (B,)
    return ((chosen - rejected - 1 / (2 * beta)) ** 2).mean()


def hinge_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
               beta: float = 0.1) -> torch.Tensor:
    """RSO's hinge (Liu et al. 2023, arXiv 2309.06657) on DPO's log-ratios, after SLiC-HF's: mean relu(1 - beta h).

    SLiC-HF's calibration loss is max(0, delta - log pi(y_w|x) + log pi(y_l|x)); TRL 1.16's ``loss_type="hinge"``
    measures the margin against the reference and sets delta = 1/beta, scaled by beta. Pairs already separated by the
    margin pass no gradient (unlike DPO, whose sigmoid never saturates to exactly 0).

    Args:
        the four [B] log-prob sums. beta: 1 / margin, > 0.

    Returns:
        Scalar tensor.
    """
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    h = _margin(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps)  # (B,)
    return torch.relu(1 - beta * h).mean()


def robust_dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps,
                    beta: float = 0.1, label_smoothing: float = 0.1) -> torch.Tensor:
    """Robust DPO, rDPO (Chowdhury et al. 2024, arXiv 2403.00409): DPO de-biased for labels flipped with rate eps.

    mean [(1 - eps) * -log sigma(beta h) - eps * -log sigma(-beta h)] / (1 - 2 eps). Its expectation under random
    flips equals the DPO loss on clean labels. ``label_smoothing`` is eps in [0, 0.5); eps = 0 is DPO. Equals TRL
    1.16's ``loss_type="robust"``.

    Args:
        the four [B] log-prob sums. beta > 0; label_smoothing: the assumed flip rate.

    Returns:
        Scalar tensor.
    """
    if beta <= 0 or not 0 <= label_smoothing < 0.5:
        raise ValueError(f"need beta > 0 and 0 <= label_smoothing < 0.5, got {beta}, {label_smoothing}")
    h = _margin(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps)  # (B,)
    clean = -F.logsigmoid(beta * h)  # loss if the label is right
    flipped = -F.logsigmoid(-beta * h)  # loss if it is flipped
    return ((1 - label_smoothing) * clean - label_smoothing * flipped).mean() / (1 - 2 * label_smoothing)


def simpo_loss(policy_chosen_logps, policy_rejected_logps, chosen_lengths, rejected_lengths, beta: float = 2.0,
               gamma: float = 0.5) -> torch.Tensor:
    """SimPO (Meng et al. 2024, arXiv 2405.14734): mean -log sigma(beta/|y_w| log pi(y_w|x) - beta/|y_l| log pi(y_l|x) - gamma).

    No reference model: the implicit reward is the average log-prob per token (the quantity generation ranks by),
    and the target margin gamma asks the chosen to win by at least gamma. Length normalisation stops the policy
    from winning by writing longer. Equals TRL 1.16's CPOTrainer ``loss_type="simpo"`` (``simpo_gamma = gamma``).

    Args:
        policy_chosen_logps, policy_rejected_logps: [B] sums; chosen_lengths, rejected_lengths: [B] token counts.
        beta > 0; gamma: target reward margin.

    Returns:
        Scalar tensor.
    """
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    tensors = (policy_chosen_logps, policy_rejected_logps, chosen_lengths, rejected_lengths)
    if len({tuple(t.shape) for t in tensors}) != 1 or policy_chosen_logps.ndim != 1:
        raise ValueError(f"the two log-prob sums and the two lengths must be [B] with one B; "
                         f"got {[tuple(t.shape) for t in tensors]}")
    chosen = policy_chosen_logps / chosen_lengths.to(policy_chosen_logps.dtype).clamp(min=1.0)  # (B,) average log-prob
    rejected = policy_rejected_logps / rejected_lengths.to(policy_rejected_logps.dtype).clamp(min=1.0)  # (B,)
    return -F.logsigmoid(beta * (chosen - rejected) - gamma).mean()


def orpo_loss(policy_chosen_logps, policy_rejected_logps, chosen_lengths, rejected_lengths, chosen_nll,
              lam: float = 0.1) -> torch.Tensor:
    """ORPO (Hong et al. 2024, arXiv 2403.07691): L_SFT + lambda * L_OR, L_OR = -log sigma(log odds(y_w) / odds(y_l)).

    odds(y|x) = P(y|x) / (1 - P(y|x)) with P the average per-token probability exp(log pi / |y|); log odds =
    a - log(1 - e^a) for a = the average log-prob. No reference model and no separate SFT stage: the NLL term
    teaches the chosen answers while the odds-ratio term pushes the rejected ones down. Equals TRL 1.16's ORPOTrainer
    (``beta = lam``), whose NLL runs over prompt and chosen tokens.

    Args:
        policy_chosen_logps, policy_rejected_logps: [B] sums; chosen_lengths, rejected_lengths: [B] token counts.
        chosen_nll: scalar mean NLL of the chosen sequences. lam: weight of the odds-ratio term.

    Returns:
        Scalar tensor.
    """
    chosen = _per_token(policy_chosen_logps, chosen_lengths)  # (B,) a_w < 0
    rejected = _per_token(policy_rejected_logps, rejected_lengths)
    if (chosen >= 0).any() or (rejected >= 0).any():
        raise ValueError("average log-probs must be < 0 (a probability of 1 has infinite odds)")
    log_odds = (chosen - rejected) - (torch.log(-torch.expm1(chosen)) - torch.log(-torch.expm1(rejected)))  # (B,)
    return chosen_nll - lam * F.logsigmoid(log_odds).mean()


def kto_loss(policy_logps, ref_logps, desirable, policy_kl_logps, ref_kl_logps, beta: float = 0.1,
             desirable_weight: float = 1.0, undesirable_weight: float = 1.0) -> torch.Tensor:
    """KTO (Ethayarajh et al. 2024, arXiv 2402.01306, the KTO loss): a prospect-theory value of each completion.

    r = log pi(y|x) - log ref(y|x); z0 = max(0, mean over mismatched pairs (x, y') of log pi(y'|x) - log ref(y'|x)),
    detached (a batch estimate of KL(pi || ref)). Loss per row: w_D (1 - sigma(beta (r - z0))) if y is desirable,
    w_U (1 - sigma(beta (z0 - r))) if not; mean over rows. Needs only thumbs-up / thumbs-down labels, no pairs.
    Equals TRL 1.16's KTOTrainer ``loss_type="kto"``.

    Args:
        policy_logps, ref_logps: [B] sums over each row's completion. desirable: [B] bool.
        policy_kl_logps, ref_kl_logps: [B'] the same for mismatched (prompt, completion) pairs.
        beta > 0; desirable_weight, undesirable_weight: lambda_D, lambda_U.

    Returns:
        Scalar tensor.
    """
    if policy_logps.shape != ref_logps.shape or desirable.shape != policy_logps.shape or policy_logps.ndim != 1:
        raise ValueError(f"policy_logps, ref_logps and desirable must be [B]; got {tuple(policy_logps.shape)}, "
                         f"{tuple(ref_logps.shape)}, {tuple(desirable.shape)}")
    z0 = (policy_kl_logps - ref_kl_logps).mean().detach().clamp(min=0)  # scalar reference point
    r = policy_logps - ref_logps.detach()  # (B,)
    good = desirable.bool()
    losses = torch.where(good, desirable_weight * (1 - torch.sigmoid(beta * (r - z0))),
                         undesirable_weight * (1 - torch.sigmoid(beta * (z0 - r))))  # (B,)
    return losses.mean()


PREFERENCE_LOSSES = {
    "dpo": dpo_loss,
    "ipo": ipo_loss,
    "hinge": hinge_loss,
    "robust_dpo": robust_dpo_loss,
    "simpo": simpo_loss,
    "kto": kto_loss,
    "orpo": orpo_loss,
}


def preference_loss(name: str, tensors: dict, **hyper) -> torch.Tensor:
    """``PREFERENCE_LOSSES[name]`` called with the tensors its signature names, taken from ``tensors``.

    Args:
        name: a key of PREFERENCE_LOSSES. tensors: name -> tensor, any superset of what the loss takes
            (parameters without a default). hyper: the loss's scalar keyword arguments (beta, gamma, ...).

    Returns:
        Scalar tensor.
    """
    if name not in PREFERENCE_LOSSES:
        raise ValueError(f"unknown preference loss {name!r}; choose one of {sorted(PREFERENCE_LOSSES)}")
    fn = PREFERENCE_LOSSES[name]
    needed = [p.name for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty]
    missing = [key for key in needed if key not in tensors]
    if missing:
        raise ValueError(f"{name} needs {missing}; got {sorted(tensors)}")
    return fn(**{key: tensors[key] for key in needed}, **hyper)
