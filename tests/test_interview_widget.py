"""MockInterview (the notebook widget) drives the same session: each step saved at once, countdown, phases."""

from __future__ import annotations

import pytest

from interview_support import FIXTURE_BANK
from rlprep.interview.bank import load_bank
from rlprep.interview.history import AnswerHistory
from rlprep.interview.widget import MockInterview

BANK = load_bank(FIXTURE_BANK)


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_widget_saves_each_step_and_shows_the_countdown(tmp_path):
    clock = FakeClock()
    with AnswerHistory(tmp_path / "h.sqlite") as history:
        mi = MockInterview(ids=["W04", "W05"], minutes=1, seed=0, bank=BANK, history=history, clock=clock)
        assert mi.phase == "answer" and mi.countdown.value == "Time left 1:00"
        clock.t = 20.0
        mi.answer_box.value = "the TD residual"          # typing refreshes the countdown
        assert mi.countdown.value == "Time left 0:40"
        with pytest.raises(ValueError, match="submit the current answer first"):
            mi.next_question()
        clock.t = 90.0
        mi.submit_button.click()                         # the button and submit_answer() are the same step
        assert history.answers()[0]["answer"] == "the TD residual"  # saved before the follow-up
        assert history.answers()[0]["over_time"] == 1 and mi.countdown.value == "Over time by 0:30"
        assert mi.phase == "follow_up" and "追问" in mi.follow_up_html.value
        mi.submit_follow_up("Monte Carlo at λ=1")
        assert history.answers()[0]["covered"] == [0, 2]
        assert "2/3 covered" in mi.scorecard_html.value and "automatic and approximate" in mi.scorecard_html.value
        mi.rate(2)
        assert history.answers()[0]["self_rating"] == 2
        mi.next_question()
        mi.submit_answer("")                              # an empty answer: skipped, no follow-up
        assert mi.phase == "rating" and history.answers()[1]["answer"] == ""
        mi.next_question()
        assert mi.phase == "done" and "Session summary" in mi.question_html.value
    assert mi.ui.children  # a displayable VBox


EMOJI = ("✅", "⬜", "⏱", "❌", "⌛")


def _shown(mi: MockInterview) -> str:
    return " ".join(str(getattr(w, "value", "")) for w in (mi.header, mi.question_html, mi.countdown, mi.follow_up_html,
                                                            mi.scorecard_html, mi.status))


def test_timer_label_stays_on_the_answer_time_once_the_answer_is_in(tmp_path):
    clock = FakeClock()
    with AnswerHistory(tmp_path / "h.sqlite") as history:
        mi = MockInterview(ids=["W04"], minutes=5, seed=0, bank=BANK, history=history, clock=clock)
        clock.t = 137.0
        mi.submit_answer("the TD residual")
        assert mi.countdown.value == "Answered in 2:17"
        clock.t = 200.0
        mi.follow_up_box.value = "Monte Carlo"           # typing the follow-up used to bring back "2:43 left"
        mi._tick_label()                                 # and so does the once-a-second timer
        assert mi.countdown.value == "Answered in 2:17" and "left" not in mi.countdown.value
        mi.submit_follow_up()
        assert mi.countdown.value == "Answered in 2:17"


def test_marks_and_timer_need_no_emoji_font_and_time_up_is_red(tmp_path):
    clock = FakeClock()
    with AnswerHistory(tmp_path / "h.sqlite") as history:
        mi = MockInterview(ids=["W04"], minutes=1, seed=0, bank=BANK, history=history, clock=clock)
        assert mi.countdown.style.text_color is None
        clock.t = 61.0
        mi._tick_label()
        assert mi.countdown.value.startswith("Time is up: over by 0:01") and mi.countdown.style.text_color == "#cf222e"
        mi.submit_answer("the TD residual")
        mi.submit_follow_up("Monte Carlo")
        card = mi.scorecard_html.value
        assert card.count("●") == 2 and card.count("○") == 1   # covered / missed, in every CJK font
        assert "color:#1a7f37" in card and "color:#8c959f" in card
        assert not any(e in _shown(mi) for e in EMOJI)
