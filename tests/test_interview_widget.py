"""MockInterview (the notebook widget) drives the same session: each step saved at once, countdown, phases."""

from __future__ import annotations

import pytest

from interview_support import FIXTURE_BANK
from rlprep.interview.bank import load_bank
from rlprep.interview.history import History
from rlprep.interview.widget import MockInterview

BANK = load_bank(FIXTURE_BANK)


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_widget_saves_each_step_and_shows_the_countdown(tmp_path):
    clock = FakeClock()
    with History(tmp_path / "h.sqlite") as history:
        mi = MockInterview(ids=["W04", "W05"], minutes=1, seed=0, bank=BANK, history=history, clock=clock)
        assert mi.phase == "answer" and mi.countdown.value == "⏱ 1:00 left"
        clock.t = 20.0
        mi.answer_box.value = "the TD residual"          # typing refreshes the countdown
        assert mi.countdown.value == "⏱ 0:40 left"
        with pytest.raises(ValueError, match="submit the current answer first"):
            mi.next_question()
        clock.t = 90.0
        mi.submit_button.click()                         # the button and submit_answer() are the same step
        assert history.answers()[0]["answer"] == "the TD residual"  # saved before the follow-up
        assert history.answers()[0]["over_time"] == 1 and "over time by 0:30" in mi.countdown.value
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
