"""Mock-interview sessions end to end: scripted answers (file, pipe), follow-ups, scoring, saving, Ctrl-C, EOF."""

from __future__ import annotations

import io
import signal
import sys

import pytest

from interview_support import FIXTURE_BANK, LiveProcess, run_cli
from rlprep.errors import RlprepError
from rlprep.interview.bank import load_bank
from rlprep.interview.history import AnswerHistory
from rlprep.interview.session import (MockSession, SessionSettings, covered_points, interviewer_sheet, plan_questions,
                                      term_matches)
from rlprep.interview.terminal import run_terminal

BANK = load_bank(FIXTURE_BANK)

# W04 strong (all 3 points between answer and follow-up), W05 weak (nothing covered, rated 1), G08 fair.
SCRIPT = (
    "GAE sums the TD residual δ over time\nλ=0 is one-step TD\n\n"   # W04 answer (2 lines)
    "with λ=1 it is the Monte Carlo return\n\n"                      # W04 follow-up answer
    "5\n"                                                            # W04 rating
    "I am not sure\n\n"                                              # W05 answer
    "no idea\n\n"                                                    # W05 follow-up
    "1\n"                                                            # W05 rating
    "loop in reversed order and multiply by the done mask\n\n"       # G08 answer
    "returns are advantages plus values\n\n"                         # G08 follow-up
    "4\n"                                                            # G08 rating
)
IDS = ["--ids", "W04,W05,G08", "--seed", "0"]


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


# -- scoring ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("term, text, expected", [
    ("TD residual", "the td RESIDUAL is", True),      # case-insensitive
    ("clip", "PPO clipping", True),                  # a Latin term may be a word's prefix
    ("TD", "the std of advantages", False),           # ... but must start a word
    ("KL", "用KL惩罚", True),                           # Chinese around a Latin term is a boundary
    ("蒙特卡洛", "这是蒙特卡洛回报", True),                 # Chinese terms match anywhere
    ("δ", "Δ_t = r + γV' - V", True),                 # Greek casefolds
    ("monte carlo", "monte-carlo", False),
])
def test_term_matching(term, text, expected):
    assert term_matches(term, text) is expected


def test_coverage_counts_a_point_once_in_either_language():
    q = BANK["W04"]
    assert covered_points(q, "TD 残差 and the TD residual") == [0]
    assert covered_points(q, "一步 TD", "Monte Carlo") == [1, 2]
    assert covered_points(q, "") == []


# -- the session state machine ------------------------------------------------------------------------------------
def test_over_time_is_allowed_and_recorded(tmp_path):
    clock = FakeClock()
    with AnswerHistory(tmp_path / "h.sqlite") as history:
        session = MockSession(SessionSettings(ids=("W04",), n_questions=1, minutes=1), BANK, history, clock=clock)
        session.ask()
        clock.t = 45.0
        assert session.remaining() == 15.0
        clock.t = 75.0
        assert session.remaining() == -15.0
        session.submit_answer("δ")
        row = history.answers()[0]
    assert row["seconds"] == 75.0 and row["limit_seconds"] == 60.0 and row["over_time"] == 1


def test_scripted_session_in_process_saves_each_step(tmp_path):
    out = io.StringIO()
    with AnswerHistory(tmp_path / "h.sqlite") as history:
        session = MockSession(SessionSettings(ids=("W04", "W05", "G08"), n_questions=3, seed=0), BANK, history)
        assert run_terminal(session, io.StringIO(SCRIPT), out, interactive=False) == 0
        rows = history.answers()
    text = out.getvalue()
    assert text.count("追问 / Follow-up:") == 3
    assert "automatic and approximate" in text
    assert [r["qid"] for r in rows] == ["W04", "W05", "G08"]
    w04, w05, g08 = rows
    assert w04["answer"] == "GAE sums the TD residual δ over time\nλ=0 is one-step TD"
    assert w04["follow_up_answer"] == "with λ=1 it is the Monte Carlo return"
    assert w04["follow_up"] in {fu.q.zh for fu in BANK["W04"].follow_ups}
    assert w04["covered"] == [0, 1, 2] and w04["coverage"] == 1.0  # the follow-up added Monte Carlo
    assert w05["covered"] == [] and w05["self_rating"] == 1
    assert g08["covered"] == [0, 1, 2] and g08["self_rating"] == 4


def test_empty_answer_is_saved_as_skipped_without_a_follow_up(tmp_path):
    out = io.StringIO()
    with AnswerHistory(tmp_path / "h.sqlite") as history:
        session = MockSession(SessionSettings(ids=("W05",), n_questions=1), BANK, history)
        assert run_terminal(session, io.StringIO("\n2\n"), out, interactive=False) == 0
        (row,) = history.answers()
    assert row["answer"] == "" and row["follow_up"] is None and row["self_rating"] == 2
    assert "empty answer: saved as skipped" in out.getvalue() and "追问" not in out.getvalue()


def test_input_ending_mid_session_keeps_what_was_answered(tmp_path):
    out = io.StringIO()
    with AnswerHistory(tmp_path / "h.sqlite") as history:
        session = MockSession(SessionSettings(ids=("W04", "W05"), n_questions=2), BANK, history)
        assert run_terminal(session, io.StringIO("δ and Monte Carlo"), out, interactive=False) == 0  # no newline
        (row,) = history.answers()
    assert row["qid"] == "W04" and row["covered"] == [0, 2] and row["self_rating"] is None
    assert "input ended" in out.getvalue()


class _InterruptAfter(io.StringIO):
    """A stream that raises KeyboardInterrupt (as Ctrl-C does) once its text is used up."""

    def readline(self, *args):
        line = super().readline(*args)
        if line == "":
            raise KeyboardInterrupt
        return line


def test_ctrl_c_keeps_the_half_typed_answer(tmp_path):
    out = io.StringIO()
    script = "δ\n\none-step\n\n4\nclip is not KL\nit is a\n"  # W04 done; W05 half-typed
    with AnswerHistory(tmp_path / "h.sqlite") as history:
        session = MockSession(SessionSettings(ids=("W04", "W05", "G08"), n_questions=3), BANK, history)
        assert run_terminal(session, _InterruptAfter(script), out, interactive=False) == 130
        rows = history.answers()
    assert [(r["qid"], r["interrupted"]) for r in rows] == [("W04", 0), ("W05", 1)]
    assert rows[1]["answer"] == "clip is not KL\nit is a" and rows[1]["covered"] == [1, 2]
    assert "interrupted: 2 answers saved" in out.getvalue()


def test_ctrl_c_during_the_follow_up_keeps_it(tmp_path):
    with AnswerHistory(tmp_path / "h.sqlite") as history:
        session = MockSession(SessionSettings(ids=("W04",), n_questions=1), BANK, history)
        assert run_terminal(session, _InterruptAfter("δ\n\nMonte"), io.StringIO(), interactive=False) == 130
        (row,) = history.answers()
    assert row["follow_up_answer"] == "Monte" and row["interrupted"] == 0


def test_planning_filters_by_topic_and_caps_per_topic():
    settings = SessionSettings(topics=("gae",), n_questions=5, seed=1)
    assert sorted(q.id for q in plan_questions(BANK, settings)) == ["G08", "W04"]
    capped = SessionSettings(n_questions=2, max_per_topic=1, seed=1)
    assert len({q.topics[0] for q in plan_questions(BANK, capped)}) == 2
    with pytest.raises(RlprepError, match="no question in the bank matches"):
        plan_questions(BANK, SessionSettings(topics=("multimodal",)))


def test_presets_and_bad_settings():
    third = SessionSettings.from_preset("third-round")
    assert third.n_questions * third.minutes == 45 and third.first == ("W01",) and third.id_prefix == "W"
    assert SessionSettings.from_preset("rl-core", n_questions=2).n_questions == 2
    with pytest.raises(RlprepError, match="unknown preset"):
        SessionSettings.from_preset("fourth-round")
    with pytest.raises(RlprepError, match="unknown topic"):
        SessionSettings(topics=("gea",))
    with pytest.raises(RlprepError, match="at least 1"):
        SessionSettings(n_questions=0)


def test_frontier_preset_draws_only_the_atlas_questions():
    frontier = SessionSettings.from_preset("frontier", seed=0)
    bank = load_bank()  # the package bank: W, G and A entries
    planned = [q.id for q in plan_questions(bank, frontier)]
    assert len(planned) == frontier.n_questions == len(set(planned))
    assert all(qid.startswith("A") for qid in planned), planned
    assert len([qid for qid in bank if qid.startswith("A")]) > frontier.n_questions  # a draw, not the whole set


def test_interviewer_sheet_has_questions_follow_ups_points_and_rubric():
    settings = SessionSettings(ids=("W04", "W05"), n_questions=2, lang="en")
    sheet = interviewer_sheet(plan_questions(BANK, settings), settings, fmt="markdown")
    assert "## 1. W04" in sheet and "## 2. W05" in sheet
    assert "- the TD residual" in sheet                      # what a strong answer contains
    assert "Q: Why compute it backwards?" in sheet and "A: The recursion needs one pass." in sheet
    assert "## Scoring rubric" in sheet and "- **5**" in sheet
    assert "手写" not in sheet                                  # --lang en shows English only


# -- the CLI as a process ---------------------------------------------------------------------------------------------
def test_cli_session_from_an_answers_file_then_the_weakest_question_comes_back(tmp_path):
    answers = tmp_path / "answers.txt"
    answers.write_text(SCRIPT, encoding="utf-8")
    first = run_cli(["mock", *IDS, "--answers", str(answers)], tmp_path / "home")
    assert first.returncode == 0, first.stderr
    assert "3 answers saved" in first.stdout
    # A second session of one question drawn by spaced repetition: W05 scored lowest.
    second = run_cli(["mock", "--questions", "1", "--seed", "3"], tmp_path / "home", stdin="clip\n\nKL\n\n3\n")
    assert second.returncode == 0, second.stderr
    assert "Question 1/1 · W05" in second.stdout
    with AnswerHistory(tmp_path / "home" / "history.sqlite") as history:
        assert [r["qid"] for r in history.answers()] == ["W04", "W05", "G08", "W05"]


def test_cli_session_from_piped_stdin(tmp_path):
    proc = run_cli(["mock", *IDS, "--lang", "zh"], tmp_path / "home", stdin=SCRIPT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("追问 / Follow-up:") == 3 and "Write out GAE" not in proc.stdout
    assert "Key points: 3/3 covered" in proc.stdout and "Key points: 0/3 covered" in proc.stdout


def test_cli_with_empty_non_interactive_stdin_explains_the_fix(tmp_path):
    proc = run_cli(["mock", *IDS], tmp_path / "home", stdin="")
    assert proc.returncode == 2
    assert "stdin is not a terminal" in proc.stderr and "--answers FILE" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_ctrl_c_exits_cleanly_and_keeps_saved_answers(tmp_path):
    live = LiveProcess(["mock", *IDS], tmp_path / "home")
    live.write("δ\n\nMonte Carlo\n\n5\n")
    live.wait_for("Question 2/3")
    live.proc.send_signal(signal.SIGINT)
    code, out, err = live.finish()
    assert code == 130
    assert "Traceback" not in err
    assert "interrupted: 1 answer saved" in out
    with AnswerHistory(tmp_path / "home" / "history.sqlite") as history:
        assert [(r["qid"], r["self_rating"]) for r in history.answers()] == [("W04", 5)]


def test_cli_help_explains_every_option(tmp_path):
    proc = run_cli(["mock", "--help"], tmp_path / "home")
    assert proc.returncode == 0
    for option in ["--preset", "--questions", "--topics", "--minutes", "--ids", "--lang", "--seed", "--answers",
                   "--interviewer", "--format", "--intro", "--list", "third-round", "rl-core", "Ctrl-C",
                   "RLPREP_HOME"]:
        assert option in proc.stdout, option


def test_cli_bad_answers_file_and_unknown_id_are_clear_errors(tmp_path):
    proc = run_cli(["mock", "--answers", str(tmp_path / "nope.txt")], tmp_path / "home")
    assert proc.returncode == 2 and "no answers file" in proc.stderr and "fix:" in proc.stderr
    proc = run_cli(["mock", "--ids", "W33"], tmp_path / "home", stdin="")
    assert proc.returncode == 2 and "no bank entry for W33" in proc.stderr


def test_terminal_session_on_a_real_tty_ctrl_d_then_ctrl_c(tmp_path):
    """On a terminal: the prompt counts down, Ctrl-D ends an answer, a bad rating is asked again, Ctrl-C stops and
    keeps the line being typed."""
    pexpect = pytest.importorskip("pexpect")
    from interview_support import cli_env

    home = tmp_path / "home"
    child = pexpect.spawn(sys.executable, ["-m", "rlprep", "mock", *IDS], env=cli_env(home), encoding="utf-8",
                          timeout=20)
    child.expect(r"\[5:00 left\] ")
    child.sendline("the TD residual δ")
    child.expect(r"left\] ")
    child.sendeof()                                      # Ctrl-D: end of this answer, not of the session
    child.expect("追问")
    child.expect(r"\[follow-up 0:0\d\] ")              # the follow-up's own clock (issue 38)
    child.sendline("Monte Carlo")
    child.sendline("")
    child.expect("rating> ")
    child.sendline("7")
    child.expect("not a rating")
    child.expect("rating> ")
    child.sendline("4")
    child.expect("Question 2/3")
    child.expect(r"left\] ")
    child.sendline("clip, not equivalent")
    child.expect(r"left\] ")
    child.send("and half a line")
    child.expect("half a line")
    child.sendintr()                                     # Ctrl-C mid-answer, mid-line
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130 and "Traceback" not in child.before
    with AnswerHistory(home / "history.sqlite") as history:
        rows = history.answers()
    assert [(r["qid"], r["self_rating"], r["interrupted"]) for r in rows] == [("W04", 4, 0), ("W05", None, 1)]
    assert rows[0]["covered"] == [0, 2] and rows[1]["answer"] == "clip, not equivalent\nand half a line"
