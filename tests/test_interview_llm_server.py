"""`rlprep mock --llm` against a real OpenAI-compatible server: `transformers serve` on 127.0.0.1 with the course's
tiny GPT-2 (tests/tiny_chat_server.py), never the network and never a real key.

The server is real, so these check the protocol (the official openai client against it), streaming, timeouts, and
what a session does with a model that answers nonsense: every follow-up and judgement falls back, the session says
so, completes, and the history records which scorer judged. The key given to the session never reaches a file.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from interview_support import cli_env
from rlprep.interview.llm_client import ChatClient, LLMConfig, LLMError
from tiny_chat_server import TinyChatServer, build_tiny_chat_model

SECRET = "sk-rlprep-test-7f3a9c1e5b2d4680"
"""A key that must never be written anywhere (the server ignores it)."""
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say ready."}]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny-chat")
    model = build_tiny_chat_model(folder / "model")
    server = TinyChatServer(model, folder / "serve.log")
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def _client(server, **overrides) -> ChatClient:
    env = server.env(RLPREP_LLM_API_KEY=SECRET)
    env.update(overrides)
    return ChatClient(LLMConfig.from_env(env))


def test_streamed_and_plain_replies_agree_through_the_openai_client(server):
    client = _client(server)
    plain = client.complete(MESSAGES, max_tokens=12, stream=False)
    pieces: list[str] = []
    streamed = client.complete(MESSAGES, max_tokens=12, on_text=pieces.append)
    assert plain.text and plain.text == streamed.text        # greedy (temperature 0): the same reply both ways
    assert streamed.chunks >= 3 and "".join(pieces) == streamed.text  # it came in pieces, as sent
    assert plain.finish_reason == streamed.finish_reason == "length"


def test_a_schema_the_server_ignores_still_gets_a_reply(server):
    """transformers serve ignores response_format (with a warning): the reply comes back, unconstrained."""
    reply = _client(server).complete(MESSAGES, max_tokens=8, schema={"type": "object"})
    assert reply.text and reply.finish_reason == "length"


def test_a_mock_session_with_a_model_that_answers_nonsense_completes(server, tmp_path):
    """The whole CLI: consent text shown first, every model reply invalid (retried once, then the fallback), the
    session completes, the history says which scorer judged, and the key is in no file written."""
    home, answers = tmp_path / "home", tmp_path / "answers.txt"
    answers.write_text("GAE sums the TD residual δ over time\nλ=0 is one-step TD\n\n"
                       "with λ=1 it is the Monte Carlo return\n\n4\n", encoding="utf-8")
    env = {**cli_env(home), **server.env(RLPREP_LLM_API_KEY=SECRET), "RLPREP_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "rlprep", "mock", "--llm", "--no-confirm", "--ids", "W04",
                           "--seed", "0", "--answers", str(answers)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    consent = out.index("Before anything is sent")
    assert out.index("----- system -----") > consent and server.base_url in out[consent:consent + 300]
    assert "GAE sums the TD residual" in out[consent:]           # the learner's answer, shown as it will be sent
    assert "wrote no valid follow-up 1 in two tries" in out and "the bank's follow-up instead" in out
    assert "gave no valid judgement in two tries" in out and "A short answer:" in out
    assert "Score " in out and "from the claims scorer" in out
    db = sqlite3.connect(home / "history.sqlite")
    scorer, judgement, follow_up = db.execute("SELECT scorer, judgement, follow_up FROM answers").fetchone()
    settings = json.loads(db.execute("SELECT settings FROM sessions").fetchone()[0])
    db.close()
    assert scorer == "claims" and f"llm:{server.model}" in json.loads(judgement)["note"]
    assert follow_up and settings["llm"] == {"base_url": server.base_url, "model": server.model}
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "history.sqlite" for p in written)
    assert [p for p in written if SECRET.encode() in p.read_bytes()] == []
    assert SECRET not in out and SECRET not in proc.stderr


def test_a_defence_with_a_model_that_answers_nonsense_falls_back_to_the_templates(server, tmp_path):
    from test_interview_defend import GRADE, LAB05, _run

    home = tmp_path / "home"
    (tmp_path / "grade.json").write_text(json.dumps(GRADE))
    _run(tmp_path / "runs" / "grpo-1")
    (tmp_path / "answers.txt").write_text("the std is 0\n\nthe advantages are centred\n\nmean, then std\n\n")
    env = {**cli_env(home), **server.env(RLPREP_LLM_API_KEY=SECRET)}
    proc = subprocess.run([sys.executable, "-m", "rlprep", "mock", "--defend", str(LAB05), "--grade-json",
                           str(tmp_path / "grade.json"), "--runs", str(tmp_path / "runs"), "--answers",
                           str(tmp_path / "answers.txt"), "--llm", "--no-confirm"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert "Lab: lab05_grpo" in proc.stdout and "test_ga_equal_group" in proc.stdout  # the first request, shown
    assert proc.stdout.count("gave no valid question") == 3
    record = json.loads(next((home / "defences").glob("*.json")).read_text())
    assert [q["asked_by"] for q in record["questions"]] == ["template"] * 3
    assert record["llm"] == {"base_url": server.base_url, "model": server.model}
    assert [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()] == []


def test_llm_check_makes_one_streamed_call_and_masks_the_key(server, tmp_path):
    env = {**cli_env(tmp_path / "home"), **server.env(RLPREP_LLM_API_KEY=SECRET)}
    proc = subprocess.run([sys.executable, "-m", "rlprep", "llm", "check"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "answered in" in proc.stdout and "stream chunks" in proc.stdout and server.base_url in proc.stdout
    assert SECRET not in proc.stdout + proc.stderr and f"…{SECRET[-4:]}" in proc.stdout


def test_a_reply_slower_than_the_timeout_is_abandoned(server):
    client = _client(server, RLPREP_LLM_TIMEOUT="0.3", RLPREP_LLM_MAX_TOKENS="1500")
    with pytest.raises(LLMError) as streamed:
        client.complete(MESSAGES, max_tokens=1500)              # streamed: the call's own deadline
    assert streamed.value.kind == "timeout" and "0.3 s" in str(streamed.value)
    with pytest.raises(LLMError) as plain:
        client.complete(MESSAGES, max_tokens=1500, stream=False)  # not streamed: the client's read timeout
    assert plain.value.kind == "timeout"
