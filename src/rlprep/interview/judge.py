"""The language model's judgement of one answer: a status and a quote per key point, and the misconceptions stated.

The model gets the bank entry (:func:`~rlprep.interview.grounding.entry_context`) and the transcript, and must reply
with JSON of :data:`JUDGEMENT_SCHEMA`. :func:`check_judgement` validates it: every key point exactly once, a status
from :data:`~rlprep.interview.scoring.STATUSES`, and for every status but ``missing`` a quote that is the
candidate's own words (a misconception likewise). An invalid reply is sent back once with what was wrong; a second
invalid reply, or a call that fails, hands the answer to the offline scorer, and the judgement's ``note`` says so.
"""

from __future__ import annotations

from typing import Callable

from rlprep.interview.bank import Question
from rlprep.interview.grounding import ask_checked, entry_context, quote_found, transcript
from rlprep.interview.llm_client import LLMError
from rlprep.interview.scoring import STATUSES, Judgement, MisconceptionHit, PointVerdict, quote

JUDGE_MAX_TOKENS = 1200
JUDGEMENT_SCHEMA = {
    "type": "object",
    "properties": {
        "points": {"type": "array", "items": {
            "type": "object",
            "properties": {"index": {"type": "integer"}, "status": {"type": "string", "enum": list(STATUSES)},
                           "quote": {"type": "string"}},
            "required": ["index", "status", "quote"]}},
        "misconceptions": {"type": "array", "items": {
            "type": "object", "properties": {"index": {"type": "integer"}, "quote": {"type": "string"}},
            "required": ["index", "quote"]}},
    },
    "required": ["points", "misconceptions"],
}

SYSTEM = """You grade one answer in a mock interview for LLM reinforcement-learning roles, against the course's key \
points for the question. Judge only what the candidate said (their answer and their replies to follow-ups).
For each key point give a status:
- "covered": the candidate states it correctly;
- "partial": the candidate states part of it, or only implies it;
- "missing": the candidate does not state it;
- "wrong": the candidate states it incorrectly, or claims its opposite.
Using a key point's words inside a wrong claim is "wrong", not "covered".
For every status except "missing", "quote" holds the candidate's exact words that show it (copied verbatim, at most \
120 characters); for "missing", "quote" is "".
List under "misconceptions" each of the listed misconceptions the candidate states, by index, with the quote.
Reply with one JSON object and nothing else:
{"points": [{"index": 0, "status": "covered", "quote": "..."}, ...], "misconceptions": [{"index": 0, "quote": "..."}]}"""


def judge_messages(question: Question, answer: str, exchanges: list[tuple[str, str | None]]) -> list[dict]:
    """The judge's request: the rules, then the entry and the transcript."""
    user = "\n\n".join([entry_context(question, ladder=False), transcript(answer, exchanges),
                        f"Grade all {len(question.key_points)} key points (indices 0 to "
                        f"{len(question.key_points) - 1}) and list the misconceptions stated."])
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def check_judgement(data: dict, question: Question, candidate: str, scorer: str) -> tuple[Judgement | None, list[str]]:
    """The reply as a :class:`Judgement`, or None and every problem found."""
    problems: list[str] = []
    n = len(question.key_points)
    points: dict[int, PointVerdict] = {}
    raw_points = data.get("points")
    if not isinstance(raw_points, list):
        return None, ['"points" must be a list with one item per key point']
    for item in raw_points:
        if not isinstance(item, dict):
            problems.append("each item of \"points\" must be an object")
            continue
        index, status, said = item.get("index"), item.get("status"), item.get("quote", "")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n:
            problems.append(f"point index {index!r} is not one of 0..{n - 1}")
            continue
        if index in points:
            problems.append(f"key point {index} is graded twice")
        if status not in STATUSES:
            problems.append(f"key point {index}: status {status!r} is not one of {', '.join(STATUSES)}")
            continue
        if not isinstance(said, str):
            problems.append(f"key point {index}: quote must be a string")
            continue
        if status != "missing" and not quote_found(said, candidate):
            problems.append(f"key point {index} is {status!r} but its quote {quote(said, 60)!r} is not the "
                            "candidate's words")
            continue
        points[index] = PointVerdict(status, quote(said) if status != "missing" else "")
    absent = [i for i in range(n) if i not in points]
    if absent and not problems:
        problems.append(f"key point(s) {', '.join(map(str, absent))} not graded")
    hits: list[MisconceptionHit] = []
    raw_hits = data.get("misconceptions", [])
    if not isinstance(raw_hits, list):
        problems.append('"misconceptions" must be a list')
        raw_hits = []
    for item in raw_hits:
        index = item.get("index") if isinstance(item, dict) else None
        said = item.get("quote") if isinstance(item, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(question.misconceptions):
            problems.append(f"misconception index {index!r} is not one of the {len(question.misconceptions)} listed")
        elif not isinstance(said, str) or not quote_found(said, candidate):
            problems.append(f"misconception {index}: its quote is not the candidate's words")
        elif index not in {h.index for h in hits}:
            hits.append(MisconceptionHit(index, quote(said)))
    if problems or absent:
        return None, problems
    return Judgement(scorer, tuple(points[i] for i in range(n)), tuple(hits)), []


def llm_judgement(send: Callable[[list[dict]], str], question: Question, answer: str,
                  exchanges: list[tuple[str, str | None]], fallback: Callable[..., Judgement],
                  model: str) -> Judgement:
    """The model's judgement of the transcript; after two invalid replies or a failed call, ``fallback``'s, with a
    note saying why (the session prints it and the history keeps it)."""
    candidate = "\n".join([answer] + [reply for _, reply in exchanges if reply])
    scorer = f"llm:{model}"
    try:
        judgement, problems = ask_checked(send, judge_messages(question, answer, exchanges),
                                          lambda data: check_judgement(data, question, candidate, scorer))
    except LLMError as err:
        judgement, why = None, f"{scorer} could not judge ({err})"
    else:
        why = f"{scorer} gave no valid judgement in two tries ({problems[-1] if problems else 'no reply'})"
    if judgement is not None:
        return judgement
    offline = fallback(question, answer, *[reply for _, reply in exchanges if reply])
    return Judgement(offline.scorer, offline.points, offline.misconceptions,
                     note=f"{why}; the {offline.scorer} scorer judged this answer instead")
