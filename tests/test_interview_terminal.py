"""`rlprep mock` in a terminal: the live countdown, and SIGHUP/SIGTERM stopping a session like Ctrl-C.

Each stop is a real signal sent to a real `rlprep mock` process; the history file is then read back.
"""

from __future__ import annotations

import re
import signal
import sys
import time

import pytest

from interview_support import FIXTURE_BANK, LiveProcess, cli_env, run_cli
from rlprep.interview.bank import load_bank
from rlprep.interview.history import AnswerHistory
from rlprep.interview.session import SessionSettings, interviewer_sheet, plan_questions

IDS = ["--ids", "W04,W05", "--seed", "0"]


def _saved(home):
    with AnswerHistory(home / "history.sqlite") as history:
        rows = history.answers()
        ended = history._conn.execute("SELECT ended_at FROM sessions").fetchall()
    return rows, ended


def test_closing_the_terminal_keeps_the_line_being_typed_after_a_live_countdown(tmp_path):
    """SIGHUP (the terminal closed) mid-line, after the countdown ran out while nobody pressed a key."""
    pexpect = pytest.importorskip("pexpect")
    home = tmp_path / "home"
    child = pexpect.spawn(sys.executable, ["-m", "rlprep", "mock", *IDS, "--minutes", "0.05"], env=cli_env(home),
                          encoding="utf-8", timeout=20)
    child.expect(r"\[0:03 left\] ")
    child.sendline("the TD residual")
    child.expect(r"left\] ")
    child.send("and λ=1 is Monte")                       # no Enter: this line is still being typed
    child.expect("\a")                                   # the bell at 0, without a key pressed
    child.expect("time is up")
    child.expect(re.escape("over] and λ=1 is Monte"))    # the prompt is redrawn, the unfinished line kept
    child.kill(signal.SIGHUP)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 128 + signal.SIGHUP and "Traceback" not in child.before
    rows, ended = _saved(home)
    assert [(r["qid"], r["answer"], r["interrupted"], r["over_time"]) for r in rows] == [
        ("W04", "the TD residual\nand λ=1 is Monte", 1, 1)]
    assert ended[0][0] is not None                       # the session is closed, not left open


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_on_a_pipe_save_the_answer_and_end_the_session(tmp_path, signum):
    live = LiveProcess(["mock", *IDS], tmp_path / "home")
    live.write("δ\n\nMonte Carlo\n\n5\n")                # W04 answered in full
    live.wait_for("Question 2/2")
    live.write("clip is not KL\n")                       # W05 half answered (no empty line yet)
    live.wait_for("Clip vs KL")
    time.sleep(0.5)                                      # let the line reach the reader
    live.proc.send_signal(signum)
    code, out, err = live.finish()
    assert code == 128 + signum, err
    assert "Traceback" not in err and "interrupted: 2 answers saved" in out
    rows, ended = _saved(tmp_path / "home")
    assert [(r["qid"], r["answer"], r["interrupted"]) for r in rows] == [
        ("W04", "δ", 0), ("W05", "clip is not KL", 1)]
    assert ended[0][0] is not None


def test_summary_promises_low_scores_back_from_tomorrow(tmp_path):
    proc = run_cli(["mock", "--ids", "W05"], tmp_path / "home", stdin="clip\n\nKL\n\n2\n")
    assert proc.returncode == 0, proc.stderr
    assert "From tomorrow, low scores come back first" in proc.stdout and "next time" not in proc.stdout


def test_interviewer_sheet_prints_its_seed_and_blanks_to_score(tmp_path):
    first = run_cli(["mock", "--interviewer", "--questions", "2"], tmp_path / "home")
    assert first.returncode == 0, first.stderr
    seed = re.search(r"Seed (\d+): the same options with --seed \1 print this sheet again", first.stdout).group(1)
    again = run_cli(["mock", "--interviewer", "--questions", "2", "--seed", seed], tmp_path / "home")
    assert again.stdout == first.stdout                  # the printed seed regenerates the sheet
    assert first.stdout.count("Score (1-5): ______") == 2 and "Total: ______ / 10" in first.stdout
    settings = SessionSettings(ids=("W04",), n_questions=1, seed=7)
    md = interviewer_sheet(plan_questions(load_bank(FIXTURE_BANK), settings), settings, fmt="markdown")
    assert "**Score (1-5): \\_\\_\\_\\_\\_\\_" in md      # underscores escaped: blanks, not emphasis, in Markdown
