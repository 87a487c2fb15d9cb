"""The listening interviewer: follow-ups a language model writes from what the learner said, one at a time.

After the learner's answer the model writes one follow-up (1 to :data:`MAX_FOLLOW_UPS` per question), anchored in the
learner's own words: a claim to justify, a missing condition, a changed constraint or a counterexample
(:data:`KINDS`). It is grounded in the bank entry (key points with what is covered so far, misconceptions, the
follow-up ladder, the cited sources). :func:`check_follow_up` holds it to that:

- ``anchor`` must be words the learner actually said;
- ``target_point`` may not be a key point the learner already covered (the offline scorer's reading);
- the question may not repeat a stretch of the course's answers the learner never said (it would teach);
- it is a question, in Chinese and English, and not one already asked.

An invalid reply is sent back once; a second one falls back to the bank's own ladder (first follow-up) or ends the
follow-ups (later ones), and the session says so. Nothing is sent before the learner has seen the first request and
agreed (``confirm``); a refusal, an unreachable endpoint or a timeout turns the session offline, said once.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from rlprep.interview.bank import FollowUp, Question, Text
from rlprep.interview.grounding import ask_checked, entry_context, quote_found, taught_fragment, transcript
from rlprep.interview.judge import JUDGE_MAX_TOKENS, JUDGEMENT_SCHEMA, llm_judgement
from rlprep.interview.llm_client import ChatClient, LLMConfig, LLMError, consent_text
from rlprep.interview.scoring import Judgement, normalise

if TYPE_CHECKING:
    from rlprep.interview.session import AnswerRecord

MAX_FOLLOW_UPS = 3
FOLLOW_UP_MAX_TOKENS = 400
KINDS = ("justify", "missing_condition", "changed_constraint", "counterexample")
FOLLOW_UP_SCHEMA = {
    "type": "object",
    "properties": {"done": {"type": "boolean"}, "anchor": {"type": "string"},
                   "kind": {"type": "string", "enum": list(KINDS)},
                   "target_point": {"type": ["integer", "null"]},
                   "question_zh": {"type": "string"}, "question_en": {"type": "string"}},
    "required": ["done", "anchor", "kind", "target_point", "question_zh", "question_en"],
}

SYSTEM = """You are the interviewer in a mock interview for LLM reinforcement-learning roles. The candidate has \
answered the question below. Ask exactly one follow-up question, then stop.
Rules:
1. Anchor it in the candidate's own words: put a short phrase copied verbatim from their answer or replies in "anchor".
2. "kind" is one of: "justify" (ask them to justify a claim they made), "missing_condition" (ask for a condition \
their claim needs and they left out), "changed_constraint" (change one constraint of their set-up and ask what \
changes), "counterexample" (ask for, or confront them with, a case where their claim fails).
3. Never ask about a key point marked [already covered by the candidate]. Aim at a key point not covered yet or at a \
misconception they stated; "target_point" is that key point's index, or null.
4. Never teach: the question must not state the answer, a key point, or any fact the candidate did not say. Ask; \
do not explain.
5. Write it in Chinese ("question_zh") and in English ("question_en"), one sentence each, ending with a question mark.
6. Set "done" to true only if this is not the first follow-up and nothing worth asking remains (everything covered).
Reply with one JSON object and nothing else:
{"done": false, "anchor": "...", "kind": "justify", "target_point": 2, "question_zh": "...？", "question_en": "...?"}"""


@dataclass(frozen=True)
class AnchoredFollowUp:
    """A follow-up the model wrote: the question, the learner's words it starts from, and what kind of probe it is.
    ``a`` is None: unlike the bank's ladder, a model's follow-up comes without a course answer."""

    q: Text
    anchor: str
    kind: str
    target_point: int | None
    a: Text | None = None
    source: str = "llm"


def follow_up_messages(question: Question, answer: str, exchanges: list[tuple[str, str | None]],
                       covered: list[int]) -> list[dict]:
    n = len(exchanges) + 1
    user = "\n\n".join([entry_context(question, covered), transcript(answer, exchanges),
                        f"Write follow-up {n} of at most {MAX_FOLLOW_UPS}."])
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def check_follow_up(data: dict, question: Question, candidate: str, covered: list[int], asked: list[str],
                    n: int) -> tuple[AnchoredFollowUp | str | None, list[str]]:
    """The reply as a follow-up, ``"done"`` when the model ends the follow-ups (allowed after the first), or None
    and every rule it breaks."""
    if data.get("done") is True:
        return ("done", []) if n > 1 else (None, ['"done" is true, but the first follow-up must be asked'])
    problems = []
    fields = {k: data.get(k) for k in ("anchor", "kind", "question_zh", "question_en")}
    for key, value in fields.items():
        if not isinstance(value, str) or not value.strip():
            problems.append(f'"{key}" must be a non-empty string')
    if problems:
        return None, problems
    anchor, kind, zh, en = (fields[k].strip() for k in ("anchor", "kind", "question_zh", "question_en"))
    if not quote_found(anchor, candidate):
        problems.append(f"the anchor {anchor[:60]!r} is not the candidate's words: copy a phrase from their answer")
    if kind not in KINDS:
        problems.append(f'"kind" {kind!r} is not one of {", ".join(KINDS)}')
    target = data.get("target_point")
    if target is not None and (not isinstance(target, int) or isinstance(target, bool)
                               or not 0 <= target < len(question.key_points)):
        problems.append(f'"target_point" {target!r} is not a key point index or null')
    elif target in covered:
        problems.append(f"key point {target} is already covered: ask about something the candidate missed")
    for text, mark in ((zh, "？?"), (en, "?")):
        if text[-1] not in mark:
            problems.append(f"{text[:40]!r} is not a question (end it with a question mark)")
    for text in (zh, en):
        taught = taught_fragment(text, question, candidate)
        if taught:
            problems.append(f"the question gives away the answer ({taught[:50]!r}): ask, do not teach")
    if normalise(zh) in {normalise(a) for a in asked}:
        problems.append("that follow-up was already asked")
    if problems:
        return None, problems
    return AnchoredFollowUp(Text(zh, en), anchor, kind, target), []


class LLMInterviewer:
    """The session's interviewer when ``rlprep mock --llm`` is on (the offline one is in :mod:`.session`)."""

    def __init__(self, client: ChatClient, offline: Callable[..., Judgement], ask_first: bool = True):
        self.client = client
        self.offline = offline
        self.ask_first = ask_first
        """Whether the front end asks the learner before the first call (False: ``--no-confirm``, shown only)."""
        self.confirm: Callable[[str], bool] | None = None
        """Set by the front end: shown the first request before it is sent, returns whether to send it. Nothing is
        sent while it is None."""
        self.status: Callable[[str], None] | None = None
        """Set by the front end: told before each call, so a slow model does not look like a hang."""
        self.consented = False
        self.sends = "Your answers in this session"
        """What the requests carry, as the consent text says it."""
        self.offline_reason: str | None = None
        """Why the model is no longer asked (declined, unreachable, timed out); None while it is."""
        self._notices: list[str] = []

    @property
    def model(self) -> str:
        return self.client.config.model

    def take_notices(self) -> list[str]:
        """What the session must tell the learner since the last call (fallbacks, going offline)."""
        notices, self._notices = self._notices, []
        return notices

    def notice(self, text: str) -> None:
        """Something the front end must tell the learner (printed as ``note:``)."""
        self._notices.append(text)

    def send(self, messages: list[dict], schema: dict, what: str, max_tokens: int, temperature: float) -> str:
        """One call for ``what`` (shown to the learner while it runs): the consent step first, and an unreachable or
        timed-out endpoint turns the interviewer offline. Raises :class:`LLMError`."""
        if self.offline_reason is not None:
            raise LLMError("offline", self.offline_reason)
        if not self.consented:
            text = consent_text(self.client.config, messages, self.sends)
            if self.confirm is None or not self.confirm(text):
                self._go_offline("you chose not to send anything" if self.confirm else "no one was asked to agree")
                raise LLMError("declined", self.offline_reason)
            self.consented = True
        if self.status is not None:
            self.status(f"(asking {self.model} for {what}…)")
        try:
            return self.client.complete(messages, max_tokens=max_tokens, temperature=temperature, schema=schema,
                                        schema_name=what.split()[0].replace("-", "_")).text
        except LLMError as err:
            if err.kind in ("connection", "timeout"):
                self._go_offline(str(err))
            raise

    def _go_offline(self, why: str) -> None:
        self.offline_reason = why
        self._notices.append(f"{self.model} is no longer asked for this session ({why}): the bank's follow-ups and "
                             "the offline scorer take over")

    # -- the interviewer protocol (rlprep.interview.session.MockSession) ---------------------------------------
    def first_follow_up(self, record: AnswerRecord, rng: random.Random) -> FollowUp | AnchoredFollowUp:
        follow_up = self._ask(record)
        if follow_up is None:
            return rng.choice(record.question.follow_ups)
        return follow_up

    def next_follow_up(self, record: AnswerRecord) -> AnchoredFollowUp | None:
        if len(record.exchanges) >= MAX_FOLLOW_UPS or not isinstance(record.exchanges[0].follow_up, AnchoredFollowUp):
            return None  # at most three; and when the first came from the bank's ladder, that one is all
        return self._ask(record)

    def judge(self, record: AnswerRecord) -> Judgement:
        if self.offline_reason is not None:
            return record.judgement
        judgement = llm_judgement(
            lambda m: self.send(m, JUDGEMENT_SCHEMA, "judgement", JUDGE_MAX_TOKENS, 0.0),
            record.question, record.answer, record.transcript(), self.offline, self.model)
        return judgement  # a fallback's note is on the scorecard

    def _ask(self, record: AnswerRecord) -> AnchoredFollowUp | None:
        exchanges = record.transcript()
        n = len(exchanges) + 1
        candidate = "\n".join([record.answer] + [reply for _, reply in exchanges if reply])
        covered = record.covered
        asked = [q for q, _ in exchanges]
        messages = follow_up_messages(record.question, record.answer, exchanges, covered)
        try:
            result, problems = ask_checked(
                lambda m: self.send(m, FOLLOW_UP_SCHEMA, f"follow-up {n}", FOLLOW_UP_MAX_TOKENS, 0.3), messages,
                lambda data: check_follow_up(data, record.question, candidate, covered, asked, n))
        except LLMError as err:
            if err.kind not in ("offline", "declined", "connection", "timeout"):
                self._notices.append(f"{self.model} could not write follow-up {n} ({err}): " + _instead(n))
            return None
        if result is None:
            self._notices.append(f"{self.model} wrote no valid follow-up {n} in two tries ({problems[-1]}): "
                                 + _instead(n))
            return None
        return None if result == "done" else result


def _instead(n: int) -> str:
    return "the bank's follow-up instead" if n == 1 else "no further follow-up for this question"


def from_environment(scorer: str | None, ask_first: bool = True) -> LLMInterviewer:
    """The model interviewer of ``--llm`` (``rlprep mock`` and ``--defend``) from the RLPREP_LLM_* settings (an
    :class:`RlprepError` names a missing one), falling back to the offline scorer ``scorer`` (None: the default)."""
    from rlprep.interview.offline_scorers import offline_scorer

    return LLMInterviewer(ChatClient(LLMConfig.from_env()), offline_scorer(scorer), ask_first=ask_first)
