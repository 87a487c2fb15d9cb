"""The ``claims`` scorer: the keyword scorer's hits, read one sentence at a time, with wrong claims counted against them.

The keyword scorer (:func:`rlprep.interview.scoring.keyword_judgement`) credits a key point wherever one of its terms
appears, so an answer that says "GRPO 的 loss 为 0 说明模型已经收敛了，梯度也是 0" with the right words around it
passes. This scorer reads the answer sentence by sentence and uses only the bank entry's own text, nothing written
for a particular answer:

1. **A misconception stated.** A sentence states a misconception when it holds most of the claim's words
   (:func:`overlap`, at least :data:`CLAIM_OVERLAP` of the claim's Chinese character pairs and Latin words, in either
   language) and does not push back on it: a sentence that adds a refuting word the claim does not have ("不是",
   "并不", "而是", "not", ...) is read as the candidate correcting the claim.
2. **A key point contradicted.** A key point says "X 不为 0" and the sentence says "X 是 0" (or the reverse): the key
   point's negated phrases, with the negation taken out and the copula normalised (是/为/等于), are looked for in the
   sentence, and the sentence's negated phrases in the key point (:func:`contradicts`).
3. **Ignorance.** Terms in a sentence that says "不知道 / 不清楚 / not sure" earn nothing.

A key point whose terms appear only in sentences of kind 1 or 2 is ``wrong`` (quoting the sentence); each
misconception stated also costs a key point's worth (:data:`rlprep.interview.scoring.MISCONCEPTION_PENALTY`). Every
other hit counts as the keyword scorer counts it. How much better this is, and where it still fails, is measured on
``tests/fixtures/interview_answers.yaml`` by ``rlprep bench --only interview`` (:mod:`rlprep.bench.interview_scoring`).
"""

from __future__ import annotations

import re

from rlprep.interview.bank import Question
from rlprep.interview.scoring import (Judgement, MisconceptionHit, PointVerdict, misconception_claims, quote,
                                      sentences, term_matches)

CLAIM_OVERLAP = 0.6
"""The share of a misconception claim's words a sentence must hold to state it."""
MIN_CLAIM_UNITS = 3
"""A claim with fewer words than this is too short to recognise by overlap, and is never matched."""
REFUTING = ("不是", "并不", "并非", "而是", "不等于", "不等价", "不对", "错误", "误区", "误解", "其实不", "不一定",
            "未必", "不代表", "not ", "n't", "rather than", "instead of", "wrong", "myth")
"""Words that, added to a claim's words, make a sentence refute the claim rather than state it."""
IGNORANCE = ("不知道", "不清楚", "不太懂", "不了解", "不记得", "没听说", "忘了", "not sure", "don't know", "no idea",
             "never heard")
_NEGATIONS = ("不", "没", "非", "无")
_HAN = re.compile(r"[\u3400-\u9fff]+")
_LATIN = re.compile(r"[a-z]+|\d+(?:\.\d+)?|[α-ωπθμσ∑∏]")
_FILLER = frozenset("就是 的是 一个 可以 我们 因为 所以 这个 那个 时候 的时 是一 也是 只是 这样 的话 什么 怎么 还是 其实"
                    " 然后 一般 比如 就行 直接 主要 本质 觉得 我觉 认为 我认".split())
_NEGATED = re.compile(r"([\u3400-\u9fffa-z0-9_]{1,6}?)\s*(?:却|并|也|都|就)?\s*(?:不|非|没)(是|为|等于|会|能|需要|用|)"
                      r"\s*([\u3400-\u9fffa-z0-9_.]{1,6})")
_AFFIRMED = re.compile(r"([\u3400-\u9fffa-z0-9_]{1,6}?)\s*(?:却|也|都|就)?\s*(是|为|等于|会|能|需要|用)"
                       r"\s*([\u3400-\u9fffa-z0-9_.]{1,6})")


def units(text: str) -> set[str]:
    """The words of ``text`` compared between a sentence and a claim: pairs of adjacent Chinese characters (bar a
    few fillers), Latin words, numbers and Greek letters, lowercased."""
    text = text.casefold()
    found = {w for w in _LATIN.findall(text) if len(w) > 1 or w.isdigit() or not w.isascii()}
    for run in _HAN.findall(text):
        found.update(run[i:i + 2] for i in range(len(run) - 1))
    return found - _FILLER


def overlap(claim: str, sentence: str) -> float:
    """The share of ``claim``'s words that ``sentence`` holds (0 when the claim has fewer than MIN_CLAIM_UNITS)."""
    wanted = units(claim)
    if len(wanted) < MIN_CLAIM_UNITS:
        return 0.0
    return len(wanted & units(sentence)) / len(wanted)


def _refutes(sentence: str, claim: str) -> bool:
    """A refuting word the claim does not have, or a negation put before one of the claim's own words."""
    said, claimed = sentence.casefold(), claim.casefold()
    if any(cue in said and cue not in claimed for cue in REFUTING):
        return True
    for run in _HAN.findall(claimed):
        for i in range(len(run) - 1):
            pair = run[i:i + 2]
            if any(neg + pair in said and neg + pair not in claimed for neg in _NEGATIONS):
                return True
    return False


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:\.\d+)?", text))


def clause_windows(sentence: str) -> list[str]:
    """The sentence's clauses (cut at commas and colons) alone and in adjacent pairs: a claim is one or two clauses."""
    clauses = [c for c in re.split(r"[，,：:、]", sentence) if c.strip()]
    return clauses + [a + "，" + b for a, b in zip(clauses, clauses[1:])]


def states_claim(sentence: str, claim_zh: str, claim_en: str) -> bool:
    """Whether a clause (or two adjacent clauses) of ``sentence`` states the claim, in Chinese or English: most of
    its words, every number it names, and no refutation of it."""
    for window in clause_windows(sentence):
        for claim in (claim_zh, claim_en):
            if (overlap(claim, window) >= CLAIM_OVERLAP and _numbers(claim) <= _numbers(window)
                    and not _refutes(window, claim)):
                return True
    return False


def _copula(verb: str) -> str:
    return "是" if verb in ("是", "为", "等于", "") else verb


def _phrases(pattern: re.Pattern, text: str) -> set[tuple[str, str, str]]:
    """(subject's last two characters, normalised verb, object's first two) for each match in ``text``."""
    flat = re.sub(r"\s+", "", text.casefold())
    return {(m.group(1)[-2:], _copula(m.group(2)), m.group(3)[:2]) for m in pattern.finditer(flat)}


def contradicts(sentence: str, point_zh: str) -> bool:
    """Whether ``sentence`` says the opposite of a phrase of the key point: the key point negates what the sentence
    affirms ("梯度不为 0" / "梯度也是 0"), or affirms what it negates."""
    point_negated, said_affirmed = _phrases(_NEGATED, point_zh), _phrases(_AFFIRMED, sentence)
    point_affirmed, said_negated = _phrases(_AFFIRMED, point_zh), _phrases(_NEGATED, sentence)
    return bool(point_negated & said_affirmed) or bool(said_negated & (point_affirmed - point_negated))


def judge(question: Question, *answers: str) -> Judgement:
    """The ``claims`` judgement of ``answers`` (the main answer, then follow-up answers) against ``question``."""
    said = [s for a in answers if a for s in sentences(a)]
    claims = misconception_claims(question)
    hits: list[MisconceptionHit] = []
    wrong_sentences: set[int] = set()
    for i, sentence in enumerate(said):
        for index, claim in enumerate(claims):
            if states_claim(sentence, claim.zh, claim.en):
                wrong_sentences.add(i)
                if index not in {h.index for h in hits}:
                    hits.append(MisconceptionHit(index, quote(sentence)))
    points = []
    for kp in question.key_points:
        holding = [i for i, s in enumerate(said) if any(term_matches(t, s) for t in kp.terms)
                   and not any(cue in s.casefold() for cue in IGNORANCE)]
        opposed = next((i for i, s in enumerate(said) if contradicts(s, kp.zh)), None)
        if opposed is not None:
            points.append(PointVerdict("wrong", quote(said[opposed])))
        elif not holding:
            points.append(PointVerdict("missing"))
        elif all(i in wrong_sentences for i in holding):
            points.append(PointVerdict("wrong", quote(said[holding[0]])))
        else:
            points.append(PointVerdict("covered", quote(said[next(i for i in holding if i not in wrong_sentences)])))
    return Judgement("claims", tuple(points), tuple(hits))
