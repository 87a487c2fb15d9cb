"""The history database: durability (SIGKILL), refusal of corrupted/newer files, Leitner scheduling, lab grades."""

from __future__ import annotations

import signal
import sqlite3

import pytest

from interview_support import FIXTURE_BANK, LiveProcess, run_cli
from rlprep.errors import RlprepError
from rlprep.interview.bank import load_bank
from rlprep.interview.history import DAY, SCHEMA_VERSION, AnswerHistory, mastery, record_lab_grade
from rlprep.interview.progress import plot_progress, progress_text, topic_mastery

BANK = load_bank(FIXTURE_BANK)
T0 = 1_800_000_000.0


def _answer(history: AnswerHistory, qid: str, n_covered: int, rating: int | None, now: float) -> int:
    session = history.start_session({}, now=now)
    answer_id = history.record_answer(session, qid, asked_at=now, seconds=60.0, limit_seconds=300.0, answer="x",
                                      covered=list(range(n_covered)), n_key_points=3)
    if rating is not None:
        history.record_rating(answer_id, rating)
    return answer_id


# -- durability ------------------------------------------------------------------------------------------------------
def test_sigkill_mid_session_loses_no_saved_answer(tmp_path):
    home = tmp_path / "home"
    live = LiveProcess(["mock", "--ids", "W04,W05,G08", "--seed", "0"], home)
    live.write("δ\n\nMonte Carlo\n\n5\n")             # W04: answer, follow-up, rating
    live.write("clip is not equivalent to KL\n\n")       # W05: answer only, then killed during its follow-up
    live.wait_for("追问 / Follow-up:")
    live.wait_for("追问 / Follow-up:")
    live.proc.send_signal(signal.SIGKILL)
    assert live.proc.wait(timeout=30) == -signal.SIGKILL
    with AnswerHistory(home / "history.sqlite") as history:
        rows = history.answers()
    assert [(r["qid"], r["self_rating"]) for r in rows] == [("W04", 5), ("W05", None)]
    assert rows[0]["covered"] == [0, 2] and rows[1]["covered"] == [0, 1, 2]


def test_the_database_runs_in_wal_mode_with_a_schema_version(tmp_path):
    AnswerHistory(tmp_path / "h.sqlite").close()
    conn = sqlite3.connect(tmp_path / "h.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]


# -- refusing files it must not touch ------------------------------------------------------------------------------
def test_corrupted_database_is_reported_and_left_untouched(tmp_path):
    path = tmp_path / "history.sqlite"
    garbage = b"this is not sqlite\x00" * 300
    path.write_bytes(garbage)
    with pytest.raises(RlprepError) as err:
        AnswerHistory(path)
    assert str(path) in err.value.problem and "not a readable rlprep history" in err.value.problem
    assert "move it aside" in err.value.fix and f"{path}.bak" in err.value.fix
    assert path.read_bytes() == garbage


def test_damaged_pages_inside_a_valid_file_are_reported(tmp_path):
    path = tmp_path / "history.sqlite"
    AnswerHistory(path).close()
    conn = sqlite3.connect(path)                      # fill a few pages in one transaction
    conn.executemany("INSERT INTO lab_grades (lab, score, max_score, graded_at) VALUES (?, 1, 2, 0)",
                     [(f"lab{i:04d}" + "x" * 200,) for i in range(500)])
    conn.commit()
    conn.close()
    size = path.stat().st_size
    with path.open("r+b") as f:                       # a valid header, garbage in the middle pages
        f.seek(size // 2)
        f.write(b"\xff" * 3000)
    before = path.read_bytes()
    with pytest.raises(RlprepError, match="is damaged") as err:
        AnswerHistory(path)
    assert "move it aside" in err.value.fix
    assert path.read_bytes() == before


def test_newer_schema_is_reported_and_left_untouched(tmp_path):
    path = tmp_path / "history.sqlite"
    AnswerHistory(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(RlprepError) as err:
        AnswerHistory(path)
    assert f"schema v{SCHEMA_VERSION + 1}" in err.value.problem and "newer rlprep" in err.value.problem
    assert "upgrade rlprep" in err.value.fix and "move it aside" in err.value.fix
    assert path.read_bytes() == before


def test_a_foreign_sqlite_file_is_not_taken_over(tmp_path):
    path = tmp_path / "history.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(RlprepError, match="not an rlprep history"):
        AnswerHistory(path)


def test_cli_reports_a_corrupted_history_with_the_fix(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "history.sqlite").write_bytes(b"\x13" * 4096)
    proc = run_cli(["progress"], home)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "history.sqlite" in proc.stderr and "fix: move it aside" in proc.stderr
    assert (home / "history.sqlite").read_bytes() == b"\x13" * 4096


# -- Leitner scheduling ------------------------------------------------------------------------------------------------
def test_leitner_boxes_follow_d1_d3_d7(tmp_path):
    with AnswerHistory(tmp_path / "h.sqlite") as h:
        _answer(h, "W04", 3, 5, T0)                    # a pass from box 0: box 1, due D+1
        s = h.review_states()["W04"]
        assert (s.box, s.due_at) == (1, T0 + 60 + 1 * DAY)
        _answer(h, "W04", 3, 5, T0 + 2 * DAY)          # pass again: box 2, due D+3
        s = h.review_states()["W04"]
        assert (s.box, s.due_at) == (2, T0 + 2 * DAY + 60 + 3 * DAY)
        _answer(h, "W04", 3, 5, T0 + 6 * DAY)          # box 3, due D+7, and it stays at 3
        _answer(h, "W04", 3, 5, T0 + 14 * DAY)
        s = h.review_states()["W04"]
        assert (s.box, s.due_at, s.n_seen) == (3, T0 + 14 * DAY + 60 + 7 * DAY, 4)
        _answer(h, "W04", 0, 1, T0 + 22 * DAY)         # a failure drops it back to box 1
        assert h.review_states()["W04"].box == 1


def test_rating_and_follow_up_redecide_the_same_answers_move(tmp_path):
    with AnswerHistory(tmp_path / "h.sqlite") as h:
        answer_id = _answer(h, "W05", 3, None, T0)     # coverage 1.0: box 1
        assert h.review_states()["W05"].box == 1
        h.record_rating(answer_id, 1)                  # mastery (1 + 0) / 2 = 0.5 < 0.6: fails, still box 1
        assert h.review_states()["W05"].last_mastery == mastery(1.0, 1) == 0.5
        h.record_rating(answer_id, 3)                  # 0.75: passes from the same starting box (0 -> 1)
        assert h.review_states()["W05"].box == 1 and h.review_states()["W05"].n_seen == 1
        with pytest.raises(ValueError, match="1-5"):
            h.record_rating(answer_id, 6)


def test_next_session_favours_low_scores_and_long_absences(tmp_path):
    with AnswerHistory(tmp_path / "h.sqlite") as h:
        _answer(h, "W04", 3, 5, T0)                    # strong
        _answer(h, "W05", 0, 1, T0)                    # weak
        ids = ["W04", "W05", "G08"]                    # G08 never seen
        # The same day nothing is due: the new question first, then the weak one before the strong one.
        assert h.prioritise(ids, now=T0 + 3600, seed=0) == ["G08", "W05", "W04"]
        # Two days later both are due; the weak one leads, ahead of the never-seen one.
        assert h.prioritise(ids, now=T0 + 2 * DAY, seed=0)[0] == "W05"
        # A strong answer long overdue outranks a new question too.
        assert h.prioritise(["W04", "G08"], now=T0 + 30 * DAY, seed=0) == ["W04", "G08"]


# -- labs and progress --------------------------------------------------------------------------------------------------
def test_lab_grades_and_progress_table(tmp_path, rlprep_home):
    record_lab_grade("lab01_gae", 6, 10)
    record_lab_grade("lab01_gae", 9, 10)
    record_lab_grade("lab03_dpo", 4, 8)
    with pytest.raises(ValueError, match="score must lie in"):
        record_lab_grade("lab01_gae", 11, 10)
    with AnswerHistory() as h:
        assert h.path == rlprep_home / "history.sqlite"
        grades = h.lab_grades()
        assert grades["lab01_gae"]["latest"] == 9 and grades["lab01_gae"]["best"] == 9
        assert grades["lab01_gae"]["runs"] == 2
        _answer(h, "W04", 3, 5, T0)                    # mastery 1.0 on one of the two gae questions
        rows = {r.topic: r for r in topic_mastery(h, BANK, now=T0 + 60)}
        assert (rows["gae"].n_seen, rows["gae"].n_questions, rows["gae"].mastery) == (1, 2, 0.5)
        assert rows["ppo"].mastery == 0.0
        text = progress_text(h, BANK, now=T0 + 60)
    assert "gae" in text and "1/2" in text and "50%" in text
    assert "lab01_gae" in text and "9/10" in text and "4/8" in text
    with AnswerHistory() as h:
        fig = plot_progress(h, BANK)
    assert [ax.get_title() for ax in fig.axes] == ["Mock interviews: mastery per topic", "Graded labs"]
    assert len(fig.axes[1].patches) == 4               # latest + best for two labs


def test_cli_progress_runs_on_a_fresh_home(tmp_path):
    proc = run_cli(["progress"], tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    assert "No answers yet" in proc.stdout and "No graded labs yet" in proc.stdout
