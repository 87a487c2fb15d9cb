"""``MockInterview``: the terminal session as an ipywidgets UI for JupyterLab.

The widget drives the same :class:`~rlprep.interview.session.MockSession` as ``rlprep mock``: planning,
timing, key-point scoring and saving all happen there, so each answer is in the history the moment its
button is pressed. The countdown label ticks once a second while the kernel is idle (a timer on the
kernel's event loop) and is refreshed on every keystroke and button press.

Every button has a method twin for scripting and tests: :meth:`submit_answer`, :meth:`submit_follow_up`,
:meth:`rate`, :meth:`next_question`.
"""

from __future__ import annotations

import asyncio
import html
import time
from typing import Callable

import ipywidgets as widgets

from rlprep.interview.bank import Question
from rlprep.interview.history import AnswerHistory
from rlprep.interview.session import MockSession, SessionSettings, clock_text, summary_text


COVERED_COLOUR, MISSED_COLOUR, OVER_COLOUR = "#1a7f37", "#8c959f", "#cf222e"
"""Green, grey and red: with the marks below, coverage and over-time show without any emoji font."""


def _hidden(widget: widgets.Widget, hidden: bool) -> None:
    widget.layout.display = "none" if hidden else None


def _mark(covered: bool) -> str:
    """● covered / ○ missed: both are in every CJK font (GB 2312, JIS X 0208), unlike ✅ and ⬜, and coloured."""
    colour, mark = (COVERED_COLOUR, "●") if covered else (MISSED_COLOUR, "○")
    return f"<span style='color:{colour}'>{mark}</span>"


class MockInterview:
    """A mock interview in a notebook cell: ``MockInterview(preset="quick")`` as the cell's last line.

    Arguments mirror ``rlprep mock``: ``questions``, ``topics`` (list), ``minutes``, ``ids`` (list), ``preset``,
    ``lang`` ("zh", "en", "both"), ``seed``. ``bank`` and ``history`` default to the package bank and the
    learner's history file; ``clock`` is for tests.
    """

    def __init__(self, questions: int | None = None, topics: list[str] | None = None, minutes: float | None = None,
                 ids: list[str] | None = None, preset: str | None = None, lang: str = "both", seed: int | None = None,
                 bank: dict[str, Question] | None = None, history: AnswerHistory | None = None,
                 clock: Callable[[], float] = time.monotonic):
        overrides = dict(n_questions=questions, minutes=minutes, topics=tuple(topics) if topics else None,
                         ids=tuple(ids) if ids else None, lang=lang, seed=seed)
        if ids and questions is None:
            overrides["n_questions"] = len(ids)
        settings = (SessionSettings.from_preset(preset, **overrides) if preset
                    else SessionSettings(**{k: v for k, v in overrides.items() if v is not None}))
        self.session = MockSession(settings, bank=bank, history=history, clock=clock)
        self.lang = settings.lang
        self._timer: asyncio.TimerHandle | None = None
        self._follow_up_asked = 0.0  # session.clock() when the open follow-up was asked

        self.header = widgets.HTML()
        self.question_html = widgets.HTML()
        self.countdown = widgets.Label()
        self.answer_box = widgets.Textarea(placeholder="Type your answer (Chinese or English)…",
                                           layout=widgets.Layout(width="100%", height="140px"))
        self.submit_button = widgets.Button(description="Submit answer", button_style="primary")
        self.follow_up_html = widgets.HTML()
        self.follow_up_clock = widgets.Label()
        self.follow_up_box = widgets.Textarea(placeholder="Answer the follow-up (追问)…",
                                              layout=widgets.Layout(width="100%", height="90px"))
        self.follow_up_button = widgets.Button(description="Submit follow-up", button_style="primary")
        self.scorecard_html = widgets.HTML()
        self.rating = widgets.IntSlider(value=3, min=1, max=5, description="Self-rating",
                                        style={"description_width": "initial"})
        self.rate_button = widgets.Button(description="Save rating")
        self.next_button = widgets.Button(description="Next question", button_style="success")
        self.status = widgets.HTML()
        self.rating_row = widgets.HBox([self.rating, self.rate_button])

        self.submit_button.on_click(lambda _: self.submit_answer())
        self.follow_up_button.on_click(lambda _: self.submit_follow_up())
        self.rate_button.on_click(lambda _: self.rate())
        self.next_button.on_click(lambda _: self.next_question())
        self.answer_box.observe(lambda _: self._tick_label(), names="value")
        self.follow_up_box.observe(lambda _: self._tick_label(), names="value")

        self.ui = widgets.VBox([
            self.header, self.question_html, self.countdown, self.answer_box, self.submit_button,
            self.follow_up_html, self.follow_up_clock, self.follow_up_box, self.follow_up_button, self.scorecard_html,
            self.rating_row, self.next_button, self.status,
        ])
        self.phase = "idle"
        self.next_question()

    # -- display ------------------------------------------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs):
        return self.ui._repr_mimebundle_(**kwargs)

    def _text(self, text) -> str:
        return "<br>".join(html.escape(line) for line in text.show(self.lang).splitlines())

    def _set_phase(self, phase: str) -> None:
        self.phase = phase
        answered = ("follow_up", "rating", "rated")
        # An answer stays on screen, read-only, once it is in: the follow-up and the key points are read against it.
        _hidden(self.answer_box, phase not in ("answer",) + answered)
        _hidden(self.submit_button, phase != "answer")
        _hidden(self.follow_up_html, phase not in answered)
        _hidden(self.follow_up_clock, phase != "follow_up")
        _hidden(self.follow_up_box, phase != "follow_up")  # once answered, "Your answer:" above shows it
        _hidden(self.follow_up_button, phase != "follow_up")
        _hidden(self.scorecard_html, phase not in ("rating", "rated"))
        _hidden(self.rating_row, phase != "rating")
        _hidden(self.next_button, phase not in ("rating", "rated"))  # the rating is optional
        self.answer_box.disabled = phase != "answer"

    def _tick_label(self) -> None:
        """The countdown while the answer is open; once it is in, how long it took (the clock has stopped)."""
        record = self.session.current
        if record is None:
            self.countdown.value = ""
        elif record.answer_id is not None:
            self.countdown.value = (f"Over time by {clock_text(record.seconds - record.limit_seconds)}"
                                    if record.over_time else f"Answered in {clock_text(record.seconds)}")
        else:
            left = self.session.remaining()
            self.countdown.value = (f"Time left {clock_text(left)}" if left >= 0 else
                                    f"Time is up: over by {clock_text(left)} (you can still answer; it is recorded)")
        over = record is not None and (record.over_time if record.answer_id is not None else self.session.remaining() < 0)
        self.countdown.style.text_color = OVER_COLOUR if over else None
        if self.phase == "follow_up":  # the follow-up's own clock (the answer's stopped when it was saved)
            self.follow_up_clock.value = f"Follow-up {clock_text(self.session.clock() - self._follow_up_asked)}"

    def _start_timer(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no kernel event loop (plain Python): the label updates on interaction only
            return

        def tick() -> None:
            self._tick_label()
            if self.phase in ("answer", "follow_up"):
                self._timer = loop.call_later(1.0, tick)

        self._stop_timer()
        self._timer = loop.call_later(1.0, tick)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- the steps (buttons call these; so can code) ------------------------------------------------------
    def next_question(self) -> None:
        """Show the next question and start its clock (or the summary when the session is over)."""
        s = self.session
        if self.phase in ("answer", "follow_up"):
            raise ValueError(f"submit the current {self.phase.replace('_', '-')} first")
        if len(s.records) >= len(s.questions):
            self._stop_timer()
            s.finish()
            self.header.value = "<b>Session over.</b>"
            self.question_html.value = f"<pre>{html.escape(summary_text(s))}</pre>"
            self.countdown.value = ""
            self._set_phase("done")
            return
        q = s.ask()
        self.answer_box.value = ""
        self.follow_up_box.value = ""
        self.header.value = (f"<b>Question {len(s.records)}/{len(s.questions)} · {q.id}</b> · "
                             f"{', '.join(q.topics)} · difficulty {q.difficulty}")
        self.question_html.value = f"<div style='font-size:1.1em'>{self._text(q.question)}</div>"
        self.follow_up_html.value = ""
        self.scorecard_html.value = ""
        self.status.value = ""
        self._set_phase("answer")
        self._tick_label()
        self._start_timer()

    def submit_answer(self, text: str | None = None) -> None:
        """Save the answer in the box (or ``text``); shows the follow-up, or the key points for an empty answer."""
        if self.phase != "answer":
            raise ValueError(f"no question is waiting for an answer (phase: {self.phase})")
        if text is not None:
            self.answer_box.value = text
        self._stop_timer()
        follow_up = self.session.submit_answer(self.answer_box.value)
        record = self.session.current
        timing = (f"over time by {clock_text(record.seconds - record.limit_seconds)}" if record.over_time
                  else f"answered in {clock_text(record.seconds)}")
        self._tick_label()
        self.status.value = f"<i>saved ({'skipped: empty answer' if not record.answer else timing})</i>"
        if follow_up is None:
            self._show_scorecard()
            return
        self.follow_up_html.value = f"<b>追问 / Follow-up</b><br>{self._text(follow_up.q)}"
        self._follow_up_asked = self.session.clock()
        self._set_phase("follow_up")
        self._tick_label()
        self._start_timer()

    def submit_follow_up(self, text: str | None = None) -> None:
        """Save the follow-up answer in its box (or ``text``) and reveal the key points."""
        if self.phase != "follow_up":
            raise ValueError(f"no follow-up is waiting for an answer (phase: {self.phase})")
        if text is not None:
            self.follow_up_box.value = text
        self._stop_timer()
        self.session.submit_follow_up(self.follow_up_box.value)
        follow_up = self.session.current.follow_up
        self.follow_up_html.value += (f"<br><i>Your answer:</i> {html.escape(self.follow_up_box.value) or '(empty)'}"
                                      f"<br><i>A short answer:</i> {self._text(follow_up.a)}")
        self.status.value = "<i>follow-up saved</i>"
        self._show_scorecard()

    def _show_scorecard(self) -> None:
        record = self.session.current
        q = record.question
        items = "".join(
            f"<li>{_mark(i in record.covered)} {self._text(kp.text())}</li>" for i, kp in enumerate(q.key_points))
        self.scorecard_html.value = (
            f"<b>Key points: {len(record.covered)}/{len(q.key_points)} covered</b> "
            "<i>(automatic and approximate: a point counts when your answer contains one of its terms, "
            f"in Chinese or English, unless it comes with a misconception's claim; scored by "
            f"{html.escape(record.judgement.scorer) if record.judgement else 'keyword'})</i>"
            f"<ul style='list-style:none'>{items}</ul>")
        self._set_phase("rating")

    def rate(self, value: int | None = None) -> None:
        """Save the self-rating from the slider (or ``value``, 1-5)."""
        if self.phase != "rating":
            raise ValueError(f"nothing to rate yet (phase: {self.phase})")
        if value is not None:
            self.rating.value = value
        self.session.rate(int(self.rating.value))
        self.status.value = f"<i>rating {self.rating.value} saved</i>"
        self._set_phase("rated")
