"""`rlprep mock --llm`, deterministically: scripted replies through the real openai client (tests/llm_replay.py).

What the interviewer sends (the bank entry, the learner's words, nothing before consent, the key only in the
request's header), what it accepts (a follow-up anchored in the learner's words that neither re-asks a covered point
nor teaches; a judgement with a quote per point), and what it does with anything else (one retry, then the bank's
ladder or the offline scorer, said on screen and kept in the history).
"""

from __future__ import annotations

import io

import pytest

from interview_support import FIXTURE_BANK
from llm_replay import Replay, reply
from rlprep.errors import RlprepError
from rlprep.interview.bank import KeyPoint, Question, Text, load_bank
from rlprep.interview.judge import check_judgement
from rlprep.interview.llm_client import LLMConfig
from rlprep.interview.llm_interviewer import AnchoredFollowUp, LLMInterviewer, check_follow_up
from rlprep.interview.offline_scorers import offline_scorer
from rlprep.interview.session import MockSession, SessionSettings
from rlprep.interview.terminal import run_terminal

BANK = load_bank(FIXTURE_BANK)
SECRET = "sk-replay-0123456789abcdef"
ANSWER = "GAE sums the TD residual δ over time\nλ=0 is one-step TD"
FOLLOW_UP_ANSWER = "with λ=1 you wait until the episode ends"
SCRIPT = f"{ANSWER}\n\n{FOLLOW_UP_ANSWER}\n\n4\n"
CONFIG = LLMConfig("http://replay.test/v1", "replay-model", SECRET, "RLPREP_LLM_API_KEY")


def _session(replay: Replay, ask_first: bool = False, script: str = SCRIPT):
    interviewer = LLMInterviewer(replay.client(CONFIG), offline_scorer("claims"), ask_first=ask_first)
    session = MockSession(SessionSettings(ids=("W04",), n_questions=1, seed=0, llm=CONFIG.as_record()), BANK,
                          interviewer=interviewer)
    out = io.StringIO()
    code = run_terminal(session, io.StringIO(script), out, interactive=False)
    return session, out.getvalue(), code


# -- settings ----------------------------------------------------------------------------------------------------
def test_settings_come_from_the_environment_and_the_key_is_masked():
    config = LLMConfig.from_env({"RLPREP_LLM_BASE_URL": "http://127.0.0.1:11434/v1/", "RLPREP_LLM_MODEL": "qwen",
                                 "OPENAI_API_KEY": SECRET})
    assert (config.base_url, config.model, config.key_source) == ("http://127.0.0.1:11434/v1", "qwen", "OPENAI_API_KEY")
    shown = "\n".join(config.describe()) + repr(config) + str(config.as_record())
    assert SECRET not in shown and SECRET[-4:] in shown
    with pytest.raises(RlprepError, match="RLPREP_LLM_MODEL not set"):
        LLMConfig.from_env({"RLPREP_LLM_BASE_URL": "http://x/v1"})
    with pytest.raises(RlprepError, match="not an http"):
        LLMConfig.from_env({"RLPREP_LLM_BASE_URL": "localhost:8000", "RLPREP_LLM_MODEL": "m"})
    with pytest.raises(RlprepError, match="RLPREP_LLM_TIMEOUT"):
        LLMConfig.from_env({"RLPREP_LLM_BASE_URL": "http://x/v1", "RLPREP_LLM_MODEL": "m", "RLPREP_LLM_TIMEOUT": "0"})


# -- a session with a model that follows the rules ----------------------------------------------------------------
def test_an_anchored_follow_up_and_a_quoted_judgement(rlprep_home):
    replay = Replay(reply("follow_up_anchored"), reply("follow_up_done"), reply("judgement"))
    session, out, code = _session(replay)
    assert code == 0
    assert "你说 λ=0 是一步 TD；如果把 λ 换成 1" in out and "A short answer" not in out  # no course answer to leak
    assert "[~] λ=1 是蒙特卡洛" in out and "“with λ=1 you wait until the episode ends”" in out
    assert "Score 0.83 from the llm:replay-model scorer" in out  # (1 + 1 + 0.5) / 3
    row = session.history.answers()[0]
    assert row["scorer"] == "llm:replay-model" and row["covered"] == [0, 1]
    assert row["judgement"]["points"][2] == {"status": "partial", "quote": FOLLOW_UP_ANSWER}
    (exchange,) = session.history.exchanges(row["id"])
    assert exchange["answer"] == FOLLOW_UP_ANSWER and exchange["detail"]["source"] == "llm"
    assert exchange["detail"]["anchor"] == "λ=0 is one-step TD" and exchange["detail"]["kind"] == "changed_constraint"
    first, second, judge = (r["body"] for r in replay.requests)
    prompt = first["messages"][1]["content"]
    assert ANSWER in prompt and "0. TD 残差 / the TD residual  [already covered by the candidate]" in prompt
    assert "2. λ=1 是蒙特卡洛 / λ=1 is Monte Carlo  [not covered yet]" in prompt
    assert "How are terminal states handled?" in prompt and "Sources the course cites" in prompt  # ladder, sources
    assert "A fixture claim." in prompt                                                          # misconceptions
    assert FOLLOW_UP_ANSWER in second["messages"][1]["content"] and "follow-up 2 of at most 3" in \
        second["messages"][1]["content"]
    assert first["response_format"]["type"] == "json_schema" and first["stream"] is True
    assert judge["response_format"]["json_schema"]["name"] == "judgement"
    assert all(r["headers"]["authorization"] == f"Bearer {SECRET}" for r in replay.requests)
    written = [p for p in rlprep_home.rglob("*") if p.is_file()]
    assert written and not [p for p in written if SECRET.encode() in p.read_bytes()]


def test_a_reply_with_text_around_its_json_is_read(rlprep_home):
    replay = Replay(reply("follow_up_in_a_fence"), reply("follow_up_done"), reply("judgement"))
    _, out, _ = _session(replay)
    assert "为什么要把这些残差加起来" in out and "note:" not in out
    thinking = '<think>the schema is {"done": ...}; pick the anchor</think>\n' + reply("follow_up_anchored")
    _, out, _ = _session(Replay(thinking, reply("follow_up_done"), reply("judgement")))
    assert "如果把 λ 换成 1" in out and "note:" not in out


# -- what is refused -------------------------------------------------------------------------------------------------
def test_an_anchor_the_learner_never_said_is_sent_back_once_with_the_reason(rlprep_home):
    replay = Replay(reply("follow_up_unsaid_anchor"), reply("follow_up_anchored"), reply("follow_up_done"),
                    reply("judgement"))
    _, out, _ = _session(replay)
    retry = replay.requests[1]["body"]["messages"]
    assert retry[-2] == {"role": "assistant", "content": reply("follow_up_unsaid_anchor")}
    assert "is not the candidate's words" in retry[-1]["content"]
    assert "如果把 λ 换成 1" in out and "note:" not in out


def test_nonsense_twice_falls_back_to_the_ladder_and_the_offline_scorer(rlprep_home):
    replay = Replay(*[reply("nonsense")] * 4)
    session, out, code = _session(replay)
    assert code == 0 and len(replay.requests) == 4   # follow-up 1 twice, judgement twice; no follow-up 2 after a ladder
    assert "replay-model wrote no valid follow-up 1 in two tries" in out and "A short answer:" in out
    assert "Score " in out and "from the claims scorer" in out and "gave no valid judgement in two tries" in out
    row = session.history.answers()[0]
    assert row["scorer"] == "claims" and "llm:replay-model gave no valid judgement" in row["judgement"]["note"]
    assert row["follow_up"] in {fu.q.zh for fu in BANK["W04"].follow_ups}


W04 = BANK["W04"]


@pytest.mark.parametrize("change, problem", [
    ({"target_point": 0}, "key point 0 is already covered"),
    ({"question_en": "What does the estimate become"}, "is not a question"),
    ({"anchor": "Monte Carlo"}, "is not the candidate's words"),
    ({"kind": "quiz"}, '"kind" \'quiz\' is not one of'),
])
def test_a_follow_up_breaking_a_rule_is_refused(change, problem):
    data = {**__import__("json").loads(reply("follow_up_anchored")), **change}
    result, problems = check_follow_up(data, W04, ANSWER, [0, 1], [], 1)
    assert result is None and any(problem in p for p in problems), problems


def test_a_follow_up_that_teaches_the_answer_is_refused():
    q = Question("W99", "seed-000", Text("问题？", "Question?"), ("gae",), 2,
                 (KeyPoint("λ=1 时 GAE 等于蒙特卡洛回报减去价值", "with λ = 1 GAE is the Monte Carlo return minus the value",
                           ("monte carlo",)),), W04.follow_ups, "x", None, ("src",))
    data = {"done": False, "anchor": "one-step TD", "kind": "counterexample", "target_point": 0,
            "question_zh": "既然 λ=1 时 GAE 等于蒙特卡洛回报减去价值，那会怎样？",
            "question_en": "Given that with λ = 1 GAE is the Monte Carlo return minus the value, then what?"}
    result, problems = check_follow_up(data, q, ANSWER, [], [], 1)
    assert result is None and sum("gives away the answer" in p for p in problems) == 2
    said = ANSWER + "\nwith λ = 1 GAE is the Monte Carlo return minus the value"  # said by the learner: no teaching
    result, problems = check_follow_up({**data, "question_zh": "那会怎样？"}, q, said, [], [], 1)
    assert isinstance(result, AnchoredFollowUp), problems


def test_done_is_refused_for_the_first_follow_up_only():
    done = __import__("json").loads(reply("follow_up_done"))
    assert check_follow_up(done, W04, ANSWER, [], [], 1)[0] is None
    assert check_follow_up(done, W04, ANSWER, [], ["q"], 2)[0] == "done"


@pytest.mark.parametrize("name, problem", [
    ("judgement_unsaid_quote", "key point 0 is 'covered' but its quote"),
    ("judgement_a_point_short", "key point(s) 2 not graded"),
])
def test_a_judgement_without_the_learners_words_or_a_point_is_refused(name, problem):
    data = __import__("json").loads(reply(name))
    judgement, problems = check_judgement(data, W04, ANSWER, "llm:m")
    assert judgement is None and any(problem in p for p in problems), problems
    good, none = check_judgement(__import__("json").loads(reply("judgement")), W04, ANSWER + "\n" + FOLLOW_UP_ANSWER,
                                 "llm:m")
    assert none == [] and [p.status for p in good.points] == ["covered", "covered", "partial"]


# -- consent, failures ---------------------------------------------------------------------------------------------
def test_nothing_is_sent_before_the_learner_agrees_and_no_keeps_it_offline(rlprep_home):
    replay = Replay(reply("follow_up_anchored"))
    script = f"{ANSWER}\n\nn\n{FOLLOW_UP_ANSWER}\n\n3\n"   # the answer, then 'n' at the consent question
    session, out, code = _session(replay, ask_first=True, script=script)
    assert code == 0 and replay.requests == []
    shown = out[out.index("Before anything is sent"):out.index("Send it?")]
    assert "http://replay.test/v1" in shown and "replay-model" in shown and ANSWER in shown
    assert "----- system -----" in shown and "Never teach" in shown
    assert "no longer asked for this session (you chose not to send anything)" in out
    assert "A short answer:" in out and "from the claims scorer" in out
    assert session.history.answers()[0]["scorer"] == "claims"


def test_a_yes_sends_and_the_consent_is_asked_once(rlprep_home):
    replay = Replay(reply("follow_up_anchored"), reply("follow_up_done"), reply("judgement"))
    script = f"{ANSWER}\n\ny\n{FOLLOW_UP_ANSWER}\n\n3\n"
    _, out, code = _session(replay, ask_first=True, script=script)
    assert code == 0 and len(replay.requests) == 3 and out.count("Send it?") == 1


def test_an_unreachable_endpoint_turns_the_session_offline_once(rlprep_home):
    import socket

    from rlprep.interview.llm_client import ChatClient

    with socket.socket() as s:                       # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = LLMConfig(f"http://127.0.0.1:{port}/v1", "m", timeout_s=5)
    interviewer = LLMInterviewer(ChatClient(config), offline_scorer("claims"), ask_first=False)
    session = MockSession(SessionSettings(ids=("W04", "W05"), n_questions=2, seed=0), BANK, interviewer=interviewer)
    out = io.StringIO()
    script = f"{ANSWER}\n\n{FOLLOW_UP_ANSWER}\n\n4\nclip is not KL\n\nno idea\n\n2\n"
    assert run_terminal(session, io.StringIO(script), out, interactive=False) == 0
    text = out.getvalue()
    assert text.count("is no longer asked for this session (cannot reach") == 1
    assert [r["scorer"] for r in session.history.answers()] == ["claims", "claims"]


def test_an_endpoint_refusing_response_format_is_asked_again_without_it(rlprep_home):
    replay = Replay({"status": 400, "message": "response_format is not supported"}, reply("follow_up_anchored"),
                    reply("follow_up_done"), reply("judgement"))
    session, out, _ = _session(replay)
    assert "response_format" in replay.requests[0]["body"]
    assert all("response_format" not in r["body"] for r in replay.requests[1:])
    assert session.interviewer.client.format_refused and "如果把 λ 换成 1" in out


def test_llm_check_without_a_call_shows_the_settings_and_warns_of_a_key_sent_in_clear(monkeypatch, capsys):
    from rlprep.cli import main

    monkeypatch.setenv("RLPREP_LLM_BASE_URL", "http://gpu-box.example:8000/v1")
    monkeypatch.setenv("RLPREP_LLM_MODEL", "qwen")
    monkeypatch.setenv("RLPREP_LLM_API_KEY", SECRET)
    assert main(["llm", "check", "--no-call"]) == 0
    out, err = capsys.readouterr()
    assert "http://gpu-box.example:8000/v1" in out and "qwen" in out and SECRET not in out + err
    assert "unencrypted" in err
    monkeypatch.delenv("RLPREP_LLM_MODEL")
    assert main(["llm", "check"]) == 2 and "RLPREP_LLM_MODEL not set" in capsys.readouterr().err
