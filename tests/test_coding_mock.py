"""`rlprep mock --coding` end to end in a pseudo-terminal: the starter file, the clock, a wrong then a right
submission graded in the sandbox, the follow-ups, the round in the history, and the day-2 retest that comes back as
a variant."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from interview_support import cli_env, run_cli
from rlprep.coding.attempts import DAY, CodingLog
from rlprep.coding.bank import get_problem
from rlprep.coding.sources import reference_source, starter_source
from rlprep.grading import sandbox


def test_a_coding_round_in_a_terminal(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    home = tmp_path / "home"
    problem = get_problem("softmax")
    reference = reference_source(problem)
    wrong = problem.module("bugs").BUGS[0].apply(reference)  # no max shift: overflows on huge logits
    started = time.time()
    child = pexpect.spawn(sys.executable, ["-m", "rlprep", "mock", "--coding", "--problem", "softmax", "--minutes",
                                           "0.1", "--lang", "en"], env=cli_env(home), encoding="utf-8", timeout=90)
    child.expect(r"Your file: (\S+softmax\.py)")
    path = Path(child.match.group(1))
    assert path.parent == home / "coding" and "def softmax(x: torch.Tensor" in path.read_text()
    child.expect(r"\[0:0\d left\] coding> ")                # the clock counts down at the prompt
    path.write_text(wrong)
    child.sendline("submit")
    child.expect(r"softmax: 5/6 properties passed \(sandbox: ")
    child.expect(r"FAIL  stays finite and exact for huge logits \(no overflow\)\r\n")
    child.expect("not yet")
    child.expect(r"\[\d:\d\d (left|over)\] coding> ")
    path.write_text(reference)
    child.sendline("submit")
    child.expect(r"softmax: 6/6 properties passed \(sandbox: ([^,]+), graded in (\d+\.\d) s\)")
    assert child.match.group(1) == sandbox.probe()
    assert float(child.match.group(2)) <= 10.0  # grading one problem, sandbox included, within the 10 s budget
    child.expect(r"time taken: 0:\d\d \(target 0:06\)")
    child.expect(r"full marks\. \(over the target time: recorded as slow\)")
    for n in (1, 2, 3):
        child.expect(f"Follow-up {n}/3")
        child.expect(r"\[follow-up \d+:\d\d\] ")
        child.sendline(f"answer {n}")
        child.expect(r"\[follow-up \d+:\d\d\] ")
        child.sendline("")
        child.expect("A model answer: ")
    child.expect(r"Result: slow · 6/6 properties")
    child.expect(r"Retests scheduled: day2 \(\d{4}-\d\d-\d\d\), day7")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "Traceback" not in child.before
    with CodingLog(home / "history.sqlite") as log:
        (attempt,) = log.attempts()
        retests = {r["retest"]: r["due_at"] for r in log.retests()}
        nxt, variant = log.next_problem({"softmax": problem}, now=started + 2 * DAY + 60)
    assert (attempt["slug"], attempt["outcome"], attempt["submissions"], attempt["passed"]) == ("softmax", "slow", 2, 6)
    assert [f["answer"] for f in attempt["follow_ups"]] == ["answer 1", "answer 2", "answer 3"]
    assert attempt["source"] == reference
    assert started + 2 * DAY - 5 < retests["day2"] < time.time() + 2 * DAY + 5 and set(retests) == {"day2", "day7"}
    # on day 2 the problem comes back as its variant: another twist, other sizes, not the same text
    assert (nxt.slug, variant) == ("softmax", "day2")
    day2 = starter_source(problem, "day2")
    assert "RETEST (day2): The logits now arrive as [B, V, T]" in day2 and day2 != path.read_text()


def test_mock_coding_list_json_and_bad_input(tmp_path):
    import json

    proc = run_cli(["mock", "--coding", "--list", "--json"], tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {"slug", "title", "topic", "minutes", "library", "status", "retests"} <= set(rows[0])
    assert all(r["status"] == "new" for r in rows)
    bad = run_cli(["mock", "--coding", "--problem", "no_such_problem"], tmp_path / "home")
    assert bad.returncode == 2 and "no coding problem 'no_such_problem'" in bad.stderr and "fix:" in bad.stderr
    bad = run_cli(["mock", "--coding", "--problem", "softmax", "--retest", "day9"], tmp_path / "home")
    assert bad.returncode == 2 and "has no retest 'day9'" in bad.stderr


def test_the_third_round_ends_with_a_coding_round(tmp_path, monkeypatch):
    """After the third round's questions, a problem of at most 20 minutes on the same input (here: quit at once,
    answer the follow-ups); with --answers FILE or --no-coding it is skipped."""
    import argparse
    import io

    from rlprep.coding.cli import THIRD_ROUND_CODING_MINUTES, third_round

    monkeypatch.setenv("RLPREP_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\nfirst\n\nsecond\n\nthird\n\n"))
    args = argparse.Namespace(no_coding=False, answers=None, coding_dir=None, lang="en", seed=3)
    asked = []
    assert third_round(args, lambda a: asked.append(a) or 0) == 0 and asked == [args]
    with CodingLog(tmp_path / "home" / "history.sqlite") as log:
        (attempt,) = log.attempts()
    assert attempt["outcome"] == "failed" and attempt["limit_seconds"] <= 60 * THIRD_ROUND_CODING_MINUTES
    assert [f["answer"] for f in attempt["follow_ups"]][:2] == ["first", "second"]
    for skipped in (argparse.Namespace(no_coding=True, answers=None), argparse.Namespace(no_coding=False,
                                                                                         answers=tmp_path / "a.txt")):
        assert third_round(skipped, lambda a: 0) == 0
    with CodingLog(tmp_path / "home" / "history.sqlite") as log:
        assert len(log.attempts()) == 1


def test_rlprep_coding_grade(tmp_path, capsys, monkeypatch):
    """`rlprep coding grade FILE --problem SLUG`: JSON on request, exit 0 on full marks and 1 otherwise (run through the
    CLI's own main, in this process: a fresh interpreter per call would only add import time)."""
    import json

    from rlprep.cli import main
    from rlprep.coding.bank import get_problem

    monkeypatch.setenv("RLPREP_HOME", str(tmp_path / "home"))
    problem = get_problem("topk_heap")  # its file imports no torch: a quick sandboxed grade
    good = tmp_path / "good.py"
    good.write_text(reference_source(problem))
    assert main(["coding", "grade", str(good), "--problem", "topk_heap", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] == report["total"] == 6 and report["sandbox"] == sandbox.probe()
    bad = tmp_path / "bad.py"
    bad.write_text(problem.module("bugs").BUGS[0].apply(reference_source(problem)))
    assert main(["coding", "grade", str(bad), "--problem", "topk_heap"]) == 1
    assert "FAIL  matches heapq.nlargest on a random stream" in capsys.readouterr().out
    assert main(["coding", "grade", str(tmp_path / "missing.py"), "--problem", "topk_heap"]) == 2
