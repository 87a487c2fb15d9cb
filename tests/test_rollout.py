"""Rollouts: the sampler's log-probs equal teacher-forced log-probs, masks stop at eos, bad input is named."""

from __future__ import annotations

import inspect

import pytest
import torch

from rlprep.profiles import get_profile
from rlprep.model_inputs import kv_cache_name, position_ids_from_mask
from rlprep.rollout import generate, token_logprobs
from rlprep.tinyworld import build_tokenizer
from rlprep.tinyworld.model import build_model

PROMPTS = ["07+45=", "1+2=", "Review of the lamp:", "x", "find 0-31\n"]  # mixed lengths -> left padding


@pytest.fixture(scope="module")
def tiny():
    tokenizer = build_tokenizer()
    model = build_model(get_profile("smoke"), tokenizer, seed=0).eval()  # random init: a flat, hard case
    return model, tokenizer


def test_teacher_forced_logprobs_equal_the_samplers(tiny):
    model, tokenizer = tiny
    rollout = generate(model, tokenizer, PROMPTS, max_new_tokens=12, temperature=1.0, seed=1)
    assert rollout.input_ids.shape[1] > rollout.prompt_len + 1
    with torch.no_grad():
        scored = token_logprobs(model, rollout.input_ids, rollout.attention_mask)  # (B, L-1)
    completion_scores = scored[:, rollout.prompt_len - 1:] * rollout.completion_mask  # (B, C)
    assert torch.allclose(completion_scores, rollout.logprobs, atol=1e-5, rtol=0)


def test_left_padding_does_not_change_a_rows_logprobs(tiny):
    model, tokenizer = tiny
    ids = tokenizer(["12+34=46", "Review of the desk: it is good."], add_special_tokens=False)["input_ids"]
    short, long = ids
    padded = torch.tensor([[0] * (len(long) - len(short)) + short, long])
    mask = torch.tensor([[0] * (len(long) - len(short)) + [1] * len(short), [1] * len(long)])
    with torch.no_grad():
        alone = token_logprobs(model, torch.tensor([short]), torch.ones(1, len(short), dtype=torch.long))
        batched = token_logprobs(model, padded, mask)
        # The bug this guards against: a forward pass without position ids shifts the padded row.
        naive = model(input_ids=padded, attention_mask=mask).logits.log_softmax(-1)[0, :-1]
    start = len(long) - len(short)
    assert torch.allclose(batched[0, start:], alone[0], atol=1e-5)
    naive_short = naive[start:].gather(-1, torch.tensor(short[1:])[:, None]).squeeze(-1)
    assert not torch.allclose(naive_short, alone[0], atol=1e-3)


def test_position_ids_number_real_tokens_from_zero():
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    assert position_ids_from_mask(mask).tolist() == [[0, 0, 0, 1, 2], [0, 1, 2, 3, 4]]


def test_masks_stop_at_eos_and_texts_drop_it(tiny):
    model, tokenizer = tiny
    eos = tokenizer.eos_token_id
    with torch.no_grad():  # make eos likely so that rows end at different steps
        model.transformer.wte.weight[eos] += 0.6 * model.transformer.wte.weight.abs().mean()
    try:
        rollout = generate(model, tokenizer, ["a", "bb", "ccc"] * 12, max_new_tokens=30, temperature=1.0, seed=0)
    finally:
        with torch.no_grad():
            model.transformer.wte.weight[eos] -= 0.6 * model.transformer.wte.weight.abs().mean()
    ended = 0
    for row, mask, logp, text in zip(rollout.completion_ids.tolist(), rollout.completion_mask.tolist(),
                                     rollout.logprobs.tolist(), rollout.texts):
        length = sum(mask)
        assert mask == [1] * length + [0] * (len(mask) - length)  # one contiguous block from the start
        if eos in row[:length]:
            ended += 1
            assert row.index(eos) == length - 1  # the mask includes eos, nothing after it
            assert all(t == tokenizer.pad_token_id for t in row[length:])
        assert all(lp == 0.0 for lp, m in zip(logp, mask) if not m)
        assert all(lp < 0.0 for lp, m in zip(logp, mask) if m)
        assert text == tokenizer.decode(row[:length], skip_special_tokens=True)
    assert 0 < ended < len(rollout.texts)
    tail = rollout.attention_mask[:, rollout.prompt_len:]
    assert torch.equal(tail, rollout.completion_mask)


def test_seeded_sampling_is_reproducible(tiny):
    model, tokenizer = tiny
    a = generate(model, tokenizer, PROMPTS, max_new_tokens=8, seed=7)
    b = generate(model, tokenizer, PROMPTS, max_new_tokens=8, seed=7)
    c = generate(model, tokenizer, PROMPTS, max_new_tokens=8, seed=8)
    assert torch.equal(a.completion_ids, b.completion_ids) and a.texts == b.texts
    assert not torch.equal(a.completion_ids, c.completion_ids)


def test_greedy_picks_the_argmax(tiny):
    model, tokenizer = tiny
    rollout = generate(model, tokenizer, PROMPTS[:3], max_new_tokens=5, temperature=0.0)
    with torch.no_grad():
        pos = position_ids_from_mask(rollout.attention_mask)
        logits = model(input_ids=rollout.input_ids, attention_mask=rollout.attention_mask, position_ids=pos).logits
    predicted = logits[:, rollout.prompt_len - 1:-1].argmax(-1)  # (B, C)
    m = rollout.completion_mask.bool()
    assert torch.equal(predicted[m], rollout.completion_ids[m])


def test_bad_input_is_a_clear_value_error(tiny):
    model, tokenizer = tiny
    with pytest.raises(ValueError, match="prompts is empty"):
        generate(model, tokenizer, [], max_new_tokens=4)
    with pytest.raises(ValueError, match="n_positions"):
        generate(model, tokenizer, ["x" * (model.config.n_positions - 2)], max_new_tokens=4)
    with pytest.raises(ValueError, match="list of strings"):
        generate(model, tokenizer, "07+45=", max_new_tokens=4)
    with pytest.raises(ValueError, match="empty"):
        generate(model, tokenizer, ["07+45=", ""], max_new_tokens=4)
    with pytest.raises(ValueError, match=r"\[B, L\]"):
        token_logprobs(model, torch.zeros(5, dtype=torch.long), torch.ones(5, dtype=torch.long))


def test_left_padded_prompts_get_the_same_greedy_answers():
    """A trained policy answers a 2-digit sum the same whether or not longer prompts pad it on the left."""
    from rlprep.tinyworld import get_task, load_policy

    model, tokenizer = load_policy("arithmetic", "smoke")  # cached by the first test that needs it
    short = [e.prompt for e in get_task("arithmetic").sample(32, "test", seed=5)]
    long = [e.prompt for e in get_task("arithmetic").sample(32, "test", seed=5, level=5)]  # 3-digit: 2 more chars
    alone = generate(model, tokenizer, short, max_new_tokens=5, temperature=0.0).texts
    mixed = generate(model, tokenizer, [p for pair in zip(short, long) for p in pair], max_new_tokens=5,
                     temperature=0.0).texts[::2]
    assert mixed == alone


def test_kv_cache_keyword_follows_the_installed_transformers(tiny):
    """transformers 5.20+ names the KV cache `cache`, 5.17 (the GPU image's) `past_key_values`; the sampler must
    pass and read the one this model's forward takes, also through a DDP-style wrapper."""

    class Old(torch.nn.Module):
        def forward(self, input_ids=None, past_key_values=None, use_cache=None):
            return input_ids

    class New(torch.nn.Module):
        def forward(self, input_ids=None, cache=None, use_cache=None):
            return input_ids

    class Wrapper(torch.nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

        def forward(self, *args, **kwargs):
            return self.module(*args, **kwargs)

    assert kv_cache_name(Old()) == "past_key_values" and kv_cache_name(Wrapper(Old())) == "past_key_values"
    assert kv_cache_name(New()) == "cache" and kv_cache_name(Wrapper(New())) == "cache"
    model, _ = tiny
    assert kv_cache_name(model) in inspect.signature(model.forward).parameters


def test_rows_that_emitted_eos_leave_the_batch_and_the_rest_score_as_before(tiny):
    """Compaction: once a row has emitted eos the sampler stops computing it (model.generate keeps it as padding);
    the remaining rows' positions and KV cache must still be theirs, so their log-probs equal teacher forcing."""
    model, tokenizer = tiny
    eos = tokenizer.eos_token_id
    batch_sizes = []
    hook = model.register_forward_pre_hook(lambda mod, args, kwargs: batch_sizes.append(kwargs["input_ids"].shape[0]),
                                           with_kwargs=True)
    with torch.no_grad():  # make eos likely so that rows end at different steps
        model.transformer.wte.weight[eos] += 0.6 * model.transformer.wte.weight.abs().mean()
    try:
        rollout = generate(model, tokenizer, ["a", "bb", "ccc", "07+45="] * 6, max_new_tokens=20, temperature=1.0,
                           seed=3)
        hook.remove()
        with torch.no_grad():
            scored = token_logprobs(model, rollout.input_ids, rollout.attention_mask)  # (B, L-1)
    finally:
        hook.remove()
        with torch.no_grad():
            model.transformer.wte.weight[eos] -= 0.6 * model.transformer.wte.weight.abs().mean()
    alive_at_step = [int(rollout.completion_mask[:, t].sum()) for t in range(rollout.completion_mask.shape[1])]
    # the first forward encodes the 4 distinct prompts once (prefix sharing); each later one sees exactly the rows
    # still sampling
    assert batch_sizes == [4] + alive_at_step[1:]
    assert batch_sizes[-1] < len(rollout.input_ids)  # rows did leave
    completion_scores = scored[:, rollout.prompt_len - 1:] * rollout.completion_mask  # (B, C)
    assert torch.allclose(completion_scores, rollout.logprobs, atol=1e-5, rtol=0)
