"""Multi-turn policy gradient (GRPO-style, critic-free) on the guess-the-number environment.

One step:

1. play ``targets_per_step`` hidden numbers, ``group_size`` episodes each, with the current policy;
2. per-turn rewards from a reward spec (``{"outcome": 1.0, "halving": 0.2}``; see ``episodes.REWARD_TERMS``);
3. advantages, by ``credit``:
   - ``"trajectory"``: GRPO's outcome supervision (Shao et al. 2024, arXiv 2402.03300, Sec. 4.1.2): the
     episode's total return, normalised within its group (``rlprep.algos.grpo.group_advantages``), broadcast to
     every action token of every turn;
   - ``"turn"``: per-turn credit. Turn k gets its reward-to-go G_k = Σ_{j≥k} r_j minus the mean G_k of the
     group's episodes that reached turn k (a per-turn baseline), divided by the batch std. A turn is credited
     only with what happened from it onwards (REINFORCE with reward-to-go, Williams 1992);
4. one gradient step over **action tokens only** (observation tokens are masked out), through
   ``rlprep.trainers.grpo_update.grpo_update``, the update every GRPO loop of the package shares:
   ``grpo_loss`` (``rlprep.algos.grpo``) with per-token advantages ``[B, T]`` and token aggregation,
   Σ_t m_t·(−ρ_t A_t) / Σ_t m_t, then a clipped AdamW step.

Metrics per step (flat, namespaced; a :class:`~rlprep.live.History` like every GRPO run): ``reward/proxy`` (mean
return under the spec), ``reward/gold`` (success rate of the batch), ``stats/turns``, ``stats/valid_actions``,
``loss/policy``, ``stats/grad_norm`` and the other :func:`~rlprep.trainers.grpo_update.update_stats`.
"""

from __future__ import annotations

import copy
import random
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from rlprep.agentic.episodes import (Episode, TranscriptBatch, broadcast_turn_values, check_reward_spec, play,
                                     reward_matrix, transcript_batch)
from rlprep.algos.grpo import group_advantages, grpo_loss
from rlprep.algos.pg_losses import pg_clip
from rlprep.live import History, run_steps
from rlprep.profiles import Profile, ProfileConfig
from rlprep.trainers.grpo_update import grpo_update
from rlprep.trainers.sequences import completion_logprobs

CREDITS = ("trajectory", "turn")


@dataclass
class AgenticConfig(ProfileConfig):
    """Budget and knobs of one multi-turn run. ``AgenticConfig.for_profile("cpu")`` gives the notebook defaults."""

    steps: int = 10
    """Policy-gradient steps (each plays a fresh batch of episodes)."""
    targets_per_step: int = 8
    """Distinct hidden numbers per step (N)."""
    group_size: int = 8
    """Episodes per hidden number (G >= 2): the group is the baseline."""
    max_turns: int = 6
    """Guesses allowed per episode (binary search needs at most 6 for 0..31)."""
    reward: dict[str, float] = field(default_factory=lambda: {"outcome": 1.0})
    """Per-turn reward spec ``{term: weight}`` over ``episodes.REWARD_TERMS``."""
    credit: str = "turn"
    """``"trajectory"`` (GRPO: one advantage per episode) or ``"turn"`` (reward-to-go with a per-turn baseline)."""
    lr: float = 5e-4
    """AdamW learning rate (constant)."""
    temperature: float = 1.0
    """Sampling temperature of the rollouts."""
    max_grad_norm: float = 1.0
    """Gradient clipping threshold (the pre-clip norm is logged)."""
    adv_eps: float = 1e-4
    """Added to stds before dividing advantages."""
    seed: int = 0
    """Seeds targets, sampling and torch."""
    target_seeds: tuple[int, ...] | None = None
    """Train on these hidden-number seeds only (cycled), instead of fresh random targets each step."""

    def checks(self) -> list[tuple[bool, str]]:
        return [
            (self.steps >= 0, f"steps must be >= 0, got {self.steps}"),
            (self.targets_per_step >= 1, f"targets_per_step must be >= 1, got {self.targets_per_step}"),
            (self.group_size >= 2, f"group_size must be >= 2 (a group of 1 has no baseline), got {self.group_size}"),
            (self.max_turns >= 1, f"max_turns must be >= 1, got {self.max_turns}"),
            (self.credit in CREDITS, f"credit must be one of {CREDITS}, got {self.credit!r}"),
            (self.lr > 0, f"lr must be > 0, got {self.lr}"),
            (self.temperature > 0, f"temperature must be > 0, got {self.temperature}"),
            (self.max_grad_norm > 0, f"max_grad_norm must be > 0, got {self.max_grad_norm}"),
            (self.target_seeds is None or len(self.target_seeds) >= 1, "target_seeds must be None or non-empty"),
        ]

    def __post_init__(self) -> None:
        super().__post_init__()
        try:
            self.reward = check_reward_spec(self.reward)
        except ValueError as err:
            raise ValueError(f"AgenticConfig.reward: {err}") from None

    @property
    def batch_size(self) -> int:
        """Episodes per step: N * G."""
        return self.targets_per_step * self.group_size

    @classmethod
    def budget(cls, p: Profile) -> dict:
        """smoke: a few steps (CI seconds); cpu: the runs the notebooks quote; gpu: more and bigger batches."""
        if p.name == "smoke":
            base = dict(steps=6, targets_per_step=4, group_size=8)
        elif p.name == "cpu":
            base = dict(steps=40, targets_per_step=8, group_size=8)
        else:
            base = dict(steps=100, targets_per_step=32, group_size=16)
        return base


# ------------------------------------------------------------------------------------------------ credit
def trajectory_advantages(rewards: torch.Tensor, turn_mask: torch.Tensor, group_size: int,
                          eps: float = 1e-4) -> torch.Tensor:
    """GRPO outcome supervision: the group-normalised episode return, copied to every turn.

    Args:
        rewards: [B, K] per-turn rewards (0 past the end); B = N*G, groups consecutive.
        turn_mask: [B, K] 1 where the episode had turn k.

    Returns:
        [B, K] advantages, 0 on turns that did not happen.
    """
    returns = (rewards * turn_mask).sum(dim=1)  # (B,)
    adv = group_advantages(returns, group_size, scale="group", eps=eps)  # (B,)
    return adv.unsqueeze(1) * turn_mask  # (B, K)


def turn_advantages(rewards: torch.Tensor, turn_mask: torch.Tensor, group_size: int,
                    eps: float = 1e-4) -> torch.Tensor:
    """Per-turn credit: reward-to-go minus a per-turn group baseline, scaled by the batch std.

    G_{i,k} = Σ_{j≥k} r_{i,j}; b_{g,k} = mean of G_{·,k} over the episodes of group g that reached turn k;
    A_{i,k} = (G_{i,k} − b_{g,k}) / (std of the valid A + eps). An episode alone at turn k in its group gets 0
    there (no baseline to compare with).

    Args:
        rewards: [B, K]; turn_mask: [B, K]; B = N*G with groups consecutive.

    Returns:
        [B, K] advantages, 0 where turn_mask is 0.
    """
    if rewards.shape != turn_mask.shape or rewards.ndim != 2 or rewards.shape[0] % group_size:
        raise ValueError(f"need rewards and turn_mask [N*G, K] with G = group_size; got {tuple(rewards.shape)}, "
                         f"{tuple(turn_mask.shape)}, group_size={group_size}")
    r = rewards * turn_mask
    to_go = r.flip(1).cumsum(1).flip(1) * turn_mask  # (B, K) reward-to-go, 0 on missing turns
    B, K = r.shape
    g_to_go = to_go.view(-1, group_size, K)  # (N, G, K)
    g_mask = turn_mask.view(-1, group_size, K)  # (N, G, K)
    count = g_mask.sum(dim=1, keepdim=True)  # (N, 1, K)
    baseline = g_to_go.sum(dim=1, keepdim=True) / count.clamp(min=1)  # (N, 1, K)
    centred = ((g_to_go - baseline) * g_mask * (count > 1)).view(B, K)  # (B, K)
    valid = turn_mask.bool()
    std = centred[valid].std(unbiased=True) if valid.sum() > 1 else torch.tensor(1.0)
    return centred / (std + eps)


ADVANTAGES = {"trajectory": trajectory_advantages, "turn": turn_advantages}
"""Credit-assignment rules, keyed by ``AgenticConfig.credit``."""


def action_logprobs(model, batch: TranscriptBatch, token_advantages: torch.Tensor):
    """``(logp, mask, advantages)``, each ``[B, C]`` over the last C tokens of the rows, from the first action token
    of any row on: log-probs under ``model`` (with grad), the action mask (observations are 0) and the tokens'
    advantages. The log-probs are the trainers' teacher-forced path (``trainers.sequences.completion_logprobs``: bf16
    autocast on CUDA; the first L - C tokens, the opening observation a group shares, encoded once)."""
    L = batch.input_ids.shape[1]
    acted = batch.action_mask.bool()  # (B, L)
    first = int(acted.float().argmax(dim=1)[acted.any(dim=1)].min()) if acted.any() else 1  # earliest action token
    C = L - max(first, 1)  # position 0 has no next-token prediction
    logp = completion_logprobs(model, batch.input_ids, batch.attention_mask, C)  # (B, C): log p(token t)
    return logp, batch.action_mask[:, -C:].float(), token_advantages[:, -C:]  # (B, C) each


def policy_loss(model, batch: TranscriptBatch, token_advantages: torch.Tensor) -> torch.Tensor:
    """On-policy clipped surrogate over action tokens (ratio = 1 in value, gradient = REINFORCE).

    Args:
        batch: transcripts [B, L] with ``action_mask``.
        token_advantages: [B, L] advantage of each token (0 on observations).

    Returns:
        Scalar loss = Σ_t m_t · (−ρ_t A_t) / Σ_t m_t over action tokens t (``grpo_loss``, token aggregation).
    """
    logp, mask, adv = action_logprobs(model, batch, token_advantages)  # (B, C) each
    return grpo_loss(logp, logp.detach(), adv, mask, aggregation="token")


# ------------------------------------------------------------------------------------------------ loop
def episode_stats(episodes: list[Episode], spec: dict[str, float]) -> dict[str, float]:
    """Proxy return, gold success and behaviour statistics of a batch of episodes."""
    rewards, turn_mask = reward_matrix(episodes, spec)
    n_steps = sum(ep.n_turns for ep in episodes)
    return {
        "reward/proxy": float((rewards * turn_mask).sum(1).mean()),
        "reward/gold": float(np.mean([ep.success for ep in episodes])),
        "stats/turns": n_steps / len(episodes),
        "stats/valid_actions": sum(s.valid for ep in episodes for s in ep.steps) / max(1, n_steps),
    }


def train(config: AgenticConfig, model, tokenizer, *, callback=None) -> tuple[object, History]:
    """Train a copy of ``model`` with multi-turn policy gradient; the input model is not modified.

    Args:
        config: the run's :class:`AgenticConfig`.
        model, tokenizer: the warm-started policy (``load_policy("multiturn")``).
        callback: optional ``f(step, row)`` called after each step (e.g. to print or plot).

    Returns:
        ``(trained_model, history)``; the history holds one row per step (``step`` = 1, 2, ...). A KeyboardInterrupt
        ends the run after the step in flight and keeps what was trained (``history.interrupted``).
    """
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    policy = copy.deepcopy(model)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=config.lr, weight_decay=0.0)

    def step_fn(step: int) -> dict:
        if config.target_seeds:
            pool, n = config.target_seeds, config.targets_per_step
            targets = [pool[((step - 1) * n + j) % len(pool)] for j in range(n)]
        else:
            targets = [rng.randrange(10**8) for _ in range(config.targets_per_step)]
        seeds = [t for t in targets for _ in range(config.group_size)]  # groups consecutive
        policy.eval()
        episodes = play(policy, tokenizer, seeds, max_turns=config.max_turns, temperature=config.temperature,
                        sample_seed=config.seed * 100003 + step - 1)
        rewards, turn_mask = reward_matrix(episodes, config.reward)  # (B, K)
        turn_adv = ADVANTAGES[config.credit](rewards, turn_mask, config.group_size, config.adv_eps)  # (B, K)
        batch = transcript_batch(tokenizer, episodes, max_len=policy.config.n_positions)  # (B, L <= n_positions)
        policy.train()
        logp, mask, adv = action_logprobs(policy, batch, broadcast_turn_values(turn_adv, batch.turn_index))
        update = grpo_update(policy, optimizer, logp, logp.detach(), adv, mask, aggregation="token",
                             clip=pg_clip("grpo"), max_grad_norm=config.max_grad_norm)
        return {**episode_stats(episodes, config.reward), **update}

    history = run_steps(step_fn, config.steps, model=policy, desc=f"agentic credit={config.credit}", live=False,
                        callbacks=[lambda step, row, _history: callback(step, row)] if callback else (),
                        history=History(meta={"config": asdict(config), "trainer": "agentic"}), start_step=1)
    policy.eval()
    return policy, history


def evaluate(model, tokenizer, *, n: int = 128, max_turns: int = 6, temperature: float = 1.0, seed: int = 12345,
             spec: dict[str, float] | None = None, context_window: int | None = None) -> dict[str, float]:
    """Sampled play on ``n`` held-out targets (seeds >= 10**9, never used in training): success rate and turns."""
    episodes = play(model, tokenizer, [10**9 + seed + i for i in range(n)], max_turns=max_turns,
                    temperature=temperature, sample_seed=seed, context_window=context_window)
    return episode_stats(episodes, spec or {"outcome": 1.0})
