"""rlprep.trainers.sequences: encoding and log-probs over left-padded rows, checked against rollout.token_logprobs."""

from __future__ import annotations

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from rlprep.rollout import token_logprobs
from rlprep.tinyworld import build_tokenizer
from rlprep.trainers.sequences import completion_logprobs, encode_pairs, logprobs_and_entropy, truncated_rows


@pytest.fixture(scope="module")
def tiny():
    tokenizer = build_tokenizer()
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_positions=32, n_embd=32, n_layer=1, n_head=2,
                                       resid_pdrop=0, embd_pdrop=0, attn_pdrop=0)).eval()
    return model, tokenizer


def test_encode_pairs_left_pads_and_masks_completion_plus_eos(tiny):
    _, tok = tiny
    ids, attn, comp = encode_pairs(tok, ["ab", "abcd"], ["x", "yz"], "cpu")
    assert ids.shape == (2, 7)  # longest row: 4 + 2 + eos
    assert attn.tolist() == [[0, 0, 0, 1, 1, 1, 1], [1] * 7]
    assert comp.tolist() == [[0, 0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 1, 1, 1]]
    assert ids[0, -1] == tok.eos_token_id and tok.decode(ids[1, 4:6]) == "yz"


def test_encode_pairs_truncates_to_max_length_and_rejects_a_prompt_that_fills_it(tiny):
    _, tok = tiny
    ids, attn, comp = encode_pairs(tok, ["abc"], ["defgh"], "cpu", max_length=5)
    assert ids.shape == (1, 5) and comp.sum() == 2 and tok.decode(ids[0]) == "abcde"
    with pytest.raises(ValueError, match="shorten the prompt"):
        encode_pairs(tok, ["abcdef"], ["x"], "cpu", max_length=5)
    with pytest.raises(ValueError, match="one per prompt"):
        encode_pairs(tok, ["a"], ["b", "c"], "cpu")


def test_completion_logprobs_match_token_logprobs_on_left_padded_rows(tiny):
    model, tok = tiny
    ids, attn, comp = encode_pairs(tok, ["a", "abcdef"], ["xyz", "q"], "cpu")
    C = 4
    ours, entropy = completion_logprobs(model, ids, attn, C, with_entropy=True)  # (2, C)
    oracle = token_logprobs(model, ids, attn)[:, -C:]  # (2, C)
    valid = comp[:, -C:].bool()
    torch.testing.assert_close(ours[valid], oracle[valid], atol=1e-5, rtol=1e-5)
    # the padded row scores like the same row alone (position ids come from the mask)
    alone_ids, alone_attn, _ = encode_pairs(tok, ["a"], ["xyz"], "cpu")
    torch.testing.assert_close(ours[0], completion_logprobs(model, alone_ids, alone_attn, C)[0], atol=1e-5, rtol=1e-5)
    assert entropy.shape == (2, C) and bool((entropy >= 0).all())
    assert bool((entropy <= torch.log(torch.tensor(float(len(tok)))) + 1e-4).all())


def test_logprobs_and_entropy_by_hand():
    logits = torch.log(torch.tensor([[[0.5, 0.25, 0.25]]]))  # (1, 1, 3)
    logp, entropy = logprobs_and_entropy(logits, torch.tensor([[1]]))
    torch.testing.assert_close(logp, torch.log(torch.tensor([[0.25]])))
    torch.testing.assert_close(entropy, torch.tensor([[1.5 * torch.log(torch.tensor(2.0)).item()]]))


def test_truncated_rows():
    ids = torch.tensor([[5, 1, 0], [5, 6, 7], [1, 0, 0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 1], [1, 0, 0]])
    assert truncated_rows(ids, mask, eos_id=1).tolist() == [False, True, False]


def test_training_forward_builds_no_kv_cache(tiny):
    """A teacher-forced forward scores every position at once: a KV cache would be built and thrown away."""
    from rlprep.trainers.sequences import forward_logits

    model, tok = tiny
    seen = []
    hook = model.register_forward_pre_hook(lambda mod, args, kwargs: seen.append(kwargs.get("use_cache")),
                                           with_kwargs=True)
    try:
        ids, attn, _ = encode_pairs(tok, ["ab", "abcd"], ["x", "yz"], "cpu")
        forward_logits(model, ids, attn, 3)
    finally:
        hook.remove()
    assert seen == [False]


def test_pad_left_of_pretokenized_rows_equals_encode_pairs(tiny):
    from rlprep.trainers.sequences import pad_id, pad_left, tokenize_pairs

    _, tok = tiny
    prompts, completions = ["ab", "abcd", "x"], ["x", "yz", ""]
    rows, lens = tokenize_pairs(tok, prompts, completions)
    assert rows[1] == tok("abcd", add_special_tokens=False)["input_ids"] + tok("yz", add_special_tokens=False)[
        "input_ids"] + [tok.eos_token_id] and lens == [2, 3, 1]
    order = [2, 0]  # any subset, in any order, pads like encoding those rows directly
    got = pad_left([rows[i] for i in order], [lens[i] for i in order], pad_id(tok), "cpu")
    want = encode_pairs(tok, [prompts[i] for i in order], [completions[i] for i in order], "cpu")
    assert all(torch.equal(g, w) for g, w in zip(got, want))


def test_fused_adamw_takes_the_same_steps_as_the_plain_one():
    from rlprep.trainers.sequences import adamw

    torch.manual_seed(0)
    plain_model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    fused_model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    fused_model.load_state_dict(plain_model.state_dict())
    plain = torch.optim.AdamW(plain_model.parameters(), lr=1e-2, weight_decay=0.0)
    fused = adamw(fused_model.parameters(), lr=1e-2)
    assert fused.defaults["fused"] is True  # this torch has the CPU kernel
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for _ in range(5):
        for model, opt in ((plain_model, plain), (fused_model, fused)):
            opt.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            opt.step()
    for a, b in zip(plain_model.parameters(), fused_model.parameters()):
        assert torch.allclose(a, b, atol=1e-6)
    assert not torch.allclose(plain_model[0].weight, torch.nn.Linear(4, 8).weight)  # it did move
