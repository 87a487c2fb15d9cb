"""What a language model is told about a bank entry, and how its JSON reply is read and checked.

The interviewer (:mod:`.llm_interviewer`) and the judge (:mod:`.judge`) both ground the model in the course's own
material: the entry's question, key points, misconceptions (claim and answer), follow-up ladder and cited sources.
The checks here are the ones both share: a reply must be one JSON object, and a quote must be the candidate's words.
"""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher

from rlprep.interview.bank import Question, han_count
from rlprep.interview.scoring import found_in, misconception_answers, misconception_claims, normalise

SOURCE_CHARS = 400
"""Each cited source is cut to this many characters in a prompt (the longest run to a page of text)."""


def entry_context(question: Question, covered: list[int] | None = None, ladder: bool = True) -> str:
    """The bank entry as the model reads it; ``covered`` marks the key points the candidate has covered so far."""
    q = question
    lines = [f"Interview question {q.id} (topics: {', '.join(q.topics)}; difficulty {q.difficulty} of 3):",
             f"  zh: {q.question.zh}", f"  en: {q.question.en}", "",
             "Key points a strong answer makes (index. Chinese / English):"]
    for i, kp in enumerate(q.key_points):
        mark = "" if covered is None else ("  [already covered by the candidate]" if i in covered else
                                           "  [not covered yet]")
        lines.append(f"  {i}. {kp.zh} / {kp.en}{mark}")
    claims, answers = misconception_claims(q), misconception_answers(q)
    if claims:
        lines += ["", "Misconceptions candidates state (index. the wrong claim -> why it is wrong):"]
        lines += [f"  {i}. {c.zh} / {c.en} -> {a.en}" for i, (c, a) in enumerate(zip(claims, answers))]
    if ladder:
        lines += ["", "The course's follow-up ladder, each rung deeper (the answers are for you; never reveal them):"]
        lines += [f"  - Q: {fu.q.en} A: {fu.a.en}" for fu in q.follow_ups]
    lines += ["", "Sources the course cites:"]
    lines += [f"  - {s if len(s) <= SOURCE_CHARS else s[:SOURCE_CHARS - 1] + '…'}" for s in q.sources]
    return "\n".join(lines)


def transcript(answer: str, exchanges: list[tuple[str, str | None]]) -> str:
    """The candidate's answer and the follow-ups so far (question, answer or None when unanswered)."""
    lines = ["The candidate's answer:", "<<<", answer or "(empty)", ">>>"]
    for n, (asked, reply) in enumerate(exchanges, 1):
        lines += [f"Follow-up {n} (asked): {asked}", "The candidate's reply:", "<<<",
                  reply if reply else "(no reply)", ">>>"]
    return "\n".join(lines)


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
"""A reasoning model's thinking, which may hold braces of its own, comes before its answer."""


def json_object(text: str) -> tuple[dict | None, str]:
    """The reply's JSON object (a ``<think>`` block, code fences and text around the outermost braces tolerated), or
    None and why not."""
    body = _FENCE.sub("", _THINKING.sub("", text).strip())
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        return None, f"no JSON object in the reply ({_preview(text)})"
    try:
        value = json.loads(body[start:end + 1])
    except json.JSONDecodeError as err:
        return None, f"the reply is not valid JSON ({err.msg} at character {err.pos}; {_preview(text)})"
    if not isinstance(value, dict):
        return None, "the reply's JSON is not an object"
    return value, ""


def _preview(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")


def quote_found(fragment: str, text: str) -> bool:
    """Whether a quote is the candidate's words: each part between ellipses (… or ...) occurs in ``text``."""
    parts = [p for p in re.split(r"…|\.\.\.", fragment) if p.strip(" .,，。")]
    return bool(parts) and all(found_in(p, text) for p in parts)


def taught_fragment(asked: str, question: Question, candidate: str) -> str | None:
    """A stretch of the course's answers (key points, ladder answers, misconceptions' answers) that a follow-up
    question repeats and the candidate never said, or None: a question that carries it teaches the answer.

    A stretch counts from a weight of 24 in a row (normalised text), a Chinese character weighing 3 and any other
    character 1: 8 Chinese characters, or 24 Latin ones."""
    asked_n, candidate_n = normalise(asked), normalise(candidate)
    references = [t for kp in question.key_points for t in (kp.zh, kp.en)]
    references += [t for fu in question.follow_ups for t in (fu.a.zh, fu.a.en)]
    references += [t for a in misconception_answers(question) for t in (a.zh, a.en)]
    for reference in references:
        ref = normalise(reference)
        match = SequenceMatcher(None, asked_n, ref, autojunk=False).find_longest_match(0, len(asked_n), 0, len(ref))
        stretch = asked_n[match.a:match.a + match.size].strip()
        if 2 * han_count(stretch) + len(stretch) >= 24 and stretch not in candidate_n:
            return stretch
    return None


def ask_checked(send, messages: list[dict], check) -> tuple[object | None, list[str]]:
    """Send ``messages``; read the reply with ``check(data) -> (result, problems)``; when it fails, ask once more,
    telling the model what was wrong. Returns the result (None after two failures) and the problems of each failed
    reply. ``send(messages) -> str`` may raise :class:`~rlprep.interview.llm_client.LLMError`, which is not retried."""
    problems: list[str] = []
    conversation = list(messages)
    for attempt in range(2):
        text = send(conversation)
        data, why = json_object(text)
        result, found = check(data) if data is not None else (None, [why])
        if result is not None:
            return result, problems
        problems.append("; ".join(found))
        if attempt == 0:
            conversation += [{"role": "assistant", "content": text},
                             {"role": "user", "content": "That reply is invalid: " + "; ".join(found)
                              + ". Reply again with one JSON object only, following every rule."}]
    return None, problems
