"""A fake transport for the official openai client: each request gets the next scripted reply, sent in the wire
format an OpenAI-compatible server uses (a ``chat.completion`` object, or ``chat.completion.chunk`` server-sent
events when the request streams), and every request is kept for the test to read.

The replies are in tests/fixtures/llm_replies.json: written by hand as a capable model answers the fixture bank's W04
(they were not recorded from a model, which the tests never call). A reply may also be ``{"status": 400, ...}``.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import openai

from rlprep.interview.llm_client import ChatClient, LLMConfig

REPLIES = json.loads((Path(__file__).resolve().parent / "fixtures" / "llm_replies.json").read_text(encoding="utf-8"))


def reply(name: str) -> str:
    """A scripted reply's text (the JSON the model writes, as one string)."""
    value = REPLIES[name]
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class Replay:
    """Answers request i with ``replies[i]`` (a string: the model's text; a dict with ``status``: an HTTP error)."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list[dict] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append({"headers": dict(request.headers), "body": body, "url": str(request.url)})
        if not self.replies:
            return httpx2.Response(500, json={"error": {"message": "the test scripted no more replies"}})
        answer = self.replies.pop(0)
        if isinstance(answer, dict):
            return httpx2.Response(answer["status"], json={"error": {"message": answer.get("message", "refused")}})
        if body.get("stream"):
            return httpx2.Response(200, content=_events(answer, body["model"]),
                                   headers={"content-type": "text/event-stream"})
        return httpx2.Response(200, json={
            "id": "replay", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer}}]})

    def client(self, config: LLMConfig) -> ChatClient:
        return ChatClient(config, http_client=openai.DefaultHttpxClient(transport=httpx2.MockTransport(self.handle)))


def _events(text: str, model: str) -> bytes:
    def chunk(delta: dict, finish=None) -> str:
        event = {"id": "replay", "object": "chat.completion.chunk", "created": 0, "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(event, ensure_ascii=False)}\n\n"

    pieces = [text[i:i + 16] for i in range(0, len(text), 16)]
    events = [chunk({"role": "assistant"})] + [chunk({"content": p}) for p in pieces] + [chunk({}, "stop")]
    return ("".join(events) + "data: [DONE]\n\n").encode()
