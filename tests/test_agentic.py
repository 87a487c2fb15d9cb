"""Multi-turn agentic RL: observation masks, per-turn credit, reward terms, and a seeded run that improves."""

from __future__ import annotations

import math
import random

import pytest
import torch

from rlprep.agentic.episodes import (Episode, broadcast_turn_values, compact_context, reward_matrix,
                                     scripted_episode, step_env, transcript_batch)
from rlprep.agentic.train import AgenticConfig, policy_loss, trajectory_advantages, turn_advantages
from rlprep.algos.grpo import group_advantages
from rlprep.tinyworld import build_tokenizer
from rlprep.tinyworld.tasks.multiturn import GuessNumberEnv


def _target(seed: int) -> int:
    return random.Random(seed).randint(0, 31)


def binary_search_episode(seed: int, max_turns: int = 6) -> Episode:
    env = GuessNumberEnv(max_turns=max_turns)
    env.reset(seed)
    episode = Episode(seed=seed, turns=list(env.turns))
    while not env.done:
        episode.steps.append(step_env(env, f"guess {(env.low + env.high) // 2}"))
        episode.turns = list(env.turns)
    return episode


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


def test_action_mask_covers_exactly_the_policys_tokens(tokenizer):
    episodes = [binary_search_episode(3), scripted_episode(5, ["guess 0", "gues 9", 31])]
    batch = transcript_batch(tokenizer, episodes)
    for b, ep in enumerate(episodes):
        ids = batch.input_ids[b]
        acted = tokenizer.decode(ids[batch.action_mask[b].bool()].tolist())
        expected = "".join(s.action + tokenizer.eos_token for s in ep.steps)
        assert acted.replace(" ", "") == expected.replace(" ", ""), "action mask must select action text + eos"
        observed = tokenizer.decode(ids[(batch.action_mask[b] == 0) & (batch.attention_mask[b] == 1)].tolist())
        assert observed == "".join(t.text for t in ep.turns if t.role == "obs"), "observations must be unmasked 0"
        turns = batch.turn_index[b][batch.action_mask[b].bool()].unique().tolist()
        assert turns == list(range(ep.n_turns)), "every action token is labelled with its turn 0..K-1"
        assert (batch.turn_index[b][batch.action_mask[b] == 0] == -1).all()


def test_a_transcript_longer_than_the_model_is_cut_at_its_context(tokenizer):
    """Six invalid actions that use the whole 9-token budget (sampling stops before eos, the transcript adds it) make
    10 + 6 x (10 + 10) = 130 tokens: a 128-position model crashed in training on such a run. The batch is cut at
    ``max_len``, and nothing before the cut changes."""
    from rlprep.agentic.episodes import MAX_ACTION_TOKENS

    episode = scripted_episode(4, ["gues i=gu"[:MAX_ACTION_TOKENS]] * 6)
    full = transcript_batch(tokenizer, [episode])
    assert full.input_ids.shape[1] == 130 and episode.n_turns == 6
    assert full.action_mask[0, 128:].sum() == 0  # only the last observation lies past the context
    cut = transcript_batch(tokenizer, [episode], max_len=128)
    assert cut.input_ids.shape[1] == 128
    for name in ("input_ids", "attention_mask", "action_mask", "turn_index"):
        assert torch.equal(getattr(cut, name), getattr(full, name)[:, :128]), name
    assert torch.equal(transcript_batch(tokenizer, [episode], max_len=1000).input_ids, full.input_ids)


def test_loss_ignores_observation_tokens_and_matches_hand_formula(tokenizer):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=128, n_embd=16, n_layer=1, n_head=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    model = GPT2LMHeadModel(config)
    batch = transcript_batch(tokenizer, [binary_search_episode(1), binary_search_episode(2)])
    adv = broadcast_turn_values(torch.tensor([[0.5, -1.0, 2.0, 0.3, 0.1, 0.0]] * 2), batch.turn_index)
    loss = policy_loss(model, batch, adv)
    poisoned = adv + 1e6 * (batch.action_mask == 0)  # huge advantages on observation tokens only
    assert torch.allclose(policy_loss(model, batch, poisoned), loss), "observation tokens leaked into the loss"

    from rlprep.rollout import token_logprobs

    m = batch.action_mask[:, 1:].float()
    assert torch.allclose(loss, -(m * adv[:, 1:]).sum() / m.sum(), atol=1e-6), "on-policy ratio is 1 in value"
    grads = torch.autograd.grad(loss, list(model.parameters()), allow_unused=True)
    logp = token_logprobs(model, batch.input_ids, batch.attention_mask)
    reinforce = -(m * adv[:, 1:] * logp).sum() / m.sum()  # the REINFORCE surrogate
    expected = torch.autograd.grad(reinforce, list(model.parameters()), allow_unused=True)
    for g, e in zip(grads, expected):
        if e is not None:
            assert torch.allclose(g, e, atol=1e-6), "gradient must equal REINFORCE over action tokens"


def test_turn_advantages_match_a_loop():
    torch.manual_seed(1)
    G, K = 4, 5
    rewards = torch.randn(2 * G, K)
    lengths = [5, 3, 1, 4, 2, 2, 5, 3]
    turn_mask = torch.tensor([[1.0] * n + [0.0] * (K - n) for n in lengths])
    got = turn_advantages(rewards, turn_mask, G, eps=0.0)
    centred = torch.zeros(2 * G, K)
    for g in range(2):
        rows = range(g * G, (g + 1) * G)
        for k in range(K):
            present = [i for i in rows if lengths[i] > k]
            to_go = {i: float(rewards[i, k:lengths[i]].sum()) for i in present}
            if len(present) > 1:
                base = sum(to_go.values()) / len(present)
                for i in present:
                    centred[i, k] = to_go[i] - base
    std = centred[turn_mask.bool()].std(unbiased=True)
    assert torch.allclose(got, centred / std, atol=1e-5)
    assert (got[turn_mask == 0] == 0).all()


def test_trajectory_advantages_are_grpo_broadcast():
    rewards = torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    turn_mask = torch.tensor([[1.0, 1, 1], [1, 1, 1], [1, 0, 0], [1, 1, 0]])
    got = trajectory_advantages(rewards, turn_mask, group_size=2)
    expected = group_advantages(torch.tensor([1.0, 0.0, 1.0, 1.0]), 2).unsqueeze(1) * turn_mask
    assert torch.allclose(got, expected)


def test_potential_shaping_telescopes_and_bonus_pays_for_stalling():
    fast = binary_search_episode(7)
    spec = {"potential": 1.0}
    r, m = reward_matrix([fast], spec)
    assert fast.success and math.isclose(float(r.sum()), math.log2(32), rel_tol=1e-9), "Φ(end) − Φ(start) = 5 bits"
    target = _target(7)
    wrong = (target + 16) % 32
    stall = scripted_episode(7, [wrong, wrong, wrong, wrong, wrong, target])
    r_stall, _ = reward_matrix([stall], spec)
    assert stall.success and float(r_stall.sum()) == pytest.approx(math.log2(32)), "stalling earns no extra shaping"
    bonus = {"outcome": 1.0, "per_turn_bonus": 0.3}
    fast_bonus = float(reward_matrix([fast], bonus)[0].sum())
    stall_bonus = float(reward_matrix([stall], bonus)[0].sum())
    if fast.n_turns < stall.n_turns:
        assert stall_bonus > fast_bonus, "the per-turn bonus is gameable: the stalling episode scores higher"


def test_compact_context_keeps_first_observation_and_last_turns():
    ep = binary_search_episode(11)
    turns = ep.turns
    assert compact_context(turns, None) == turns
    kept = compact_context(turns, 1)
    assert kept[0] == turns[0] and kept[1:] == turns[-2:]
    assert compact_context(turns, 0) == turns[:1]
    with pytest.raises(ValueError):
        compact_context(turns, -1)


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="group_size"):
        AgenticConfig(group_size=1)
    with pytest.raises(ValueError, match="unknown reward terms"):
        AgenticConfig(reward={"sucess": 1.0})
    with pytest.raises(ValueError, match="credit"):
        AgenticConfig(credit="token")


def test_seeded_short_run_improves_success_on_its_training_target():
    """'It actually improved': 6 steps on one hidden number raise the sampled success rate and cut the turns.

    At lr 3e-4 the success on the target rose by 0.40-0.64 on four smoke starts (one- and two-thread builds, AVX2 and
    no vector unit); at 1e-3 the steps overshoot and the same run fell from 0.25 to 0 on one start (CI's)."""
    import numpy as np

    from rlprep.agentic.episodes import play
    from rlprep.agentic.train import train
    from rlprep.tinyworld import load_policy

    model, tokenizer = load_policy("multiturn", "smoke")

    def score(policy):
        episodes = play(policy, tokenizer, [1] * 48, sample_seed=99)
        return np.mean([e.success for e in episodes]), np.mean([e.n_turns for e in episodes])

    success_before, turns_before = score(model)
    config = AgenticConfig(steps=6, targets_per_step=1, group_size=16, lr=3e-4, target_seeds=(1,), seed=0)
    trained, history = train(config, model, tokenizer)
    success_after, turns_after = score(trained)
    assert len(history) == 6 and all(np.isfinite(row["loss/policy"]) for row in history)
    assert success_after >= success_before + 0.15, (success_before, success_after)
    assert turns_after < turns_before, (turns_before, turns_after)
    assert all(p_old.data_ptr() != p_new.data_ptr() for p_old, p_new in zip(model.parameters(), trained.parameters()))
