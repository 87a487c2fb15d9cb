"""A mock-interview session: settings and presets, question planning, scoring, and the text it shows.

:class:`MockSession` is the one state machine behind both front ends (the terminal loop in ``terminal.py`` and
the notebook widget in ``widget.py``): it plans the questions, times each answer, scores key-point coverage and
saves every step to the history as soon as it happens.

Coverage is automatic and approximate: a key point counts as covered when the answer (with the follow-up
answer) contains one of its terms, case-insensitively. A term in Latin letters or digits must start at a word
start ("clip" matches "clipping" but "TD" does not match "std"); other terms (Chinese, symbols) match anywhere.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from typing import Callable

from rlprep.errors import RlprepError
from rlprep.interview.bank import TOPICS, FollowUp, Question, load_bank
from rlprep.interview.history import History

LANGS = ("zh", "en", "both")


@dataclass(frozen=True)
class Preset:
    """A named session setup."""

    description: str
    n_questions: int
    minutes: float
    topics: tuple[str, ...] = ()
    id_prefix: str | None = None
    first: tuple[str, ...] = ()
    max_per_topic: int | None = None


PRESETS: dict[str, Preset] = {
    "third-round": Preset("a 45-minute third-round interview: the self-introduction, then 8 W questions across topics "
                          "(at most 2 per topic), 5 minutes each", 9, 5.0, id_prefix="W", first=("W01",), max_per_topic=2),
    "rl-core": Preset("RL fundamentals: GAE, PPO, importance sampling, DPO, GRPO, entropy; 6 questions x 5 min", 6, 5.0,
                      topics=("gae", "ppo", "importance-sampling", "dpo", "grpo", "entropy")),
    "agentic": Preset("agentic RL, reward design and reward hacking; 5 questions x 5 min", 5, 5.0,
                      topics=("agentic", "reward-design", "reward-hacking")),
    "multimodal": Preset("multimodal models and contrastive learning; 5 questions x 5 min", 5, 5.0,
                         topics=("multimodal",)),
    "topic-guide": Preset("the G questions of the topic guide; 6 questions x 5 min", 6, 5.0, id_prefix="G",
                          max_per_topic=2),
    "frontier": Preset("the post-training algorithm atlas (A questions): Dr. GRPO, DAPO vs CISPO, RLOO vs GRPO, "
                       "DPO's variants, GSPO, on-policy distillation, SAPO's soft gate, ORPO/SimPO, hinge and "
                       "robust DPO; 4 questions x 5 min", 4, 5.0, id_prefix="A"),
    "quick": Preset("a 10-minute warm-up: 3 questions x 3 min", 3, 3.0),
}


@dataclass
class SessionSettings:
    """How a session is set up (the CLI's options and the widget's arguments)."""

    n_questions: int = 5
    """How many questions to ask."""
    minutes: float = 5.0
    """Time per question; answering later is allowed and recorded as over time."""
    topics: tuple[str, ...] = ()
    """Only questions with one of these topics (empty: all)."""
    ids: tuple[str, ...] = ()
    """Exactly these questions, in this order (overrides topics and the spaced-repetition order)."""
    id_prefix: str | None = None
    """Only W (third-round list) or G (topic guide) questions."""
    first: tuple[str, ...] = ()
    """Questions that open the session when in the pool (the third-round preset opens with W01)."""
    max_per_topic: int | None = None
    """At most this many questions sharing a first topic, for a mix."""
    lang: str = "both"
    """Display language: zh, en or both."""
    seed: int | None = None
    """Seeds the tie-breaks and the follow-up choice (scripted sessions)."""
    preset: str | None = None
    """The preset these settings came from, for the record."""

    def __post_init__(self) -> None:
        self.topics = tuple(self.topics)
        self.ids = tuple(i.upper() for i in self.ids)
        if self.n_questions < 1:
            raise RlprepError(f"the number of questions must be at least 1, got {self.n_questions}",
                              "pass --questions 1 or more")
        if not self.minutes > 0:
            raise RlprepError(f"minutes per question must be positive, got {self.minutes}", "pass e.g. --minutes 5")
        unknown = [t for t in self.topics if t not in TOPICS]
        if unknown:
            raise RlprepError(f"unknown topic(s) {', '.join(unknown)}", f"choose from: {', '.join(TOPICS)}")
        if self.lang not in LANGS:
            raise RlprepError(f"unknown display language {self.lang!r}", "use --lang zh, en or both")

    @classmethod
    def from_preset(cls, name: str, **overrides) -> SessionSettings:
        """The preset's settings, with any given (non-None) field overridden."""
        if name not in PRESETS:
            raise RlprepError(f"unknown preset {name!r}", f"choose from: {', '.join(PRESETS)}")
        p = PRESETS[name]
        values = dict(n_questions=p.n_questions, minutes=p.minutes, topics=p.topics, id_prefix=p.id_prefix,
                      first=p.first, max_per_topic=p.max_per_topic, preset=name)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def as_record(self) -> dict:
        return {"n_questions": self.n_questions, "minutes": self.minutes, "topics": list(self.topics),
                "ids": list(self.ids), "id_prefix": self.id_prefix, "preset": self.preset, "seed": self.seed}


# -- scoring ----------------------------------------------------------------------------------------------------
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


# -- planning ---------------------------------------------------------------------------------------------------
def plan_questions(bank: dict[str, Question], settings: SessionSettings, history: History | None = None,
                   now: float | None = None) -> list[Question]:
    """Pick the session's questions: explicit ids as given, else the pool in spaced-repetition order."""
    if settings.ids:
        missing = [i for i in settings.ids if i not in bank]
        if missing:
            raise RlprepError(f"no bank entry for {', '.join(missing)}",
                              f"choose ids from: {', '.join(bank) or '(the bank is empty)'}")
        return [bank[i] for i in settings.ids]
    pool = [q for q in bank.values()
            if (settings.id_prefix is None or q.id.startswith(settings.id_prefix))
            and (not settings.topics or set(q.topics) & set(settings.topics))]
    if not pool:
        raise RlprepError(
            f"no question in the bank matches topics={list(settings.topics) or 'all'} ids={settings.id_prefix or 'W+G'}"
            f" ({len(bank)} entries loaded)",
            "pick other --topics (rlprep mock --list shows the bank), or check that the bank is installed")
    ids = [q.id for q in pool]
    if history is not None:
        ordered = history.prioritise(ids, now=now, seed=settings.seed)
    else:
        ordered = ids[:]
        random.Random(settings.seed).shuffle(ordered)
    ordered = [i for i in settings.first if i in ids] + [i for i in ordered if i not in settings.first]
    chosen: list[str] = []
    per_topic: dict[str, int] = {}
    for qid in ordered:
        topic = bank[qid].topics[0]
        if settings.max_per_topic is not None and per_topic.get(topic, 0) >= settings.max_per_topic:
            continue
        chosen.append(qid)
        per_topic[topic] = per_topic.get(topic, 0) + 1
        if len(chosen) == settings.n_questions:
            break
    if len(chosen) < settings.n_questions:  # the mix limit left seats empty: fill them in priority order
        chosen += [q for q in ordered if q not in chosen][: settings.n_questions - len(chosen)]
    return [bank[q] for q in chosen]


# -- the state machine --------------------------------------------------------------------------------------------
@dataclass
class AnswerRecord:
    """One question's progress inside a session."""

    question: Question
    asked_at: float
    limit_seconds: float
    seconds: float = 0.0
    answer: str = ""
    answer_id: int | None = None
    follow_up: FollowUp | None = None
    follow_up_answer: str | None = None
    covered: list[int] = field(default_factory=list)
    self_rating: int | None = None
    interrupted: bool = False

    @property
    def over_time(self) -> bool:
        return self.seconds > self.limit_seconds

    @property
    def coverage(self) -> float:
        return len(self.covered) / len(self.question.key_points)


class MockSession:
    """A session's questions, clock, scoring and saving; driven by the terminal loop or the widget.

    Per question: :meth:`ask` starts the clock, :meth:`submit_answer` saves the answer and returns the follow-up
    (None for an empty answer), :meth:`submit_follow_up` saves that answer and re-scores, :meth:`rate` saves
    the self-rating. Each call is one committed transaction.
    """

    def __init__(self, settings: SessionSettings | None = None, bank: dict[str, Question] | None = None,
                 history: History | None = None, clock: Callable[[], float] = time.monotonic,
                 wallclock: Callable[[], float] = time.time):
        self.settings = settings or SessionSettings()
        self.bank = bank if bank is not None else load_bank()
        self.history = history if history is not None else History()
        self.clock = clock
        self.wallclock = wallclock
        self.questions = plan_questions(self.bank, self.settings, self.history, now=wallclock())
        self.records: list[AnswerRecord] = []
        self.session_id: int | None = None
        self._rng = random.Random(self.settings.seed)
        self._started: float | None = None

    @property
    def current(self) -> AnswerRecord | None:
        return self.records[-1] if self.records else None

    def ask(self) -> Question:
        """Start the next question's clock and return it."""
        if len(self.records) >= len(self.questions):
            raise ValueError("the session has no more questions; check .done before calling ask()")
        question = self.questions[len(self.records)]
        self.records.append(AnswerRecord(question, asked_at=self.wallclock(), limit_seconds=self.settings.minutes * 60))
        self._started = self.clock()
        return question

    def elapsed(self) -> float:
        """Seconds since the current question was asked (frozen once answered)."""
        record = self.current
        if record is None:
            return 0.0
        if record.answer_id is not None:
            return record.seconds
        return self.clock() - self._started

    def remaining(self) -> float:
        """Seconds left for the current question; negative when over time."""
        record = self.current
        return 0.0 if record is None else record.limit_seconds - self.elapsed()

    def submit_answer(self, text: str, interrupted: bool = False) -> FollowUp | None:
        """Score and save the main answer; returns the follow-up to ask (None if the answer was empty)."""
        record = self.current
        if record is None or record.answer_id is not None:
            raise ValueError("call ask() before submit_answer()")
        record.seconds = self.clock() - self._started
        record.answer = text.strip()
        record.interrupted = interrupted
        record.covered = covered_points(record.question, record.answer)
        if record.answer and not interrupted:
            record.follow_up = self._rng.choice(record.question.follow_ups)
        if self.session_id is None:
            self.session_id = self.history.start_session(self.settings.as_record(), now=record.asked_at)
        record.answer_id = self.history.record_answer(
            self.session_id, record.question.id, asked_at=record.asked_at, seconds=record.seconds,
            limit_seconds=record.limit_seconds, answer=record.answer, covered=record.covered,
            n_key_points=len(record.question.key_points),
            follow_up=record.follow_up.q.zh if record.follow_up else None, interrupted=interrupted)
        return record.follow_up

    def submit_follow_up(self, text: str) -> list[int]:
        """Save the follow-up answer; returns the key points covered by both answers together."""
        record = self.current
        if record is None or record.answer_id is None or record.follow_up is None:
            raise ValueError("submit_follow_up() needs a submitted, non-empty main answer")
        record.follow_up_answer = text.strip()
        record.covered = covered_points(record.question, record.answer, record.follow_up_answer)
        self.history.record_follow_up(record.answer_id, record.follow_up_answer, record.covered)
        return record.covered

    def rate(self, self_rating: int) -> None:
        """Save the learner's self-rating (1-5) for the current question."""
        record = self.current
        if record is None or record.answer_id is None:
            raise ValueError("rate() needs a submitted answer")
        self.history.record_rating(record.answer_id, self_rating)
        record.self_rating = self_rating

    def finish(self) -> None:
        if self.session_id is not None:
            self.history.end_session(self.session_id, now=self.wallclock())


# -- text rendering (terminal and interviewer sheet) ----------------------------------------------------------
def clock_text(seconds: float) -> str:
    """``m:ss`` for a duration (its absolute value)."""
    seconds = int(round(abs(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


def scorecard_lines(record: AnswerRecord, lang: str) -> list[str]:
    q = record.question
    lines = [f"Key points: {len(record.covered)}/{len(q.key_points)} covered "
             "(automatic and approximate: a point counts when your answer contains one of its terms)"]
    for i, kp in enumerate(q.key_points):
        mark = "[x]" if i in record.covered else "[ ]"
        shown = kp.text().show(lang).splitlines()
        lines += [f"  {mark} {line}" if j == 0 else f"      {line}" for j, line in enumerate(shown)]
    return lines


RUBRIC = (
    (5, "every key point unprompted, formulas and numbers right, the follow-up answered in depth"),
    (4, "most key points, one small gap, the follow-up answered"),
    (3, "the core idea right, but two or more key points missing or drawn out by prompting"),
    (2, "partial or vague, or a factual error"),
    (1, "wrong, or no answer"),
)


def interviewer_sheet(questions: list[Question], settings: SessionSettings, fmt: str = "text") -> str:
    """The pair-practice sheet: each question, what a strong answer contains, follow-ups with short answers, rubric."""
    md = fmt == "markdown"
    lang = settings.lang
    total = settings.minutes * len(questions)
    out: list[str] = []
    plural = "s" if len(questions) != 1 else ""
    title = f"Interviewer's sheet: {len(questions)} question{plural}, {settings.minutes:g} min each ({total:g} min)"
    out += [f"# {title}" if md else title, ""]
    if settings.seed is not None:
        out += [f"Seed {settings.seed}: the same options with --seed {settings.seed} print this sheet again.", ""]
    out += ["Read each question aloud, let the candidate answer for the time given, ask one follow-up, then score "
            "with the rubric. The strong-answer points are for you, not for the candidate.", ""]
    for n, q in enumerate(questions, 1):
        head = f"{n}. {q.id} · {', '.join(q.topics)} · difficulty {q.difficulty}"
        out += [f"## {head}" if md else head]
        for line in q.question.show(lang).splitlines():
            out.append(f"> {line}" if md else f"   {line}")
        out += ["", "**A strong answer contains:**" if md else "   A strong answer contains:"]
        for kp in q.key_points:
            out.append(("- " if md else "   - ") + kp.text().show(lang).replace("\n", " / "))
        out += ["", "**Follow-ups (追问) and short answers:**" if md else "   Follow-ups (追问) and short answers:"]
        for fu in q.follow_ups:
            out.append(("- Q: " if md else "   - Q: ") + fu.q.show(lang).replace("\n", " / "))
            out.append(("  A: " if md else "     A: ") + fu.a.show(lang).replace("\n", " / "))
        blanks = f"Score (1-5): {'_' * 6}   Notes: {'_' * 40}"  # to write in
        out += ["", "**" + blanks.replace("_", "\\_") + "**" if md else f"   {blanks}", ""]
    out += ["## Scoring rubric" if md else "Scoring rubric"]
    for score, text in RUBRIC:
        out.append(f"- **{score}**: {text}" if md else f"   {score}  {text}")
    total = f"Total: {'_' * 6} / {5 * len(questions)}"
    out += ["", "**" + total.replace("_", "\\_") + "**" if md else total]
    return "\n".join(out) + "\n"


def saved_text(session: MockSession) -> str:
    """``"N answer(s)"``: how many answers of the session are saved."""
    n = sum(1 for r in session.records if r.answer_id is not None)
    return f"{n} answer{'s' if n != 1 else ''}"


def summary_text(session: MockSession) -> str:
    lines = [f"Session summary ({saved_text(session)} saved to {session.history.path}):",
             f"  {'id':<4} {'covered':>8} {'rating':>6} {'time':>6}  note"]
    for r in session.records:
        note = "over time" if r.over_time else ""
        if not r.answer:
            note = "skipped"
        rating = str(r.self_rating) if r.self_rating else "-"
        covered = f"{len(r.covered)}/{len(r.question.key_points)}"
        lines.append(f"  {r.question.id:<4} {covered:>8} {rating:>6} "
                     f"{clock_text(r.seconds):>6}  {note}")
    lines.append("From tomorrow, low scores come back first (Leitner boxes: a question is due again after 1, 3 or 7 days; "
                 "today, questions you have not seen come first). `rlprep progress` shows mastery.")
    return "\n".join(lines)
