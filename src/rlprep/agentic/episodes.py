"""Multi-turn episodes in the tiny world's guess-the-number environment, and the tensors a policy-gradient step needs.

An episode is a transcript of observation turns (written by the environment) and action turns (written by the
policy). For the loss we need, per episode:

- ``input_ids [B, L]``: the whole transcript, right-padded;
- ``action_mask [B, L]``: 1 on tokens the policy wrote (action text + the eos closing it), 0 on observation
  tokens and padding. Observation tokens carry no decision, so they never enter the policy loss;
- ``turn_index [B, L]``: which turn (0, 1, ...) an action token belongs to, -1 elsewhere; it broadcasts a
  per-turn advantage to that turn's tokens;
- ``rewards [B, K]``: one reward per turn (K = the longest episode), 0 past an episode's end.

Per-turn rewards are sums of named terms (a small registry, :data:`REWARD_TERMS`), so the notebooks can train
the same policy on an outcome-only reward, a process reward, a gameable per-turn bonus (W19) or its
potential-based fix by changing one dict.

``context_window`` compacts the history the policy sees: with ``m`` only the first observation and the last
``m`` (action, observation) pairs stay in the prompt, older turns are dropped (a lossy compaction, W18).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch

from rlprep.tinyworld.tasks.multiturn import GuessNumberEnv, Turn, render_transcript, transcript_text

MAX_ACTION_TOKENS = 9
"""Token budget of one action ("guess 31" is 8 characters, plus eos)."""


@dataclass(frozen=True)
class Step:
    """One turn of an episode: what the policy did and what it changed."""

    action: str
    """The action text as sampled (eos removed)."""
    observation: str
    """The environment's reply, e.g. ": higher\\n"."""
    valid: bool
    """The action parsed as "guess N"."""
    success: bool
    """This guess found the number (the episode ends here)."""
    interval_before: tuple[int, int]
    """(low, high): the numbers still consistent with earlier observations, before this guess."""
    interval_after: tuple[int, int]
    """The same interval after this guess's observation ((n, n) on success)."""
    halving: float
    """The environment's own process signal: 1.0 when the guess was within one of the interval's midpoint."""


@dataclass
class Episode:
    """A played episode: its full transcript, its steps, and the context the policy saw before each action."""

    seed: int
    """Seed of the hidden number (episodes with the same seed share the target)."""
    turns: list[Turn]
    """Full transcript, observation and action turns alternating."""
    steps: list[Step] = field(default_factory=list)
    """One entry per action."""
    contexts: list[str] = field(default_factory=list)
    """The prompt text the policy was given before each action (compacted when ``context_window`` is set)."""

    @property
    def success(self) -> bool:
        return bool(self.steps) and self.steps[-1].success

    @property
    def n_turns(self) -> int:
        return len(self.steps)


# ------------------------------------------------------------------------------------------------ rewards
def _interval_size(interval: tuple[int, int]) -> int:
    low, high = interval
    return max(1, high - low + 1)


def outcome_reward(step: Step) -> float:
    """1.0 on the turn that finds the number, else 0: the sparse, verifiable outcome."""
    return 1.0 if step.success else 0.0


def halving_reward(step: Step) -> float:
    """The environment's process reward: 1.0 for a guess within one of the feasible interval's midpoint."""
    return step.halving


def per_turn_bonus(step: Step) -> float:
    """1.0 for every valid guess: "the agent made a well-formed tool call". Gameable: longer episodes earn more."""
    return 1.0 if step.valid else 0.0


def potential_progress(step: Step) -> float:
    """Potential-based shaping F = Φ(s') − Φ(s) with Φ(s) = −log2(size of the feasible interval).

    Ng, Harada, Russell 1999 (Policy invariance under reward transformations): with γ = 1 the sum over an
    episode telescopes to Φ(s_end) − Φ(s_0), which leaves the optimal policy unchanged only when Φ is 0 (or one
    constant) on every terminal state. This Φ is not (an episode that ends on a narrower interval earns more), so
    the shaping does pay for narrowing, not only for success. A guess that learns nothing (outside the interval,
    repeated, invalid) earns exactly 0; stalling cannot pay.
    """
    return math.log2(_interval_size(step.interval_before)) - math.log2(_interval_size(step.interval_after))


REWARD_TERMS: dict[str, Callable[[Step], float]] = {
    "outcome": outcome_reward,
    "halving": halving_reward,
    "per_turn_bonus": per_turn_bonus,
    "potential": potential_progress,
}
"""Named per-turn reward terms; a reward spec is a dict ``{name: weight}`` over these."""


def check_reward_spec(spec: dict[str, float]) -> dict[str, float]:
    """Validate a ``{term: weight}`` reward spec; raises ValueError naming the known terms."""
    if not spec:
        raise ValueError(f"the reward spec is empty: give weights for some of {sorted(REWARD_TERMS)}")
    unknown = sorted(set(spec) - set(REWARD_TERMS))
    if unknown:
        raise ValueError(f"unknown reward terms {unknown}: use {sorted(REWARD_TERMS)}")
    return dict(spec)


def step_reward(step: Step, spec: dict[str, float]) -> float:
    """Weighted sum of the spec's terms for one step."""
    return sum(weight * REWARD_TERMS[name](step) for name, weight in spec.items())


def reward_matrix(episodes: list[Episode], spec: dict[str, float]) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-turn rewards ``[B, K]`` and the turn mask ``[B, K]`` (1 where the episode had that turn)."""
    spec = check_reward_spec(spec)
    K = max(1, max(ep.n_turns for ep in episodes))
    rewards = torch.zeros(len(episodes), K)
    mask = torch.zeros(len(episodes), K)
    for b, ep in enumerate(episodes):
        for k, step in enumerate(ep.steps):
            rewards[b, k] = step_reward(step, spec)
            mask[b, k] = 1.0
    return rewards, mask


# ------------------------------------------------------------------------------------------------ rollout
def compact_context(turns: list[Turn], window: int | None) -> list[Turn]:
    """The turns the policy is shown: all of them (``window=None``) or the first observation plus the last
    ``window`` (action, observation) pairs. Dropped turns are gone: nothing summarises them."""
    if window is None:
        return list(turns)
    if window < 0:
        raise ValueError(f"context_window must be >= 0 or None, got {window}")
    first, rest = turns[:1], turns[1:]
    kept = rest[len(rest) - 2 * window:] if window > 0 else []
    return first + kept


@torch.no_grad()
def play(model, tokenizer, seeds: list[int], *, max_turns: int = 6, temperature: float = 1.0,
         sample_seed: int | None = None, context_window: int | None = None) -> list[Episode]:
    """Play one episode per seed, all batched turn by turn, and record every step.

    Args:
        model, tokenizer: the policy (``load_policy("multiturn")``); put the model in eval mode first.
        seeds: hidden-number seeds, one episode each (repeat a seed to get a group with one target).
        max_turns: guesses allowed per episode.
        temperature: sampling temperature (1.0 = the policy's own distribution, as the policy gradient assumes).
        sample_seed: seeds the token sampling (None: fresh randomness).
        context_window: None = the policy sees the full history; m = first observation + last m turns.

    Returns:
        One :class:`Episode` per seed, in order.
    """
    from rlprep.rollout import generate

    if max_turns < 1:
        raise ValueError(f"max_turns must be >= 1, got {max_turns}")
    envs = [GuessNumberEnv(max_turns=max_turns) for _ in seeds]
    episodes = []
    for env, seed in zip(envs, seeds):
        env.reset(seed)
        episodes.append(Episode(seed=seed, turns=list(env.turns)))
    for turn in range(max_turns):
        live = [i for i, env in enumerate(envs) if not env.done]
        if not live:
            break
        contexts = [transcript_text(compact_context(envs[i].turns, context_window), tokenizer.eos_token) for i in live]
        seed = None if sample_seed is None else sample_seed * 1000 + turn
        rollout = generate(model, tokenizer, contexts, max_new_tokens=MAX_ACTION_TOKENS, temperature=temperature,
                           seed=seed)
        for i, context, text in zip(live, contexts, rollout.texts):
            episodes[i].steps.append(step_env(envs[i], text))
            episodes[i].contexts.append(context)
            episodes[i].turns = list(envs[i].turns)
    return episodes


def step_env(env: GuessNumberEnv, action_text: str) -> Step:
    """Apply one action to ``env`` and record it as a :class:`Step` (the interval before and after included)."""
    before = (env.low, env.high)
    observation, _, _, info = env.step(action_text)
    after = (info["target"], info["target"]) if info["success"] else (env.low, env.high)
    return Step(action=action_text.strip(), observation=observation, valid=bool(info["valid"]),
                success=bool(info["success"]), interval_before=before, interval_after=after,
                halving=float(info["process_reward"]))


def scripted_episode(seed: int, guesses: list[int | str], max_turns: int = 6) -> Episode:
    """An episode played by a script instead of a policy (for tests and worked examples).

    ``guesses`` are numbers (sent as "guess N") or raw action strings; play stops when the episode ends.
    """
    env = GuessNumberEnv(max_turns=max_turns)
    env.reset(seed)
    episode = Episode(seed=seed, turns=list(env.turns))
    for guess in guesses:
        if env.done:
            break
        action = f"guess {guess}" if isinstance(guess, int) else guess
        episode.contexts.append(transcript_text(env.turns, "<eos>"))
        episode.steps.append(step_env(env, action))
        episode.turns = list(env.turns)
    return episode


# ------------------------------------------------------------------------------------------------ tensors
@dataclass
class TranscriptBatch:
    """Right-padded transcripts with the masks the loss needs. ``L`` = longest transcript in tokens."""

    input_ids: torch.Tensor
    """[B, L] token ids (pad = eos id beyond each row's length)."""
    attention_mask: torch.Tensor
    """[B, L] 1 on real tokens."""
    action_mask: torch.Tensor
    """[B, L] 1 on tokens the policy wrote (action + closing eos), 0 on observations and padding."""
    turn_index: torch.Tensor
    """[B, L] long: turn k of an action token, -1 on observation tokens and padding."""


def transcript_batch(tokenizer, episodes: list[Episode], max_len: int | None = None) -> TranscriptBatch:
    """Render each episode's transcript with :func:`render_transcript` and stack, right-padded.

    ``max_len`` (the model's ``n_positions``) cuts each transcript there, since a model cannot score tokens past its
    context. Six invalid turns that each use the whole action budget make 10 + 6 x (10 + 10) = 130 tokens; what
    lies past 128 is the last observation, which no loss reads.
    """
    rows, masks, turn_rows = [], [], []
    for ep in episodes:
        ids, mask = render_transcript(tokenizer, ep.turns)
        if max_len is not None:
            ids, mask = ids[:max_len], mask[:max_len]
        turn_of_token, k, previous = [], -1, 0
        for m in mask:  # a new run of action tokens starts a new turn
            if m == 1 and previous == 0:
                k += 1
            turn_of_token.append(k if m == 1 else -1)
            previous = m
        rows.append(ids)
        masks.append(mask)
        turn_rows.append(turn_of_token)
    L = max(len(r) for r in rows)
    B = len(rows)
    input_ids = torch.full((B, L), tokenizer.eos_token_id, dtype=torch.long)
    attention_mask = torch.zeros(B, L, dtype=torch.long)
    action_mask = torch.zeros(B, L, dtype=torch.long)
    turn_index = torch.full((B, L), -1, dtype=torch.long)
    for b, (ids, mask, turns) in enumerate(zip(rows, masks, turn_rows)):
        n = len(ids)
        input_ids[b, :n] = torch.tensor(ids)
        attention_mask[b, :n] = 1
        action_mask[b, :n] = torch.tensor(mask)
        turn_index[b, :n] = torch.tensor(turns)
    return TranscriptBatch(input_ids, attention_mask, action_mask, turn_index)


def broadcast_turn_values(turn_values: torch.Tensor, turn_index: torch.Tensor) -> torch.Tensor:
    """Spread a per-turn quantity ``[B, K]`` to the tokens of each turn: ``[B, L]``, 0 where turn_index is -1."""
    if turn_values.ndim != 2 or turn_index.ndim != 2 or turn_values.shape[0] != turn_index.shape[0]:
        raise ValueError(f"need turn_values [B, K] and turn_index [B, L]; got {tuple(turn_values.shape)}, "
                         f"{tuple(turn_index.shape)}")
    if int(turn_index.max()) >= turn_values.shape[1]:
        raise ValueError("turn_index refers to a turn beyond turn_values' K columns")
    gathered = turn_values.gather(1, turn_index.clamp(min=0))  # (B, L)
    return torch.where(turn_index >= 0, gathered, torch.zeros_like(gathered))
