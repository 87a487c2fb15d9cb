"""PPO's clipped surrogate as a function of the ratio, the adaptive-KL rule, and a toy bandit to compare them on.

The toy (clearly a toy, not an LLM): a contextual bandit with S contexts and K actions, a tabular softmax
policy, and rewards R[s, a] + N(0, noise^2). One-step episodes make the advantage exact to compute against an
oracle baseline V(s) = sum_a pi_old(a|s) R[s, a], so the only thing that differs between runs is the policy
update: PPO-clip (``rlprep.algos.ppo.ppo_clip_loss``, PPO Eq. 7), the adaptive KL penalty to the OLD policy
(PPO Eq. 8: beta halves when d < d_targ / 1.5 and doubles when d > 1.5 d_targ), or no constraint. Exact
quantities (expected reward, KL between old and new policy) are computed over all actions.

Schulman et al. 2017, "Proximal Policy Optimization Algorithms", arXiv 1707.06347.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


def surrogate_curve(ratios, advantage: float, clip_eps: float) -> dict[str, np.ndarray]:
    """L^CLIP per sample against the ratio, computed with the reference ``ppo_clip_loss`` (one token per row).

    Args:
        ratios: [N] ratios rho = pi_theta / pi_old > 0.
        advantage: the advantage A (same for every row).
        clip_eps: epsilon.

    Returns:
        {"ratio", "unclipped" rho A, "clipped" clip(rho) A, "min" (the PPO objective), "max" (the wrong choice),
         "grad" d min(...) / d rho from autograd through ``ppo_clip_loss``}: each [N].
    """
    from rlprep.algos.ppo import ppo_clip_loss

    ratios = np.asarray(ratios, dtype=np.float64)
    if ratios.ndim != 1 or (ratios <= 0).any():
        raise ValueError("ratios must be a 1-D array of positive numbers")
    logp_new = torch.tensor(np.log(ratios)).unsqueeze(1).requires_grad_(True)  # (N, 1)
    ones = torch.ones_like(logp_new)
    adv = torch.full_like(ones, float(advantage))
    n = len(ratios)
    loss_sum = ppo_clip_loss(logp_new, torch.zeros_like(ones), adv, ones, clip_eps=clip_eps) * n  # sum over rows
    loss_sum.backward()
    # d(-objective)/d logp = -grad_rho * rho  =>  grad_rho = -(d loss / d logp) / rho
    grad = (-logp_new.grad.squeeze(1) / torch.tensor(ratios)).numpy()
    unclipped = ratios * advantage
    clipped = np.clip(ratios, 1 - clip_eps, 1 + clip_eps) * advantage
    per_row = np.array([-float(ppo_clip_loss(logp_new[i:i + 1].detach(), torch.zeros(1, 1, dtype=torch.float64),
                                             adv[i:i + 1], ones[i:i + 1], clip_eps=clip_eps)) for i in range(n)])
    return {"ratio": ratios, "unclipped": unclipped, "clipped": clipped, "min": per_row,
            "max": np.maximum(unclipped, clipped), "grad": grad}


def adaptive_kl_beta(beta: float, kl: float, kl_target: float) -> float:
    """PPO's adaptive KL coefficient (arXiv 1707.06347, Sec. 4): d < d_targ/1.5 -> beta/2; d > 1.5 d_targ -> 2 beta."""
    if beta <= 0 or kl_target <= 0 or kl < 0:
        raise ValueError(f"need beta > 0, kl_target > 0 and kl >= 0; got {beta}, {kl_target}, {kl}")
    if kl < kl_target / 1.5:
        return beta / 2
    if kl > kl_target * 1.5:
        return beta * 2
    return beta


@dataclass
class ToyPPOConfig:
    """One toy-bandit PPO run."""

    method: str = "clip"
    """"clip" (PPO Eq. 7), "adaptive_kl" (PPO Eq. 8, KL to the old policy) or "none" (plain surrogate)."""
    clip_eps: float = 0.2
    """epsilon of the clip range (method "clip")."""
    kl_target: float = 0.01
    """d_targ of the adaptive rule (method "adaptive_kl"); 0.01 was the PPO paper's best on MuJoCo."""
    beta_init: float = 1.0
    """Initial beta of the adaptive rule (the paper: 'the initial value of beta is a hyperparameter but is not important')."""
    ref_kl_coef: float = 0.0
    """Extra RLHF-style penalty beta_ref * KL(pi || pi_ref) to the initial policy (0: off)."""
    iterations: int = 40
    """Rollout + update rounds."""
    batch_size: int = 64
    """Samples per round."""
    minibatch_size: int = 16
    """Samples per gradient step; must divide batch_size."""
    epochs: int = 4
    """Passes over each round's batch."""
    lr: float = 0.1
    """Adam learning rate on the logits."""
    target_kl: float | None = None
    """Early stop inside a round (Stable-Baselines3's rule): once a minibatch's approx_kl, k3 = mean((r - 1) - log r)
    over its samples and measured before its step, exceeds 1.5 * target_kl, skip that step and the rest of the round
    (None: never stop)."""
    n_contexts: int = 8
    """S."""
    n_actions: int = 6
    """K."""
    noise: float = 1.0
    """Std of the reward noise."""
    init_scale: float = 1.0
    """Std of the random initial logits (the 'SFT' policy and pi_ref)."""
    seed: int = 0
    """Seeds the reward table, the initial policy and sampling."""

    def __post_init__(self) -> None:
        if self.method not in ("clip", "adaptive_kl", "none"):
            raise ValueError(f"method must be 'clip', 'adaptive_kl' or 'none', got {self.method!r}")
        if not (self.batch_size >= 1 and 1 <= self.minibatch_size <= self.batch_size
                and self.batch_size % self.minibatch_size == 0):
            raise ValueError(f"minibatch_size ({self.minibatch_size}) must divide batch_size ({self.batch_size})")
        if self.clip_eps <= 0 or self.kl_target <= 0 or self.beta_init <= 0 or self.lr <= 0:
            raise ValueError("clip_eps, kl_target, beta_init and lr must be > 0")
        if self.target_kl is not None and self.target_kl <= 0:
            raise ValueError(f"target_kl must be > 0 or None, got {self.target_kl}")
        if self.iterations < 1 or self.epochs < 1 or self.n_contexts < 1 or self.n_actions < 2:
            raise ValueError("need iterations >= 1, epochs >= 1, n_contexts >= 1, n_actions >= 2")


def _bandit(cfg: ToyPPOConfig):
    gen = torch.Generator().manual_seed(cfg.seed)
    rewards = torch.randn(cfg.n_contexts, cfg.n_actions, generator=gen, dtype=torch.float64)  # (S, K) true means
    init_logits = cfg.init_scale * torch.randn(cfg.n_contexts, cfg.n_actions, generator=gen, dtype=torch.float64)
    return rewards, init_logits, gen


def _kl_rows(logp_a: torch.Tensor, logp_b: torch.Tensor) -> torch.Tensor:
    """KL(a || b) per row of [S, K] log-prob tables. Returns [S]."""
    return (logp_a.exp() * (logp_a - logp_b)).sum(-1)


def run_toy_ppo(cfg: ToyPPOConfig) -> dict[str, np.ndarray]:
    """Train the tabular policy; per-iteration metrics as arrays of length ``iterations`` (plus step 0 for reward).

    Returns:
        {"reward" [I+1] expected reward (exact), "normalized" [I+1] (reward - uniform) / (optimal - uniform),
         "kl_old_new" [I] exact mean KL(pi_old || pi_new) after each round, "kl_ref" [I+1] KL(pi || pi_ref),
         "clipfrac" [I] fraction of sampled ratios outside [1-clip_eps, 1+clip_eps] at the round's last minibatch step,
         "max_ratio" [I], "overshoot" [I] fraction of the round's samples whose ratio, after the round's last step, lies
         past the edge on the side its advantage favours (A > 0 and ratio > 1 + clip_eps, or A < 0 and
         ratio < 1 - clip_eps): samples the clip had stopped pushing that moved past the band anyway,
         "beta" [I] (adaptive_kl: the beta used in that round), "entropy" [I+1] exact mean entropy of the policy over
         contexts (nats), "updates" [I] minibatch steps taken in the round (fewer than
         epochs * batch_size / minibatch_size only when target_kl stopped it)}.
    """
    from rlprep.algos.ppo import ppo_clip_loss

    R, init_logits, gen = _bandit(cfg)
    logits = init_logits.clone().requires_grad_(True)
    ref_logp = torch.log_softmax(init_logits, -1)  # (S, K)
    opt = torch.optim.Adam([logits], lr=cfg.lr)
    uniform, optimal = float(R.mean()), float(R.max(-1).values.mean())

    def expected_reward(lp):
        return float((lp.exp() * R).sum(-1).mean())

    beta = cfg.beta_init
    def entropy(lp):
        return float(-(lp.exp() * lp).sum(-1).mean())

    out = {k: [] for k in ("reward", "kl_old_new", "kl_ref", "clipfrac", "max_ratio", "overshoot", "beta", "entropy",
                           "updates")}
    with torch.no_grad():
        lp0 = torch.log_softmax(logits, -1)
    out["reward"].append(expected_reward(lp0))
    out["kl_ref"].append(float(_kl_rows(lp0, ref_logp).mean()))
    out["entropy"].append(entropy(lp0))
    for _ in range(cfg.iterations):
        with torch.no_grad():
            logp_old_table = torch.log_softmax(logits, -1)  # (S, K)
            s = torch.randint(cfg.n_contexts, (cfg.batch_size,), generator=gen)  # (N,)
            a = torch.multinomial(logp_old_table[s].exp(), 1, generator=gen).squeeze(1)  # (N,)
            r = R[s, a] + cfg.noise * torch.randn(cfg.batch_size, generator=gen, dtype=torch.float64)
            baseline = (logp_old_table.exp() * R).sum(-1)[s]  # (N,) oracle V(s) under pi_old
            adv = r - baseline
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            logp_old = logp_old_table[s, a]  # (N,)
        clipfrac = max_ratio = 0.0
        updates, stop = 0, False
        for _ in range(cfg.epochs):
            perm = torch.randperm(cfg.batch_size, generator=gen)
            for start in range(0, cfg.batch_size, cfg.minibatch_size):
                mb = perm[start:start + cfg.minibatch_size]
                logp_table = torch.log_softmax(logits, -1)  # (S, K)
                logp = logp_table[s[mb], a[mb]]  # (b,)
                ratio = torch.exp(logp - logp_old[mb])
                if cfg.target_kl is not None:
                    with torch.no_grad():
                        log_r = logp - logp_old[mb]
                        approx_kl = float(((log_r.exp() - 1) - log_r).mean())  # k3, before this step
                    if approx_kl > 1.5 * cfg.target_kl:
                        stop = True
                        break
                if cfg.method == "clip":
                    loss = ppo_clip_loss(logp[:, None], logp_old[mb][:, None], adv[mb][:, None],
                                         torch.ones(len(mb), 1), clip_eps=cfg.clip_eps)
                else:
                    loss = -(ratio * adv[mb]).mean()
                    if cfg.method == "adaptive_kl":  # KL(pi_old || pi_theta) at the sampled states, exact over actions
                        loss = loss + beta * _kl_rows(logp_old_table[s[mb]], logp_table[s[mb]]).mean()
                if cfg.ref_kl_coef > 0:
                    loss = loss + cfg.ref_kl_coef * _kl_rows(logp_table[s[mb]], ref_logp[s[mb]]).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                updates += 1
                with torch.no_grad():
                    clipfrac = float(((ratio - 1).abs() > cfg.clip_eps).double().mean())
                    max_ratio = max(max_ratio, float(ratio.max()))
            if stop:
                break
        with torch.no_grad():
            logp_new_table = torch.log_softmax(logits, -1)
            d = float(_kl_rows(logp_old_table[s], logp_new_table[s]).mean())
            ratio_end = torch.exp(logp_new_table[s, a] - logp_old)  # (N,) after the round's last step
            past = ((adv > 0) & (ratio_end > 1 + cfg.clip_eps)) | ((adv < 0) & (ratio_end < 1 - cfg.clip_eps))
        out["beta"].append(beta)
        if cfg.method == "adaptive_kl":
            beta = adaptive_kl_beta(beta, d, cfg.kl_target)
        out["kl_old_new"].append(d)
        out["updates"].append(updates)
        out["entropy"].append(entropy(logp_new_table))
        out["clipfrac"].append(clipfrac)
        out["max_ratio"].append(max_ratio)
        out["overshoot"].append(float(past.double().mean()))
        out["reward"].append(expected_reward(logp_new_table))
        out["kl_ref"].append(float(_kl_rows(logp_new_table, ref_logp).mean()))
    result = {k: np.asarray(v) for k, v in out.items()}
    result["normalized"] = (result["reward"] - uniform) / (optimal - uniform)
    return result
