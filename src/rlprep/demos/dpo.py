"""DPO on a bandit: the derivation of notebook 05 checked numerically (closed-form optimum, implicit reward,
population DPO loss and its minimiser, gradient weights).

A "bandit" here is one prompt with K candidate responses; a policy is a probability vector ``[K]``. Everything
is exact (sums over the K responses, no sampling), so each identity of the derivation can be checked to float
precision. DPO: Rafailov et al. 2023, arXiv 2305.18290 (Eq. 4 optimum, Eq. 5 implicit reward, Eq. 7 loss);
IPO: Azar et al. 2023, arXiv 2310.12036 (deterministic preferences).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from rlprep.algos.dpo import dpo_loss


def _check_bandit(ref_probs: torch.Tensor, rewards: torch.Tensor, beta: float) -> None:
    if ref_probs.ndim != 1 or rewards.shape != ref_probs.shape:
        raise ValueError(f"ref_probs and rewards must both be [K]; got {tuple(ref_probs.shape)}, {tuple(rewards.shape)}")
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    if (ref_probs <= 0).any() or abs(float(ref_probs.sum()) - 1) > 1e-6:
        raise ValueError("ref_probs must be a strictly positive probability vector summing to 1")


def kl_regularized_optimum(ref_probs: torch.Tensor, rewards: torch.Tensor, beta: float) -> torch.Tensor:
    """pi*(y) = pi_ref(y) exp(r(y)/beta) / Z, the maximiser of E_pi[r] - beta KL(pi || pi_ref) (DPO Eq. 4).

    Args:
        ref_probs: [K] reference probabilities. rewards: [K] reward of each response. beta: > 0.

    Returns:
        [K] probabilities (computed as a softmax of log pi_ref + r / beta, stable for small beta).
    """
    _check_bandit(ref_probs, rewards, beta)
    return torch.softmax(ref_probs.log() + rewards / beta, dim=0)


def kl_regularized_objective(pi: torch.Tensor, ref_probs: torch.Tensor, rewards: torch.Tensor, beta: float) -> float:
    """E_{y~pi}[r(y)] - beta KL(pi || pi_ref) for probability vectors ``pi``, ``ref_probs`` and ``rewards`` [K]."""
    _check_bandit(ref_probs, rewards, beta)
    kl = (pi * (pi.clamp_min(1e-30).log() - ref_probs.log())).sum()
    return float((pi * rewards).sum() - beta * kl)


def kl_divergence(pi: torch.Tensor, ref_probs: torch.Tensor) -> float:
    """KL(pi || pi_ref) in nats, exact, for probability vectors [K]."""
    return float((pi * (pi.clamp_min(1e-30).log() - ref_probs.log())).sum())


def implicit_reward(pi: torch.Tensor, ref_probs: torch.Tensor, beta: float) -> torch.Tensor:
    """DPO's implicit reward beta log(pi / pi_ref) [K] (DPO Eq. 5 without the prompt-only beta log Z term)."""
    return beta * (pi.log() - ref_probs.log())


def dpo_population_loss(policy_logits: torch.Tensor, ref_probs: torch.Tensor, rewards: torch.Tensor, beta: float,
                        labels: str = "bt") -> torch.Tensor:
    """The expected DPO loss over pairs (y1, y2) drawn from pi_ref and labelled by the true rewards.

    ``labels="bt"``: y1 is preferred with the Bradley-Terry probability sigma(r1 - r2) (soft labels);
    ``labels="hard"``: the higher-reward response always wins (deterministic preferences, IPO's case).
    Each ordered pair contributes pi_ref(y1) pi_ref(y2) P(y1 > y2) * (-log sigma(beta * margin)), with
    margin = log pi/pi_ref(y1) - log pi/pi_ref(y2), the loss of ``rlprep.algos.dpo.dpo_loss``.

    Args:
        policy_logits: [K] logits of the policy (carries the gradient).
        ref_probs, rewards: [K]. beta: > 0. labels: "bt" or "hard".

    Returns:
        Scalar tensor, the weighted mean over pairs; ln 2 at policy = reference, as for ``dpo_loss``.
    """
    _check_bandit(ref_probs, rewards, beta)
    if labels not in ("bt", "hard"):
        raise ValueError(f"labels must be 'bt' or 'hard', got {labels!r}")
    h = torch.log_softmax(policy_logits, dim=0) - ref_probs.log()  # (K,) log pi / pi_ref
    margin = h.unsqueeze(1) - h.unsqueeze(0)  # (K, K) row i preferred over column j
    diff = rewards.unsqueeze(1) - rewards.unsqueeze(0)  # (K, K)
    p_win = torch.sigmoid(diff) if labels == "bt" else (diff > 0).to(h.dtype)  # (K, K)
    weight = ref_probs.unsqueeze(1) * ref_probs.unsqueeze(0) * p_win  # (K, K)
    return -(weight * F.logsigmoid(beta * margin)).sum() / weight.sum()  # mean over the weighted pairs


def fit_dpo_bandit(ref_probs: torch.Tensor, rewards: torch.Tensor, beta: float, labels: str = "bt",
                   steps: int = 300, lr: float = 0.05) -> tuple[torch.Tensor, list[float]]:
    """Minimise :func:`dpo_population_loss` from pi = pi_ref with Adam; returns (pi [K], loss per step).

    With Bradley-Terry labels the minimiser is the KL-regularised optimum pi_ref exp(r/beta)/Z; with hard labels
    the margins grow without bound (the loss only approaches 0), whatever beta is.
    """
    if steps < 1 or lr <= 0:
        raise ValueError(f"steps must be >= 1 and lr > 0; got {steps}, {lr}")
    logits = ref_probs.log().clone().requires_grad_(True)
    optimizer = torch.optim.Adam([logits], lr=lr)
    losses = []
    for _ in range(steps):
        loss = dpo_population_loss(logits, ref_probs, rewards, beta, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return torch.softmax(logits.detach(), dim=0), losses


def dpo_gradient_weights(margins: torch.Tensor, beta: float) -> torch.Tensor:
    """-B * dL/d(log pi(y_w)) for ``dpo_loss`` at the given margins [B], by autograd.

    The derivation says this equals beta * sigma(-beta * margin): pairs the implicit reward already ranks right
    (large margin) get almost no weight, pairs it ranks wrongly get up to beta.
    """
    if margins.ndim != 1:
        raise ValueError(f"margins must be [B], got {tuple(margins.shape)}")
    pi_c = margins.detach().clone().double().requires_grad_(True)  # log pi(y_w) - ref chosen, ref log-probs 0
    zeros = torch.zeros_like(pi_c)
    loss = dpo_loss(pi_c, zeros.detach(), zeros.detach(), zeros.detach(), beta=beta)
    (grad,) = torch.autograd.grad(loss, pi_c)
    return -grad * margins.numel()


def dpo_optimizer_check(betas=(0.1, 0.5, 1.0), steps: int = 300, lr: float = 0.05) -> list[dict[str, float]]:
    """One preference pair (y_0 ≻ y_1) on a five-response bandit, policy logits from π = π_ref (uniform), trained
    on ``dpo_loss`` with Adam, with RMSprop (the DPO paper's optimizer, arXiv 2305.18290, App. B) and with plain SGD
    at the same learning rate, once per β.

    The gradient at step 0 is β·σ(0)·(∇log π(y_0) − ∇log π(y_1)), proportional to β. Adam divides each coordinate by
    the root of its own squared-gradient average, so its first step is lr·sign(g), the same for every β (up to its
    eps). RMSprop divides by the root of the same running average (no momentum, no bias correction), so its first
    step, lr·g/(sqrt(1 − α)·|g|), is also the same for every β; SGD's is proportional to β. Under Adam β acts through
    saturation: the pair's weight σ(−β·m) stays near
    1/2 until the log-ratio margin m approaches 1/β, so a small β lets m grow much further.

    Returns one row per β: ``adam_first_step``, ``rmsprop_first_step`` and ``sgd_first_step`` (L2 norm of the first
    parameter update),
    ``adam_margin`` (m after ``steps``), ``implicit_margin`` (β·m) and ``pair_weight`` (σ(−β·m)) at the end.
    """
    if steps < 1 or lr <= 0:
        raise ValueError(f"steps must be >= 1 and lr > 0; got {steps}, {lr}")
    ref = torch.log_softmax(torch.zeros(5, dtype=torch.float64), 0)  # (5,) uniform reference

    def train(beta: float, optimizer_cls) -> tuple[float, float]:
        theta = torch.zeros(5, dtype=torch.float64, requires_grad=True)
        optimizer = optimizer_cls([theta], lr=lr)
        first = 0.0
        for step in range(steps):
            logp = torch.log_softmax(theta, 0)  # (5,)
            loss = dpo_loss(logp[:1], logp[1:2], ref[:1], ref[1:2], beta=beta)
            optimizer.zero_grad()
            loss.backward()
            before = theta.detach().clone()
            optimizer.step()
            if step == 0:
                first = float((theta.detach() - before).norm())
        return first, float(theta.detach()[0] - theta.detach()[1])  # the margin: log-softmax's normaliser cancels

    rows = []
    for beta in betas:
        adam_first, margin = train(beta, torch.optim.Adam)
        rmsprop_first, _ = train(beta, torch.optim.RMSprop)
        sgd_first, _ = train(beta, torch.optim.SGD)
        rows.append({"beta": float(beta), "adam_first_step": adam_first, "rmsprop_first_step": rmsprop_first,
                     "sgd_first_step": sgd_first,
                     "adam_margin": margin, "implicit_margin": beta * margin,
                     "pair_weight": float(torch.sigmoid(torch.tensor(-beta * margin)))})
    return rows
