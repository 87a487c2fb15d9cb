"""How an answer is scored: a :class:`Judgement` per key point, and the two offline scorers that give one.

A judgement marks each key point of the bank entry ``covered``, ``partial``, ``missing`` or ``wrong``, with a quote
from the learner's answer, lists the entry's misconceptions the answer states, and names the scorer that gave it:

- ``keyword``: today's scorer. A key point is covered when the answer contains one of its ``terms``
  (:func:`term_matches`); it never says ``wrong`` and never sees a misconception.
- ``claims``: the improved offline scorer (:mod:`rlprep.interview.claims`): the keyword hits, read sentence by
  sentence, with a misconception's claim stated in the answer counting against the points said with it.
- ``llm:<model>``: a language model's judgement (:mod:`rlprep.interview.judge`), validated, with one of the offline
  scorers taking over when the model's output is invalid twice.

The scorers by name (``--scorer``) are in :mod:`rlprep.interview.offline_scorers`.

The score is one number in [0, 1]: covered 1, partial 0.5, missing and wrong 0, minus one key point's worth per
misconception stated, over the number of key points. An answer passes at :data:`PASS_SCORE`, the mastery at which the
spaced repetition moves a question up a box (:data:`rlprep.interview.history.PASS_MASTERY`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlprep.interview.bank import Question, Text
from rlprep.interview.history import PASS_MASTERY

STATUSES = ("covered", "partial", "missing", "wrong")
POINT_CREDIT = {"covered": 1.0, "partial": 0.5, "missing": 0.0, "wrong": 0.0}
MISCONCEPTION_PENALTY = 1.0
"""Key points' worth taken off the score for each misconception the answer states."""
PASS_SCORE = PASS_MASTERY
QUOTE_CHARS = 120
"""The longest quote a judgement keeps from an answer."""


@dataclass(frozen=True)
class PointVerdict:
    """One key point's status, with the words of the answer that show it (empty when missing)."""

    status: str
    quote: str = ""


@dataclass(frozen=True)
class MisconceptionHit:
    """A misconception of the entry (its index) that the answer states, with the words that state it."""

    index: int
    quote: str


@dataclass(frozen=True)
class Judgement:
    """A scored answer: a verdict per key point (in the entry's order), misconceptions stated, and who judged."""

    scorer: str
    points: tuple[PointVerdict, ...]
    misconceptions: tuple[MisconceptionHit, ...] = ()
    note: str = ""
    """Why this scorer judged when another was asked for (the model's output was invalid twice), else empty."""

    @property
    def covered(self) -> list[int]:
        """Indices of the key points judged covered (partial ones are not)."""
        return [i for i, p in enumerate(self.points) if p.status == "covered"]

    @property
    def score(self) -> float:
        """Covered 1, partial 0.5, minus :data:`MISCONCEPTION_PENALTY` per misconception, over the key points."""
        if not self.points:
            return 0.0
        credit = sum(POINT_CREDIT[p.status] for p in self.points) - MISCONCEPTION_PENALTY * len(self.misconceptions)
        return min(1.0, max(0.0, credit / len(self.points)))

    def passes(self) -> bool:
        return self.score >= PASS_SCORE

    def as_record(self) -> dict:
        """What the history keeps (JSON-ready)."""
        return {"scorer": self.scorer, "score": self.score, "note": self.note,
                "points": [{"status": p.status, "quote": p.quote} for p in self.points],
                "misconceptions": [{"index": m.index, "quote": m.quote} for m in self.misconceptions]}


# -- text ----------------------------------------------------------------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[。！？；!?;\n])|(?<=[.])(?=\s)")


def sentences(text: str) -> list[str]:
    """``text`` cut after each sentence end (Chinese or Latin punctuation, a newline), stripped, empties dropped."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def normalise(text: str) -> str:
    """Casefolded, whitespace collapsed, full-width punctuation as ASCII: how quotes are looked up in an answer."""
    table = str.maketrans("，。：；！？（）“”‘’", ",.:;!?()\"\"''")
    return " ".join(text.translate(table).casefold().split())


def found_in(fragment: str, text: str) -> bool:
    """Whether ``fragment`` (trailing punctuation and an ellipsis ignored) occurs in ``text`` once both are normalised."""
    needle = normalise(fragment).strip(" .,:;!?\"'…")
    return bool(needle) and needle in normalise(text)


def misconception_claims(question: Question) -> list[Text]:
    """The wrong statement of each misconception: ``claim`` in the structured schema (``{claim, answer}``); in the
    older ``{zh, en}`` form, the text's first sentence in each language (where the bank wrote the claim)."""
    claims = []
    for m in question.misconceptions:
        claim = getattr(m, "claim", None)
        if claim is None:
            claim = Text(sentences(m.zh)[0] if m.zh.strip() else m.zh, sentences(m.en)[0] if m.en.strip() else m.en)
        claims.append(claim)
    return claims


def misconception_answers(question: Question) -> list[Text]:
    """Why each misconception is wrong: ``answer`` in the structured schema, the whole text in the older form."""
    return [getattr(m, "answer", m) for m in question.misconceptions]


# -- the keyword scorer --------------------------------------------------------------------------------------------
def term_matches(term: str, text: str) -> bool:
    """Whether ``term`` occurs in ``text``, case-insensitively; Latin/digit terms must start at a word start."""
    term, text = term.casefold().strip(), text.casefold()
    if not term:
        return False
    if term[0].isascii() and term[0].isalnum():
        return re.search(r"(?<![a-z0-9])" + re.escape(term), text) is not None
    return term in text


def covered_points(question: Question, *answers: str) -> list[int]:
    """Indices of the key points whose terms appear in any of ``answers``."""
    text = "\n".join(a for a in answers if a)
    return [i for i, kp in enumerate(question.key_points) if any(term_matches(t, text) for t in kp.terms)]


def term_sentence(terms: tuple[str, ...], text: str) -> str:
    """The first sentence of ``text`` holding one of ``terms`` (quoted), or ``""``."""
    for sentence in sentences(text):
        if any(term_matches(t, sentence) for t in terms):
            return quote(sentence)
    return ""


def keyword_judgement(question: Question, *answers: str) -> Judgement:
    """Today's scorer as a judgement: covered where a term appears (quoting its sentence), missing elsewhere."""
    text = "\n".join(a for a in answers if a)
    covered = set(covered_points(question, text))
    points = tuple(PointVerdict("covered", term_sentence(kp.terms, text)) if i in covered else PointVerdict("missing")
                   for i, kp in enumerate(question.key_points))
    return Judgement("keyword", points)


# -- what the learner reads ------------------------------------------------------------------------------------------
MARKS = {"covered": "[x]", "partial": "[~]", "missing": "[ ]", "wrong": "[!]"}
SCORER_BLURBS = {
    "keyword": "automatic and approximate: a point counts when your answer contains one of its terms",
    "claims": "automatic and approximate: a point counts when your answer contains one of its terms, "
              "unless it comes with a misconception's claim",
}


def judgement_lines(question: Question, judgement: Judgement, lang: str) -> list[str]:
    """The scorecard: the key points marked ([x] covered, [~] partial, [!] wrong, [ ] missing) with the quotes a model
    gave, the misconceptions stated, the score and the scorer that gave it."""
    blurb = SCORER_BLURBS.get(judgement.scorer, f"judged by {judgement.scorer.removeprefix('llm:')}, "
                                                "quoting your words")
    lines = [f"Key points: {len(judgement.covered)}/{len(question.key_points)} covered ({blurb})"]
    quoted = judgement.scorer.startswith("llm:")
    for kp, verdict in zip(question.key_points, judgement.points):
        shown = kp.text().show(lang).splitlines()
        lines += [f"  {MARKS[verdict.status]} {line}" if j == 0 else f"      {line}" for j, line in enumerate(shown)]
        if verdict.quote and (quoted or verdict.status == "wrong"):
            lines.append(f"      {verdict.status}: “{verdict.quote}”")
    claims = misconception_claims(question)
    for hit in judgement.misconceptions:
        claim = claims[hit.index].show(lang).replace("\n", " / ")
        lines.append(f"  misconception stated: {claim} (“{hit.quote}”)")
    verdict = "passes" if judgement.passes() else "below the pass mark"
    lines.append(f"Score {judgement.score:.2f} from the {judgement.scorer} scorer ({verdict}: {PASS_SCORE:g}).")
    if judgement.note:
        lines.append(f"Note: {judgement.note}.")
    return lines
