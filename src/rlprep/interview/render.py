"""Markdown views of bank entries, so notebooks render their 面试口述版, key points and follow-ups from the bank.

In a notebook section: ``render_spoken("W04")`` and ``render_section_extras("W04")`` as a cell's last line.
"""

from __future__ import annotations

from functools import lru_cache

from rlprep.errors import RlprepError
from rlprep.interview.bank import (SPOKEN_HAN_PER_MINUTE, SPOKEN_MAX_MINUTES, Question, default_bank_dir, han_count,
                                   load_bank, spoken_minutes)
from rlprep.interview.intro import MarkdownText


@lru_cache(maxsize=4)
def _load(directory: str) -> dict[str, Question]:
    return load_bank(directory)


def _bank() -> dict[str, Question]:
    return _load(str(default_bank_dir()))


def get_question(qid: str) -> Question:
    """The bank entry for ``qid`` (raises :class:`RlprepError` naming the fix when it is missing)."""
    bank = _bank()
    if qid not in bank:
        raise RlprepError(f"the question bank has no entry {qid!r} ({len(bank)} entries loaded)",
                          f"add src/rlprep/interview/bank/{qid}.yaml (schema: rlprep/interview/bank.py)")
    return bank[qid]


def render_spoken(qid: str) -> MarkdownText:
    """The entry's 面试口述版 (two minutes at most) as a Markdown block headed by its length and speaking time, without a
    title: the notebook's ``#### 面试口述版`` heading cell above it is the title (docs/authoring-notebooks.md)."""
    text = get_question(qid).spoken_answer_zh
    body = "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines())
    label = (f"*Spoken answer: {han_count(text)} 字, about {spoken_minutes(text):.1f} minutes at {SPOKEN_HAN_PER_MINUTE} 字 "
             f"a minute (an interview answer fits in {SPOKEN_MAX_MINUTES}).*")
    return MarkdownText(f"{label}\n\n{body}\n")


def render_section_extras(qid: str) -> MarkdownText:
    """The entry's follow-ups (追问) with short answers, misconceptions, key points and sources, as Markdown.

    The key points come last, labelled as what they are: the checklist the mock interview scores an answer against, a
    recap of the answer above rather than a new layer of it."""
    q = get_question(qid)
    out = ["**Follow-ups (追问)**", ""]
    for fu in q.follow_ups:
        out += [f"- **{fu.q.zh}** *{fu.q.en}*  ", f"  {fu.a.zh}  ", f"  *{fu.a.en}*"]
    if q.misconceptions:
        out += ["", "**Common misconceptions (常见误区)**", ""]
        out += [f"- {m.zh}  \n  *{m.en}*" for m in q.misconceptions]
    out += ["", "**Self-check (要点): the points the mock interview scores an answer against, a recap of the answer "
            "above**", ""]
    out += [f"{i}. {kp.zh}  \n   *{kp.en}*" for i, kp in enumerate(q.key_points, 1)]
    out += ["", "**Sources**", ""]
    out += [f"- {s}" for s in q.sources]
    return MarkdownText("\n".join(out) + "\n")
