"""Prefix sharing: a repeated prompt encoded once gives the plain forward pass's logits, gradients and samples."""

from __future__ import annotations

import pytest
import torch

from rlprep import prefix_sharing
from rlprep.profiles import get_profile
from rlprep.model_inputs import position_ids_from_mask
from rlprep.rollout import generate
from rlprep.tinyworld import build_tokenizer
from rlprep.tinyworld.model import build_model
from rlprep.trainers.sequences import forward_logits

PROMPTS = ["07+45=", "1+2=", "Review of the lamp:"]  # different lengths -> left padding inside the prompt part
G = 3


@pytest.fixture(scope="module")
def tiny():
    tokenizer = build_tokenizer()
    model = build_model(get_profile("smoke"), tokenizer, seed=0)  # random init, dropout 0
    return model, tokenizer


@pytest.fixture(scope="module")
def grouped(tiny):
    """A GRPO-shaped batch: G sampled completions per prompt, consecutive, some ending early (masked tail)."""
    model, tokenizer = tiny
    model.eval()
    rollout = generate(model, tokenizer, [p for p in PROMPTS for _ in range(G)], max_new_tokens=8, temperature=1.0,
                       seed=3)
    assert not rollout.completion_mask.all(), "the fixture needs a row that stopped early"
    return rollout


def plain_logits(model, ids, mask, C):
    out = model(input_ids=ids, attention_mask=mask, position_ids=position_ids_from_mask(mask), use_cache=False)
    return out.logits[:, -C - 1:-1].float()  # (B, C, V)


def test_repeated_prompts_finds_each_distinct_prompt_and_maps_every_row_to_it():
    ids = torch.tensor([[0, 5, 6], [0, 5, 6], [7, 8, 9], [0, 5, 6], [7, 8, 9]])
    mask = torch.tensor([[0, 1, 1], [0, 1, 1], [1, 1, 1], [0, 1, 1], [1, 1, 1]])
    first, inverse = prefix_sharing.repeated_prompts(ids, mask)
    assert torch.equal(ids[first][inverse], ids)
    assert sorted(first.tolist()) == [0, 2]  # the first row of each prompt
    assert prefix_sharing.repeated_prompts(ids[:3], mask[:3]) is not None
    assert prefix_sharing.repeated_prompts(ids[1:3], mask[1:3]) is None  # no repeat: nothing to share


def test_the_environment_switch_turns_sharing_off(monkeypatch):
    ids, mask = torch.tensor([[5, 6], [5, 6]]), torch.ones(2, 2, dtype=torch.long)
    assert prefix_sharing.repeated_prompts(ids, mask) is not None
    monkeypatch.setenv("RLPREP_PREFIX_SHARING", "0")
    assert prefix_sharing.repeated_prompts(ids, mask) is None


def test_padding_never_matches_a_real_token():
    """[pad=0, 5] and [token 0, 5] are different prompts even though their ids are equal."""
    ids = torch.tensor([[0, 5], [0, 5]])
    mask = torch.tensor([[0, 1], [1, 1]])
    assert prefix_sharing.repeated_prompts(ids, mask) is None


def test_shared_logits_and_gradients_equal_the_plain_forward(tiny, grouped):
    model, _ = tiny
    model.train()
    ids, mask = grouped.input_ids, grouped.attention_mask
    C = grouped.completion_ids.shape[1]
    valid = grouped.completion_mask.bool()  # (B, C): a masked position's logits are never used
    shared = prefix_sharing.completion_logits(model, ids, mask, C)
    assert shared is not None and shared.shape == (len(ids), C, model.config.vocab_size)
    plain = plain_logits(model, ids, mask, C)
    assert torch.allclose(shared[valid], plain[valid], atol=1e-5, rtol=0)
    params = list(model.parameters())
    g_shared = torch.autograd.grad(shared.log_softmax(-1)[valid][:, 3].sum(), params)
    g_plain = torch.autograd.grad(plain.log_softmax(-1)[valid][:, 3].sum(), params)
    for a, b in zip(g_shared, g_plain):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)


def test_forward_logits_encodes_each_prompt_once(tiny, grouped):
    """The trainers' forward runs N prompt rows once, then the B completions: seen by the batch sizes it gets."""
    model, _ = tiny
    ids, mask = grouped.input_ids, grouped.attention_mask
    C = grouped.completion_ids.shape[1]
    seen = []
    hook = model.transformer.wte.register_forward_hook(lambda mod, args, out: seen.append(tuple(args[0].shape)))
    try:
        logits = forward_logits(model, ids, mask, C)
    finally:
        hook.remove()
    P = ids.shape[1] - C
    assert seen == [(len(PROMPTS), P), (len(ids), C - 1)]
    valid = grouped.completion_mask.bool()
    assert torch.allclose(logits[valid], plain_logits(model, ids, mask, C)[valid], atol=1e-5, rtol=0)


def test_one_completion_token_needs_only_the_prompt_pass(tiny, grouped):
    model, _ = tiny
    ids, mask = grouped.input_ids[:, :grouped.prompt_len + 1], grouped.attention_mask[:, :grouped.prompt_len + 1]
    shared = prefix_sharing.completion_logits(model, ids, mask, 1)
    assert torch.allclose(shared, plain_logits(model, ids, mask, 1), atol=1e-5, rtol=0)


def test_no_sharing_with_active_dropout_or_without_repeats(tiny, grouped):
    model, tokenizer = tiny
    ids, mask, C = grouped.input_ids, grouped.attention_mask, grouped.completion_ids.shape[1]
    assert prefix_sharing.completion_logits(model, ids[::G], mask[::G], C) is None  # one row per prompt
    dropped = build_model(get_profile("smoke"), tokenizer, seed=0)
    dropped.config.resid_pdrop = 0.1
    for m in dropped.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.1
    dropped.train()
    assert prefix_sharing.completion_logits(dropped, ids, mask, C) is None  # G masks, not one
    dropped.eval()
    assert prefix_sharing.completion_logits(dropped, ids, mask, C) is not None


def test_sampling_with_a_shared_prompt_draws_the_same_tokens(tiny, monkeypatch):
    model, tokenizer = tiny
    model.eval()
    prompts = [p for p in PROMPTS for _ in range(G)]
    shared = generate(model, tokenizer, prompts, max_new_tokens=8, temperature=1.0, seed=11)
    monkeypatch.setattr(prefix_sharing, "repeated_prompts", lambda ids, mask: None)
    plain = generate(model, tokenizer, prompts, max_new_tokens=8, temperature=1.0, seed=11)
    assert torch.equal(shared.completion_ids, plain.completion_ids)
    assert torch.allclose(shared.logprobs, plain.logprobs, atol=1e-5, rtol=0)
