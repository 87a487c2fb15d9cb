"""Markdown views of bank entries, so notebooks render their 面试口述版, misconceptions and follow-ups from the bank.

In a notebook section: ``render_spoken("W04")`` and ``render_section_extras("W04")`` as a cell's last line. The key
points are the mock interview's scoring rubric: no notebook renders them (``render_rubric`` is for the bank's own page).
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
    """The entry's misconceptions (claim, then its answer), its follow-up ladder (追问, each rung deeper) and its sources.

    The key points are not here: they are the mock interview's scoring rubric, and the notebook section above already
    is the answer they summarise (docs/authoring-notebooks.md, "The section template")."""
    q = get_question(qid)
    out = ["**Misconceptions (常见误区)**", ""]
    for m in q.misconceptions:
        out += [f"- ✗ “{m.claim.zh}” *“{m.claim.en}”*  ", f"  {m.answer.zh}  ", f"  *{m.answer.en}*"]
    out += ["", "**Follow-up ladder (追问, each rung deeper)**", ""]
    for i, fu in enumerate(q.follow_ups, 1):
        out += [f"{i}. **{fu.q.zh}** *{fu.q.en}*  ", f"   {fu.a.zh}  ", f"   *{fu.a.en}*"]
    out += ["", "**Sources**", ""]
    out += [f"- {s}" for s in q.sources]
    return MarkdownText("\n".join(out) + "\n")


def render_rubric(qid: str) -> MarkdownText:
    """The entry's key points: the rubric the mock interview scores a spoken answer against, for the bank's own page."""
    q = get_question(qid)
    out = ["**Scoring rubric (要点): what the mock interview listens for**", ""]
    out += [f"{i}. {kp.zh}  \n   *{kp.en}*" for i, kp in enumerate(q.key_points, 1)]
    return MarkdownText("\n".join(out) + "\n")
