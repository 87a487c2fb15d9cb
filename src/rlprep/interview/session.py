"""A mock-interview session: settings and presets, question planning, scoring, and the text it shows.

:class:`MockSession` is the one state machine behind both front ends (the terminal loop in ``terminal.py`` and
the notebook widget in ``widget.py``): it plans the questions, times each answer, scores key-point coverage and
saves every step to the history as soon as it happens.

Coverage is automatic and approximate: a key point counts as covered when the answer (with the follow-up
answer) contains one of its terms, case-insensitively. A term in Latin letters or digits must start at a word
start ("clip" matches "clipping" but "TD" does not match "std"); other terms (Chinese, symbols) match anywhere.
The default offline scorer (``claims``, :mod:`rlprep.interview.scoring`) also counts a misconception's claim stated
in the answer against the points said with it; ``keyword`` is the terms alone.

Who asks the follow-ups and gives the final judgement is the session's interviewer: :class:`OfflineInterviewer`
(one follow-up from the entry's ladder, the offline scorer's judgement) unless ``rlprep mock --llm`` passes a
:class:`~rlprep.interview.llm_interviewer.LLMInterviewer` (1-3 follow-ups from the learner's own words, a model's
judgement).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Callable

from rlprep.errors import RlprepError
from rlprep.interview.bank import TOPICS, FollowUp, Question, load_bank
from rlprep.interview.history import AnswerHistory
from rlprep.interview.scoring import covered_points  # noqa: F401 - imported from here by callers and tests
from rlprep.interview.offline_scorers import offline_scorer
from rlprep.interview.scoring import Judgement, judgement_lines
from rlprep.interview.scoring import term_matches  # noqa: F401 - imported from here by callers and tests

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
    "third-round": Preset("a third-round interview: the self-introduction, then 8 W questions across topics "
                          "(at most 2 per topic), 5 minutes each (45 minutes), then a coding round at the terminal "
                          "(rlprep mock --no-coding skips it)", 9, 5.0, id_prefix="W", first=("W01",), max_per_topic=2),
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
    """Only questions whose id starts with this: W (third-round list), G (topic guide) or A (algorithm atlas, the
    ``frontier`` preset); None: every question of the bank."""
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
    scorer: str | None = None
    """The offline scorer (``claims`` or ``keyword``; None: the default, :data:`rlprep.interview.offline_scorers.DEFAULT_SCORER`)."""
    llm: dict | None = None
    """With ``--llm``: the model's endpoint and name, for the record (never its key)."""

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
                "ids": list(self.ids), "id_prefix": self.id_prefix, "preset": self.preset, "seed": self.seed,
                "scorer": self.scorer, "llm": self.llm}


# -- planning ---------------------------------------------------------------------------------------------------
def plan_questions(bank: dict[str, Question], settings: SessionSettings, history: AnswerHistory | None = None,
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
            f"no question in the bank matches topics={list(settings.topics) or 'all'} ids={settings.id_prefix or 'W+G+A'}"
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
class Exchange:
    """One follow-up of a question and the learner's answer to it (None until answered)."""

    follow_up: FollowUp
    answer: str | None = None


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
    exchanges: list[Exchange] = field(default_factory=list)
    """Every follow-up asked, in order (``follow_up`` and ``follow_up_answer`` are the first one's)."""
    judgement: Judgement | None = None
    """The latest scoring of the answers so far; after :meth:`MockSession.judge`, the final one."""

    @property
    def over_time(self) -> bool:
        return self.seconds > self.limit_seconds

    def replies(self) -> list[str]:
        """The learner's non-empty follow-up answers, in order."""
        return [e.answer for e in self.exchanges if e.answer]

    def transcript(self) -> list[tuple[str, str | None]]:
        """Each follow-up as ``(question, answer)``, the question in both languages."""
        return [(f"{e.follow_up.q.zh} / {e.follow_up.q.en}", e.answer) for e in self.exchanges]

    @property
    def coverage(self) -> float:
        return len(self.covered) / len(self.question.key_points)


class OfflineInterviewer:
    """The interviewer without a model: one follow-up drawn from the entry's ladder; the offline scorer judges."""

    def take_notices(self) -> list[str]:
        return []

    def first_follow_up(self, record: AnswerRecord, rng: random.Random) -> FollowUp:
        return rng.choice(record.question.follow_ups)

    def next_follow_up(self, record: AnswerRecord) -> None:
        return None

    def judge(self, record: AnswerRecord) -> Judgement:
        return record.judgement


class MockSession:
    """A session's questions, clock, scoring and saving; driven by the terminal loop or the widget.

    Per question: :meth:`ask` starts the clock, :meth:`submit_answer` saves the answer and returns the follow-up
    (None for an empty answer), :meth:`submit_follow_up` saves that answer and re-scores, :meth:`next_follow_up`
    asks the interviewer for another (None when done), :meth:`judge` saves the final judgement, :meth:`rate` saves
    the self-rating. Each step is committed before the session moves on.
    """

    def __init__(self, settings: SessionSettings | None = None, bank: dict[str, Question] | None = None,
                 history: AnswerHistory | None = None, clock: Callable[[], float] = time.monotonic,
                 wallclock: Callable[[], float] = time.time, interviewer=None):
        self.settings = settings or SessionSettings()
        self.offline = offline_scorer(self.settings.scorer)
        self.interviewer = interviewer if interviewer is not None else OfflineInterviewer()
        self.bank = bank if bank is not None else load_bank()
        self.history = history if history is not None else AnswerHistory()
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
        """Score and save the main answer; returns the follow-up to ask (None if the answer was empty).

        The answer is saved before the interviewer writes the follow-up, so a model's slow or failed reply (or a
        stop while it is awaited) never costs the answer."""
        record = self.current
        if record is None or record.answer_id is not None:
            raise ValueError("call ask() before submit_answer()")
        record.seconds = self.clock() - self._started
        record.answer = text.strip()
        record.interrupted = interrupted
        self._score(record)
        if self.session_id is None:
            self.session_id = self.history.start_session(self.settings.as_record(), now=record.asked_at)
        record.answer_id = self.history.record_answer(
            self.session_id, record.question.id, asked_at=record.asked_at, seconds=record.seconds,
            limit_seconds=record.limit_seconds, answer=record.answer, covered=record.covered,
            n_key_points=len(record.question.key_points), interrupted=interrupted,
            judgement=record.judgement.as_record())
        if record.answer and not interrupted:
            self._add_follow_up(record, self.interviewer.first_follow_up(record, self._rng))
        return record.follow_up

    def submit_follow_up(self, text: str) -> list[int]:
        """Save the answer to the follow-up just asked; returns the key points covered by all answers together."""
        record = self.current
        if record is None or record.answer_id is None or not record.exchanges:
            raise ValueError("submit_follow_up() needs a submitted, non-empty main answer")
        exchange = record.exchanges[-1]
        if exchange.answer is not None:
            raise ValueError("this follow-up is answered already; next_follow_up() asks the next one")
        exchange.answer = text.strip()
        if len(record.exchanges) == 1:
            record.follow_up_answer = exchange.answer
        self._score(record)
        self.history.record_exchange_answer(record.answer_id, len(record.exchanges), exchange.answer, record.covered,
                                            record.judgement.as_record())
        return record.covered

    def next_follow_up(self) -> FollowUp | None:
        """The interviewer's next follow-up for the current question, or None when it has none (the offline
        interviewer asks one; a model up to three, each from what the learner said)."""
        record = self.current
        if record is None or not record.exchanges or not record.exchanges[-1].answer:
            return None
        return self._add_follow_up(record, self.interviewer.next_follow_up(record))

    def judge(self) -> Judgement:
        """The interviewer's final judgement of the current question (a model's, or the offline scorer's), saved
        with the name of the scorer that gave it."""
        record = self.current
        if record is None or record.answer_id is None:
            raise ValueError("judge() needs a submitted answer")
        judgement = self.interviewer.judge(record)
        if judgement is not record.judgement:
            record.judgement, record.covered = judgement, judgement.covered
            self.history.record_judgement(record.answer_id, judgement.covered, judgement.as_record())
        return judgement

    def notices(self) -> list[str]:
        """What the interviewer has to tell the learner since the last call (a model's invalid reply, going offline)."""
        return self.interviewer.take_notices()

    def _score(self, record: AnswerRecord) -> None:
        record.judgement = self.offline(record.question, record.answer, *record.replies())
        record.covered = record.judgement.covered

    def _add_follow_up(self, record: AnswerRecord, follow_up) -> FollowUp | None:
        if follow_up is None:
            return None
        record.exchanges.append(Exchange(follow_up))
        if len(record.exchanges) == 1:
            record.follow_up = follow_up
        detail = {"en": follow_up.q.en, "source": getattr(follow_up, "source", "bank"),
                  "anchor": getattr(follow_up, "anchor", None), "kind": getattr(follow_up, "kind", None),
                  "target_point": getattr(follow_up, "target_point", None)}
        self.history.record_exchange(record.answer_id, len(record.exchanges), follow_up.q.zh, detail)
        return follow_up

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
    """The key points with what the answers covered, and the scorer's verdict (:func:`judgement_lines`)."""
    if record.judgement is None:
        record.judgement = offline_scorer("keyword")(record.question, record.answer, *record.replies())
    return judgement_lines(record.question, record.judgement, lang)


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
