"""Distillation losses (forward/reverse KL on full-vocabulary logits), the per-position exposure-bias metrics, and
seeded short runs."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from rlprep.distillation import (DistillConfig, agreement_by_position, build_student, completion_logits, distill,
                                 evaluate_student, forward_kl_per_token, reverse_kl_per_token, task_quality, warm_start)


def _probs(logits):
    return [math.exp(x) / sum(math.exp(y) for y in logits) for x in logits]


def test_kl_directions_match_hand_computation():
    # one position, vocabulary of 3: p_T = softmax([2, 0, 0]), q_S = softmax([0, 1, 0])
    t_logits, s_logits = [2.0, 0.0, 0.0], [0.0, 1.0, 0.0]
    p, q = _probs(t_logits), _probs(s_logits)
    fwd = sum(pi * math.log(pi / qi) for pi, qi in zip(p, q))
    rev = sum(qi * math.log(qi / pi) for pi, qi in zip(p, q))
    s = torch.tensor([[s_logits]])  # (1, 1, 3)
    t = torch.tensor([[t_logits]])
    assert forward_kl_per_token(s, t).item() == pytest.approx(fwd, abs=1e-6)
    assert reverse_kl_per_token(s, t).item() == pytest.approx(rev, abs=1e-6)
    assert fwd != pytest.approx(rev, abs=1e-3)  # the two directions differ on this example


def test_kl_invariants_and_shapes():
    g = torch.Generator().manual_seed(0)
    s, t = torch.randn(2, 5, 7, generator=g), torch.randn(2, 5, 7, generator=g)
    for fn in (forward_kl_per_token, reverse_kl_per_token):
        out = fn(s, t)
        assert out.shape == (2, 5)
        assert (out >= -1e-6).all()
        assert fn(s, s + 3.0).abs().max() < 1e-5  # shifting logits leaves the distribution unchanged
    # forward KL(p||q) with the arguments swapped is reverse KL(q||p)
    assert torch.allclose(forward_kl_per_token(s, t), reverse_kl_per_token(t, s), atol=1e-5)
    with pytest.raises(ValueError, match="same"):
        forward_kl_per_token(s, t[:, :4])


def test_reverse_kl_gradient_matches_autograd_of_hand_formula():
    g = torch.Generator().manual_seed(1)
    s = torch.randn(1, 1, 4, generator=g, requires_grad=True)
    t = torch.randn(1, 1, 4, generator=g)
    reverse_kl_per_token(s, t).sum().backward()
    q = torch.softmax(s.detach()[0, 0], -1)
    log_ratio = torch.log_softmax(s.detach()[0, 0], -1) - torch.log_softmax(t[0, 0], -1)
    kl = (q * log_ratio).sum()
    expected = q * (log_ratio - kl)  # d/dz of Σ q log(q/p) w.r.t. the student's logits
    assert torch.allclose(s.grad[0, 0], expected, atol=1e-5)


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="mode"):
        DistillConfig(mode="sideways")
    with pytest.raises(ValueError, match="steps"):
        DistillConfig(steps=0)
    with pytest.raises(ValueError, match="eval_temperature"):
        DistillConfig(eval_temperature=-1.0)


def test_task_quality_per_task_by_hand():
    from rlprep.tinyworld import get_task

    assert task_quality(get_task("arithmetic"), ["07+45=", "3+4="], ["52", "8"]) == {"eval/accuracy": 0.5}
    # " it is good." parses, gold = polarity(good) = 0.6 (no intensifier, under the length budget); junk = -1.5
    q = task_quality(get_task("reviews"), ["Review of the lamp:"] * 2, [" it is good.", " it is goood."])
    assert q["eval/parse_rate"] == 0.5
    assert q["eval/gold_mean"] == pytest.approx((0.6 - 1.5) / 2)
    with pytest.raises(ValueError, match="neither verify"):
        task_quality(object(), ["p"], ["t"])
    with pytest.raises(ValueError, match="one completion per prompt"):
        task_quality(get_task("arithmetic"), ["07+45="], [])


@pytest.fixture(scope="module")
def teacher_student():
    from rlprep.tinyworld import get_task, load_policy

    torch.manual_seed(0)
    teacher, tokenizer = load_policy("arithmetic", "smoke")
    task = get_task("arithmetic")
    student = build_student("smoke", tokenizer, n_layer=1, n_embd=48, seed=0)
    warm_start(student, tokenizer, task, steps=30, batch=32, lr=3e-3)
    return teacher, student, tokenizer, task


def test_completion_logits_predict_completion_tokens(teacher_student):
    from rlprep.rollout import generate, token_logprobs

    teacher, _, tokenizer, _ = teacher_student
    ro = generate(teacher, tokenizer, ["07+45=", "3+4="], max_new_tokens=3, temperature=1.0, seed=0)
    C = ro.completion_ids.shape[1]
    logits = completion_logits(teacher, ro.input_ids, ro.attention_mask, C)  # (B, C, V)
    picked = torch.log_softmax(logits, -1).gather(-1, ro.completion_ids[..., None]).squeeze(-1)
    expected = token_logprobs(teacher, ro.input_ids, ro.attention_mask)[:, -C:]
    mask = ro.completion_mask.bool()
    assert torch.allclose(picked[mask], expected[mask], atol=1e-5)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_seeded_short_run_reduces_divergence(teacher_student, mode):
    teacher, student0, tokenizer, task = teacher_student
    student = copy.deepcopy(student0)
    cfg = DistillConfig(mode=mode, steps=12, batch=32, lr=3e-3, eval_every=12, eval_size=32, seed=0)
    history = distill(student, teacher, tokenizer, task, cfg)
    losses = [r["loss/distill"] for r in history if "loss/distill" in r]
    assert len(losses) == 12
    assert sum(losses[-4:]) / 4 < sum(losses[:4]) / 4  # the chosen KL to the teacher went down
    assert history[-1]["stats/student_tokens"] > 0 and "eval/agree_own_prefix" in history[-1]
    assert all(not p.requires_grad for p in teacher.parameters())


# prompts of three lengths, so rows are left-padded and completions end at different positions
MIXED_PROMPTS = ["3+4=", "07+45=", "123+456=", "9+9=", "50+50=", "999+1="]


def test_agreement_by_position_matches_a_per_row_loop(teacher_student):
    """Oracle: the batched, left-padded computation equals scoring each row alone, unpadded, position by position."""
    from rlprep.rollout import generate

    teacher, student, tokenizer, _ = teacher_student
    ro = generate(student, tokenizer, MIXED_PROMPTS, max_new_tokens=5, temperature=1.0, seed=3)
    got = agreement_by_position(student, teacher, ro)
    C = ro.completion_ids.shape[1]
    tokens, agree, nll, kl = torch.zeros(C), torch.zeros(C), torch.zeros(C), torch.zeros(C)
    with torch.no_grad():
        for b in range(len(MIXED_PROMPTS)):
            prompt = ro.input_ids[b, :ro.prompt_len][ro.attention_mask[b, :ro.prompt_len].bool()]
            n = int(ro.completion_mask[b].sum())
            ids = torch.cat([prompt, ro.completion_ids[b, :n]])[None]  # (1, L) no padding
            s_log = torch.log_softmax(student(input_ids=ids).logits[0, len(prompt) - 1:-1], -1)  # (n, V)
            t_log = torch.log_softmax(teacher(input_ids=ids).logits[0, len(prompt) - 1:-1], -1)  # (n, V)
            for t in range(n):
                tokens[t] += 1
                agree[t] += float(s_log[t].argmax() == t_log[t].argmax())
                nll[t] -= float(t_log[t, ro.completion_ids[b, t]])
                kl[t] += float((t_log[t].exp() * (t_log[t] - s_log[t])).sum())
    assert got["tokens"].tolist() == tokens.tolist()
    assert tokens[0] == len(MIXED_PROMPTS) and tokens[-1] < tokens[0]  # completions of different lengths
    present = tokens > 0
    assert torch.equal(got["agree"][present], agree[present] / tokens[present])
    assert torch.allclose(got["teacher_nll"][present], nll[present] / tokens[present], atol=1e-4)
    assert torch.allclose(got["kl_fwd"][present], kl[present] / tokens[present], atol=1e-4)
    assert torch.isnan(got["agree"][~present]).all()


def test_greedy_agreement_keeps_its_old_meaning_and_positions_add_up(teacher_student):
    """Greedy prefixes: agreement = the other model picks the written token (the pre-by-position definition), and the
    per-position rates averaged with token weights give back the overall rate."""
    from rlprep.rollout import generate

    teacher, student, tokenizer, task = teacher_student
    out = evaluate_student(student, teacher, tokenizer, task, MIXED_PROMPTS, max_new_tokens=5, by_position=True)
    for kind, writer, other in (("teacher_prefix", teacher, student), ("own_prefix", student, teacher)):
        ro = generate(writer, tokenizer, MIXED_PROMPTS, max_new_tokens=5, temperature=0.0)
        C = ro.completion_ids.shape[1]
        picked = completion_logits(other, ro.input_ids, ro.attention_mask, C).argmax(-1)  # (B, C)
        mask = ro.completion_mask.bool()
        expected = float(((picked == ro.completion_ids) & mask).sum() / mask.sum())
        assert out[f"eval/agree_{kind}"] == pytest.approx(expected, abs=1e-6)
        bp = out["by_position"][kind]
        weighted = sum(a * n for a, n in zip(bp["agree"], bp["tokens"]) if n) / sum(bp["tokens"])
        assert weighted == pytest.approx(out[f"eval/agree_{kind}"], abs=1e-6)
        assert sum(bp["tokens"]) == int(mask.sum())
    assert out["eval/accuracy"] == sum(task.verify(p, t) for p, t in zip(
        MIXED_PROMPTS, generate(student, tokenizer, MIXED_PROMPTS, 5, temperature=0.0).texts)) / len(MIXED_PROMPTS)


def test_a_student_identical_to_the_teacher_has_no_exposure_bias(teacher_student):
    teacher, _, tokenizer, task = teacher_student
    out = evaluate_student(teacher, teacher, tokenizer, task, MIXED_PROMPTS, max_new_tokens=5, temperature=1.0,
                           seed=4, by_position=True)
    assert out["eval/agree_teacher_prefix"] == out["eval/agree_own_prefix"] == 1.0
    assert out["eval/kl_fwd_teacher_prefix"] == pytest.approx(0.0, abs=1e-6)
    assert out["eval/teacher_nll_own"] == pytest.approx(out["eval/teacher_nll_teacher"], abs=1e-6)  # same samples
    assert out["eval/teacher_nll_own"] > 0  # sampled at T=1, the teacher is not certain of every token


@pytest.mark.slow
def test_reviews_forward_kd_student_is_worse_on_its_own_prefixes():
    """Exposure bias on long completions (reviews, ~30-50 tokens): after forward-KL training on teacher samples the
    student's KL to the teacher is higher on its own prefixes than on the teacher's. Smoke teacher, ~1-2 min."""
    from rlprep.tinyworld import get_task, load_policy

    teacher, tokenizer = load_policy("reviews", "smoke")
    task = get_task("reviews")
    torch.manual_seed(0)
    student = build_student("smoke", tokenizer, n_layer=1, n_embd=64, seed=0)
    warm_start(student, tokenizer, task, steps=300, batch=32, lr=3e-3)
    cfg = DistillConfig(mode="forward", steps=30, batch=32, lr=1e-3, max_new_tokens=60, eval_every=30, eval_size=64,
                        eval_temperature=1.0, seed=0)
    last = distill(student, teacher, tokenizer, task, cfg)[-1]
    assert "eval/parse_rate" in last and "eval/accuracy" not in last
    assert last["eval/kl_fwd_own_prefix"] > last["eval/kl_fwd_teacher_prefix"]
