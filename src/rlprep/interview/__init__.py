"""Mock interviews: the question bank, timed sessions, history with spaced repetition, and progress.

``MockInterview`` (the notebook widget) and ``plot_progress`` import ipywidgets/matplotlib on first use.
"""

from __future__ import annotations

from rlprep.interview.bank import FollowUp, KeyPoint, Question, load_bank
from rlprep.interview.history import AnswerHistory, record_lab_grade
from rlprep.interview.intro import build_intro, example_intro, render_intro_template
from rlprep.interview.render import render_section_extras, render_spoken
from rlprep.interview.session import MockSession, SessionSettings

__all__ = ["AnswerHistory", "FollowUp", "KeyPoint", "MockInterview", "MockSession", "Question", "SessionSettings",
           "build_intro", "example_intro", "load_bank", "plot_progress", "record_lab_grade",
           "render_intro_template", "render_section_extras", "render_spoken"]


def __getattr__(name: str):
    if name == "MockInterview":
        from rlprep.interview.widget import MockInterview

        return MockInterview
    if name == "plot_progress":
        from rlprep.interview.progress import plot_progress

        return plot_progress
    raise AttributeError(f"module 'rlprep.interview' has no attribute {name!r}")
