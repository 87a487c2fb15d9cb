"""The offline scorers of `rlprep mock`, on the labelled answer set (tests/fixtures/interview_answers.yaml) and on the
cases their rules are about: the claims scorer must fail more of the wrong-with-the-right-words answers than the
keyword scorer, without failing the strong ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlprep.bench.interview_scoring import LABELLED_SET, bench_interview_scoring, load_labelled
from rlprep.bench.report import render_markdown
from rlprep.interview.bank import KeyPoint, Misconception, Question, Text, load_bank
from rlprep.interview.claims import contradicts, judge, states_claim
from rlprep.interview.scoring import keyword_judgement

ROOT = Path(__file__).resolve().parents[1]
BANK = load_bank()
ISSUE_W11 = ("GRPO 的 loss 为 0 说明模型已经收敛了，梯度也是 0，应该马上停止训练。我会看一下 dynamic sampling、grad_norm、"
             "advantage 的 std、clip 和 KL 这些，mask 也检查一下。")


@pytest.fixture(scope="module")
def measured():
    return bench_interview_scoring(ROOT)


def test_the_labelled_set_has_three_answers_for_thirty_bank_entries():
    labelled = load_labelled(ROOT / LABELLED_SET)
    assert len(labelled) >= 30 and set(labelled) <= set(BANK)
    assert all(len(answers["strong"]) > len(answers["partial"]) for answers in labelled.values())


def test_claims_passes_fewer_wrong_answers_than_keyword_and_keeps_the_strong_ones(measured):
    keyword, claims = measured["scorers"]["keyword"], measured["scorers"]["claims"]
    n = keyword["entries"]
    assert claims["passed"]["wrong"] < keyword["passed"]["wrong"]   # the point of the claims scorer
    assert claims["ranked"] > keyword["ranked"]
    assert claims["passed"]["strong"] >= 0.9 * n                   # ... without failing correct answers
    assert claims["mean"]["wrong"] < claims["mean"]["partial"] < claims["mean"]["strong"]


def test_the_bench_section_renders_the_measured_figures(measured):
    report = {"command": "x", "profile": "smoke", "wall_s": 1.0, "notes": [], "sections": {"interview": measured},
              "machine": {"date_utc": "d", "cpu_count": 2, "cpu": "c", "device": "cpu", "torch": "t"}}
    md = render_markdown(report)
    claims = measured["scorers"]["claims"]
    row = f"| claims | {claims['ranked']}/{claims['entries']} | {claims['passed']['wrong']}/{claims['entries']} |"
    assert "## Interview scorers on the labelled answers" in md and row in md


def test_the_issue_s_w11_answer_passes_the_keyword_scorer_and_fails_the_claims_scorer():
    q = BANK["W11"]
    assert keyword_judgement(q, ISSUE_W11).passes()
    judged = judge(q, ISSUE_W11)
    assert not judged.passes() and judged.points[0].status == "wrong" and "梯度也是 0" in judged.points[0].quote


def _question(claim_zh: str, claim_en: str, point: str = "梯度却不为 0") -> Question:
    fu = BANK["W11"].follow_ups
    return Question("W99", "seed-000", Text("问？", "Q?"), ("grpo",), 2,
                    (KeyPoint(point, "the gradient is not zero", ("梯度", "gradient")),
                     KeyPoint("看奖励", "watch the reward", ("reward", "奖励"))),
                    fu, "x", None, ("src",), (Misconception(Text(claim_zh, claim_en), Text("因为…", "Because…")),))


def test_a_claim_stated_is_wrong_and_a_claim_refuted_is_not():
    q = _question("DAPO 没有任何约束。", "DAPO has no constraint at all.")
    assert states_claim("DAPO 没有任何约束，所以训练很自由", "DAPO 没有任何约束。", "")
    assert not states_claim("DAPO 去掉的是对参考模型的 KL，不是没有任何约束", "DAPO 没有任何约束。", "")
    assert states_claim("I think DAPO has no constraint at all", "", "DAPO has no constraint at all.")
    stated = judge(q, "DAPO 没有任何约束，梯度和奖励都随便。另外我会看奖励曲线。")
    assert [h.index for h in stated.misconceptions] == [0] and stated.points[0].status == "wrong"
    assert stated.points[1].status == "covered"           # the reward point is also said in a sound sentence


def test_a_claim_with_a_number_needs_that_number():
    assert states_claim("优化器状态是 7B 乘 (4+4) 字节，56 GB", "优化器状态是 7B × (4+4) bytes = 56 GB。", "")
    assert not states_claim("优化器状态 84 GB，7B 乘 12 字节", "优化器状态是 7B × (4+4) bytes = 56 GB。", "")


def test_contradicting_a_key_point_and_saying_you_do_not_know():
    assert contradicts("loss 为 0，梯度也是 0", "损失恒为 0，梯度却不为 0")
    assert not contradicts("loss 为 0，但梯度不为 0", "损失恒为 0，梯度却不为 0")
    q = _question("一个很长的误区说法", "a claim nobody makes here")
    assert judge(q, "梯度我不知道。奖励也不清楚。").points == judge(q, "").points  # no credit for terms in ignorance
