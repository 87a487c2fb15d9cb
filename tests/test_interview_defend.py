"""`rlprep mock --defend`: questions about the learner's own lab (answer cells, the grade, training runs), offline
from templates and with a model rephrasing them (scripted replies here; the real server in
tests/test_interview_llm_server.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from interview_support import cli_env, run_cli
from llm_replay import Replay
from rlprep.interview.defence_facts import answer_cells, code_facts, grade_facts, run_facts
from rlprep.interview.defend import Defence, check_phrasing, pick
from rlprep.interview.llm_client import LLMConfig
from rlprep.interview.llm_interviewer import LLMInterviewer
from rlprep.interview.offline_scorers import offline_scorer

ROOT = Path(__file__).resolve().parents[1]
LAB01, LAB05 = ROOT / "labs" / "lab01_gae" / "lab01_gae.ipynb", ROOT / "labs" / "lab05_grpo" / "lab05_grpo.ipynb"
BUGGY_GAE = """\
    rewards, values, dones = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
    T = rewards.shape[0]
    advantages = np.zeros(T)
    lastgaelam = 0.0
    for t in reversed(range(T)):
        nextvalues = last_value if t == T - 1 else values[t + 1]
        delta = rewards[t] + gamma * nextvalues * (1.0 - dones[t]) - values[t]
        lastgaelam = delta + gamma * lam * lastgaelam
        advantages[t] = lastgaelam
    return advantages, advantages + values"""
"""A learner's compute_gae that forgets the episode mask in the recursion (delta is masked, the carry is not)."""
GRADE = {"lab": "lab05_grpo", "score": 17.0, "max_score": 18.0, "sandbox": "bubblewrap", "cells": [
    {"grade_id": "test_ga_by_hand", "points": 2.0, "max_points": 2.0, "passed": True, "message": ""},
    {"grade_id": "test_ga_equal_group", "points": 0.0, "max_points": 1.0, "passed": False,
     "message": "AssertionError: equal rewards gave nan advantages"}]}
ROWS = [{"step": 0, "eval/accuracy": 0.2},
        {"step": 1, "loss/policy": 0.0, "stats/grad_norm": 0.8, "stats/frac_zero_std_groups": 0.25,
         "stats/entropy": 1.9},
        {"step": 2, "loss/policy": 0.0001, "stats/grad_norm": 0.0, "stats/frac_zero_std_groups": 0.75,
         "stats/entropy": 0.5}]


def _run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "history.json").write_text(json.dumps({"rows": ROWS, "interrupted": False, "meta": {}}))
    return folder


def test_a_run_with_a_zero_loss_and_a_gradient_is_asked_about_in_its_own_figures(tmp_path):
    facts = run_facts(_run(tmp_path / "grpo-1") / "history.json")
    zero, tied, entropy = facts
    assert "loss was 0.000 while grad_norm was 0.80" in zero.question.en and zero.hint == "W11"
    assert "loss 是 0.000，grad_norm 却是 0.80" in zero.question.zh
    assert "75% of the groups had identical rewards" in tied.question.en
    assert "from 1.90 to 0.50" in entropy.question.en


def test_the_grade_and_the_answer_cells_give_their_own_questions():
    failed, = grade_facts(GRADE)
    assert failed.anchor == "test_ga_equal_group" and "equal rewards gave nan" in failed.question.en
    passed, = grade_facts({**GRADE, "cells": GRADE["cells"][:1], "score": 2, "max_score": 2})
    assert passed.kind == "passed" and "2/2" in passed.question.en
    released = code_facts(answer_cells(json.loads(LAB05.read_text())))
    assert {f.kind for f in released} == {"not_implemented"} and "group_advantages" in {f.anchor for f in released}
    learner = [("compute_gae", "def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):\n"
                + BUGGY_GAE)]
    fact, = code_facts(learner)
    assert fact.kind == "code" and "`for t in reversed(range(T)):`" in fact.question.en
    assert [f.kind for f in pick([fact, passed, failed] + released)] == ["failed", "not_implemented", "code"]


def test_an_offline_defence_asks_saves_and_links_the_course(tmp_path):
    home = tmp_path / "home"
    (tmp_path / "grade.json").write_text("grading...\n" + json.dumps(GRADE))  # rlprep grade --json's last line
    _run(tmp_path / "runs" / "grpo-1")
    (tmp_path / "answers.txt").write_text("equal rewards make the std 0\n\nthe centred advantages sum to 0\n\n"
                                          "a group mean then a std\n\n")
    proc = run_cli(["mock", "--defend", str(LAB05), "--grade-json", str(tmp_path / "grade.json"), "--runs",
                    str(tmp_path / "runs"), "--answers", str(tmp_path / "answers.txt"), "--lang", "en"], home)
    assert proc.returncode == 0, proc.stderr
    assert "Defence 1/3 · failed · test_ga_equal_group" in proc.stdout
    assert "your loss was 0.000 while grad_norm was 0.80: why?" in proc.stdout and "rlprep mock --ids W11" in proc.stdout
    saved, = (home / "defences").glob("lab05_grpo-*.json")
    record = json.loads(saved.read_text())
    assert [q["answer"] for q in record["questions"]] == ["equal rewards make the std 0",
                                                          "the centred advantages sum to 0", "a group mean then a std"]
    assert {q["asked_by"] for q in record["questions"]} == {"template"} and record["llm"] is None


def test_a_model_phrases_the_question_and_must_name_the_anchor(rlprep_home):
    fact, = grade_facts(GRADE)
    good = {"question_zh": "`test_ga_equal_group` 为什么会失败？", "question_en": "Why did `test_ga_equal_group` fail?"}
    assert check_phrasing(good, fact)[0] is not None
    assert "does not name the anchor" in check_phrasing({**good, "question_en": "Why did it fail?"}, fact)[1][0]
    replay = Replay(json.dumps({"question_zh": "你的分组", "question_en": "Why?"}), json.dumps(good))
    config = LLMConfig("http://replay.test/v1", "m")
    interviewer = LLMInterviewer(replay.client(config), offline_scorer(None), ask_first=False)
    interviewer.confirm = lambda text: "test_ga_equal_group" in text   # the learner sees the fact before it is sent
    defence = Defence("lab05_grpo", LAB05, [fact], interviewer)
    asked, source = defence.question(fact, "")
    assert (asked.en, source) == (good["question_en"], "llm:m") and len(replay.requests) == 2


def test_grading_the_notebook_first_asks_about_the_property_it_failed(tmp_path):
    """The real grader (nbgrader, the lab's hidden tests) on a learner's compute_gae that forgets the episode mask."""
    pytest.importorskip("nbgrader")
    nb = json.loads(LAB01.read_text())
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            source = "".join(cell["source"])
            cell["source"] = source.replace("    # YOUR CODE HERE\n    raise NotImplementedError()", BUGGY_GAE)
    work = tmp_path / "lab01_gae"
    work.mkdir()
    (work / "lab01_gae.ipynb").write_text(json.dumps(nb))
    (tmp_path / "answers.txt").write_text("the mask\n\n")
    proc = subprocess.run([sys.executable, "-m", "rlprep", "mock", "--defend", str(work / "lab01_gae.ipynb"), "--runs",
                           str(tmp_path / "none"), "--answers", str(tmp_path / "answers.txt"), "--lang", "en"],
                          capture_output=True, text=True, env=cli_env(tmp_path / "home"), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "grading" in proc.stdout and "Defence 1/" in proc.stdout and "· failed · test_gae" in proc.stdout
    assert "In `compute_gae` you wrote" not in proc.stdout.split("Defence 2/")[0]   # the failure is asked first


def test_a_notebook_that_cannot_be_graded_is_asked_about_its_recorded_grade(tmp_path):
    from rlprep.interview.history import record_lab_grade

    home = tmp_path / "home"
    record_lab_grade("lab99_mine", 3, 10, path=home / "history.sqlite")
    nb = json.loads(LAB05.read_text())
    nb["metadata"]["rlprep"] = {"lab": "lab99_mine"}
    (tmp_path / "lab99_mine.ipynb").write_text(json.dumps(nb))
    (tmp_path / "answers.txt").write_text("the std\n\n")
    proc = run_cli(["mock", "--defend", str(tmp_path / "lab99_mine.ipynb"), "--answers", str(tmp_path / "answers.txt"),
                    "--lang", "en"], home)
    assert proc.returncode == 0, proc.stderr
    assert "note: could not grade it now (cannot tell which lab" in proc.stdout
    assert "Your latest lab99_mine grade was 3/10" in proc.stdout
