"""Small exact demonstrations for notebook 06 (GRPO, DAPO, GSPO): credit assignment, the on-policy zero loss,
the entropy mechanism, clip arithmetic, token vs sequence ratios, and a group-sampling bandit.

Papers: GRPO (Shao et al. 2024, arXiv 2402.03300, Eq. 3); GAE (Schulman et al. 2015, arXiv 1506.02438, Eq. 16);
DAPO clip-higher (Yu et al. 2025, arXiv 2503.14476, Sec. 3.1); entropy mechanism (Cui et al. 2025,
arXiv 2505.22617, the covariance form of the entropy change); GSPO (Zheng et al. 2025, arXiv 2507.18071).

Also lab05_grpo's demo helper :func:`ratio_spread`: it takes a few GRPO updates on one batch (through
``GRPOTrainer``) and returns per-token ratios and GSPO's sequence ratios of the same samples (W20).
"""

from __future__ import annotations

from typing import Callable

import torch

from rlprep.algos.grpo import group_advantages, grpo_loss, gspo_sequence_ratio
from rlprep.algos.ppo import compute_gae_tokens
from rlprep.trainers.sequences import softmax_entropy


# ------------------------------------------------------------------------------------------- W09 credit
def two_digit_credit(first_ok: torch.Tensor, second_ok: torch.Tensor, p_first: float, p_second: float,
                     lam: float = 0.0) -> dict[str, torch.Tensor]:
    """Per-token advantages of a group of two-digit answers ``d1 d2 <eos>`` under GRPO and under PPO's GAE.

    The answer is right iff both digits are right; the policy gets digit 1 right with probability ``p_first`` and
    digit 2 with ``p_second``, independently. The critic is exact: V(s_0) = p1 p2 before digit 1,
    V(s_1) = p2 if digit 1 was right else 0, V(s_2) = 1 if both were right else 0 (eos is deterministic).

    Args:
        first_ok, second_ok: [G] bools, which digits each of the G completions got right.
        p_first, p_second: the policy's per-digit success probabilities in (0, 1).
        lam: GAE lambda for the critic's advantages (gamma = 1).

    Returns:
        dict with ``reward`` [G], ``grpo`` [G, 3] (the group advantage broadcast to the 3 tokens) and ``gae``
        [G, 3] (``compute_gae_tokens`` with the exact critic and the reward on the eos token).
    """
    if first_ok.shape != second_ok.shape or first_ok.ndim != 1 or first_ok.numel() < 2:
        raise ValueError("first_ok and second_ok must be [G] with G >= 2")
    if not (0 < p_first < 1 and 0 < p_second < 1):
        raise ValueError(f"p_first and p_second must lie in (0, 1); got {p_first}, {p_second}")
    G = first_ok.numel()
    reward = (first_ok & second_ok).double()  # (G,)
    grpo = group_advantages(reward, G).unsqueeze(1).expand(G, 3)  # (G, 3) one value per answer
    values = torch.stack([torch.full((G,), p_first * p_second, dtype=torch.float64),
                          p_second * first_ok.double(), reward], dim=1)  # (G, 3) V(s_t) before token t
    rewards = torch.zeros(G, 3, dtype=torch.float64)
    rewards[:, 2] = reward  # outcome reward on the eos token
    gae, _ = compute_gae_tokens(rewards, values, torch.ones(G, 3), gamma=1.0, lam=lam)
    return {"reward": reward, "grpo": grpo, "gae": gae}


# ------------------------------------------------------------------------------------------- W11 zero loss
def on_policy_zero_loss(logits: torch.Tensor, rewards_fn, group_size: int, seed: int = 0,
                        aggregation: str = "sequence") -> dict[str, float]:
    """One on-policy GRPO step (mu = 1, beta = 0) of a position-wise softmax policy; returns loss and grad norm.

    The policy samples each of T tokens from ``softmax(logits[t])`` independently (``logits`` [T, V], a leaf
    tensor is made from it). ``rewards_fn(tokens [G, T]) -> [G]`` scores the group. The loss uses
    ``grpo_loss`` with logp_old = logp_new.detach(), so the ratio is exactly 1 in value.

    Returns:
        dict with ``loss`` (0 up to float rounding for ``aggregation="sequence"``), ``grad_norm`` and
        ``reward_std`` (the group's reward spread; 0 means no signal).
    """
    if logits.ndim != 2:
        raise ValueError(f"logits must be [T, V], got {tuple(logits.shape)}")
    theta = logits.detach().clone().double().requires_grad_(True)
    gen = torch.Generator().manual_seed(seed)
    probs = torch.softmax(theta.detach(), dim=-1)  # (T, V)
    tokens = torch.stack([torch.multinomial(probs[t], group_size, replacement=True, generator=gen)
                          for t in range(theta.shape[0])], dim=1)  # (G, T)
    rewards = rewards_fn(tokens).double()  # (G,)
    logp = torch.log_softmax(theta, dim=-1).gather(1, tokens.T).T  # (G, T)
    adv = group_advantages(rewards, group_size)  # (G,)
    loss = grpo_loss(logp, logp.detach(), adv, torch.ones_like(logp), aggregation=aggregation)
    (grad,) = torch.autograd.grad(loss, theta)
    return {"loss": float(loss.detach()), "grad_norm": float(grad.norm()), "reward_std": float(rewards.std())}


# ------------------------------------------------------------------------------------------- W24 entropy
def entropy_change(logits: torch.Tensor, delta_logits: torch.Tensor) -> tuple[float, float]:
    """Exact entropy change H(z + dz) - H(z) of a softmax policy and its first-order form -Cov_{a~pi}(log pi(a), dz_a).

    Derivation: dH/dz_a = -pi_a (log pi_a + H), so dH = -sum_a pi_a (log pi_a - E[log pi]) dz_a
    = -Cov(log pi, dz). For a policy-gradient step on the logits, dz_a = eta pi_a (A_a - E[A]) (vanilla PG) or
    eta A_a (natural PG), giving the -Cov(log pi, A) law of arXiv 2505.22617.

    Args:
        logits, delta_logits: [V].

    Returns:
        (exact, first_order) in nats.
    """
    if logits.shape != delta_logits.shape or logits.ndim != 1:
        raise ValueError("logits and delta_logits must both be [V]")
    z, dz = logits.double(), delta_logits.double()
    logp = torch.log_softmax(z, dim=0)
    pi = logp.exp()
    exact = float(softmax_entropy(z + dz) - softmax_entropy(z))
    cov = float((pi * (logp - (pi * logp).sum()) * (dz - (pi * dz).sum())).sum())
    return exact, -cov


def clip_ceiling(p_old: float, eps_high: float) -> float:
    """The largest probability a positive-advantage token can reach before the clip stops its gradient:
    p_old (1 + eps_high). Not capped at 1, to show when the bound is vacuous (DAPO Sec. 3.1: 0.9 -> 1.08)."""
    if not 0 < p_old <= 1 or eps_high < 0:
        raise ValueError(f"need 0 < p_old <= 1 and eps_high >= 0; got {p_old}, {eps_high}")
    return p_old * (1 + eps_high)


# ------------------------------------------------------------------------------------------- W20 GSPO
def ratio_spread_by_length(lengths, sigma: float = 0.05, n_seqs: int = 2000, clip_eps: float = 0.2,
                           seed: int = 0) -> dict[str, list[float]]:
    """Token-level vs sequence-level importance ratios when each token's log-ratio carries i.i.d. noise.

    Per-token log-ratios log pi_new/pi_old ~ N(0, sigma^2) (a small off-policy drift or a train/inference
    precision mismatch). Token ratios keep spread ~sigma at every length; GSPO's sequence ratio
    (geometric mean, ``gspo_sequence_ratio``) has log-spread sigma / sqrt(|y|).

    Returns:
        dict of lists over ``lengths``: ``token_log_std``, ``seq_log_std`` (std of the log-ratios),
        ``token_clip_frac`` (tokens outside [1 - clip_eps, 1 + clip_eps]) and ``seq_clip_frac`` (sequences outside it).
    """
    if sigma <= 0 or n_seqs < 2:
        raise ValueError(f"sigma must be > 0 and n_seqs >= 2; got {sigma}, {n_seqs}")
    gen = torch.Generator().manual_seed(seed)
    out: dict[str, list[float]] = {k: [] for k in ("token_log_std", "seq_log_std", "token_clip_frac", "seq_clip_frac")}
    for T in lengths:
        log_ratio = sigma * torch.randn(n_seqs, int(T), generator=gen, dtype=torch.float64)  # (S, T)
        logp_old = torch.zeros_like(log_ratio)
        mask = torch.ones_like(log_ratio)
        seq = gspo_sequence_ratio(log_ratio, logp_old, mask)  # (S,)
        tok = log_ratio.exp()
        out["token_log_std"].append(float(log_ratio.std()))
        out["seq_log_std"].append(float(seq.log().std()))
        out["token_clip_frac"].append(float(((tok < 1 - clip_eps) | (tok > 1 + clip_eps)).double().mean()))
        out["seq_clip_frac"].append(float(((seq < 1 - clip_eps) | (seq > 1 + clip_eps)).double().mean()))
    return out


# ------------------------------------------------------------------------------------------- W08 / W10 bandit
def group_bandit(correct: torch.Tensor, ref_probs: torch.Tensor, steps: int = 60, n_prompts: int = 8,
                 group_size: int = 8, lr: float = 0.3, beta: float = 0.0, eps_low: float = 0.2,
                 eps_high: float = 0.2, num_iterations: int = 1, seed: int = 0) -> dict[str, list[float]]:
    """GRPO on a one-state bandit: V answers, ``correct`` [V] marks the right ones (reward 1, else 0).

    Each step samples ``n_prompts`` groups of ``group_size`` answers from softmax(theta), computes group
    advantages and takes ``num_iterations`` SGD steps on ``grpo_loss`` (token aggregation, optional beta * k3
    to the reference). Returns per-step lists: ``entropy`` (nats), ``accuracy`` (exact P(correct)),
    ``frac_zero_std_groups`` and ``kl_ref`` (exact KL(pi || pi_ref), nats).
    """
    if correct.shape != ref_probs.shape or correct.ndim != 1:
        raise ValueError("correct and ref_probs must both be [V]")
    if steps < 1 or group_size < 2 or num_iterations < 1:
        raise ValueError("need steps >= 1, group_size >= 2, num_iterations >= 1")
    gen = torch.Generator().manual_seed(seed)
    ref_logp = ref_probs.double().log()
    theta = ref_logp.clone().requires_grad_(True)
    optimizer = torch.optim.SGD([theta], lr=lr)
    hist: dict[str, list[float]] = {k: [] for k in ("entropy", "accuracy", "frac_zero_std_groups", "kl_ref")}
    ok = correct.double()
    for _ in range(steps):
        with torch.no_grad():
            logp_all = torch.log_softmax(theta, 0)
            pi = logp_all.exp()
            actions = torch.multinomial(pi, n_prompts * group_size, replacement=True, generator=gen)  # (N*G,)
            rewards = ok[actions]
            grouped = rewards.view(n_prompts, group_size)  # (N, G)
            hist["entropy"].append(float(-(pi * logp_all).sum()))
            hist["accuracy"].append(float((pi * ok).sum()))
            hist["frac_zero_std_groups"].append(float((grouped.max(1).values == grouped.min(1).values).double().mean()))
            hist["kl_ref"].append(float((pi * (logp_all - ref_logp)).sum()))
            adv = group_advantages(rewards, group_size)
            old = logp_all[actions].unsqueeze(1)  # (N*G, 1) one "token" per answer
        for _ in range(num_iterations):
            logp = torch.log_softmax(theta, 0)[actions].unsqueeze(1)  # (N*G, 1)
            loss = grpo_loss(logp, old, adv, torch.ones_like(logp), eps_low=eps_low, eps_high=eps_high, beta=beta,
                             ref_logp=ref_logp[actions].unsqueeze(1) if beta > 0 else None)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return hist


# --- lab05_grpo demo helpers -------------------------------------------------------------------------

def ratio_spread(policy, tokenizer, task, config, *, group_advantages: Callable | None = None,
                 grpo_loss: Callable | None = None, kl_k3: Callable | None = None, n_updates: int = 4,
                 seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``n_updates`` GRPO gradient steps on one sampled batch, then the ratios against the sampling policy.

    The batch is sampled, prepared and updated by a ``GRPOTrainer`` (``sample``, ``prepare``, ``update``: the
    package's one GRPO loop), with the batch's log-probs under the sampling policy as ``logp_old``.

    Args:
        policy, tokenizer, task: the arithmetic policy (trained in place: pass a copy), its tokenizer and task.
        config: a ``GRPOConfig`` (prompts_per_step, group_size, max_new_tokens, temperature, lr, eps_low/high,
            scale_rewards, aggregation, max_grad_norm are used; no KL, no dynamic sampling).
        group_advantages, grpo_loss, kl_k3: the functions to use (default: the references); ``kl_k3`` only feeds
            the trainer's logs (accepted so a lab can pass the same dict of functions everywhere).
        n_updates: gradient steps on the batch (>= 1; more steps = more off-policy = wider spread).

    Returns:
        ``(token_ratios [n_valid_tokens], sequence_ratios [n_rows_with_a_valid_token])``, both detached, on CPU.
    """
    from dataclasses import replace

    from rlprep.trainers.grpo import GRPOTrainer
    from rlprep.trainers.sequences import completion_logprobs

    if n_updates < 1:
        raise ValueError(f"n_updates must be >= 1, got {n_updates}")
    cfg = replace(config, num_iterations=n_updates, beta=0.0, log_kl=False, dynamic_sampling=False,
                  mask_truncated=False, eval_size=1, seed=seed, run_dir=None)
    trainer = GRPOTrainer(cfg, policy, tokenizer, task, group_advantages=group_advantages, grpo_loss=grpo_loss,
                          kl_k3=kl_k3)
    prompts = [ex.prompt for ex in task.sample(cfg.prompts_per_step, split="train", seed=seed)]
    batch = trainer.prepare(*trainer.sample(prompts, seed=seed))
    ids, attn, mask, C = batch["input_ids"], batch["attention_mask"], batch["mask"], batch["C"]
    with torch.no_grad():
        batch["logp_old"] = completion_logprobs(trainer.policy, ids, attn, C)  # (B, C) the sampling policy
    for _ in range(n_updates):
        trainer.update(batch)
    with torch.no_grad():
        new = completion_logprobs(trainer.policy, ids, attn, C)  # (B, C)
        token_ratios = torch.exp(new - batch["logp_old"])[mask.bool()]  # (n_valid,)
        rows = mask.sum(-1) > 0  # (B,)
        seq_ratios = gspo_sequence_ratio(new, batch["logp_old"], mask)[rows]  # (n_rows,)
    return token_ratios.float().cpu(), seq_ratios.float().cpu()
