"""The learner's language model: endpoint settings from the environment, and one chat call through ``openai``.

Any OpenAI-compatible Chat Completions endpoint works (Ollama, vLLM, llama.cpp's server, ``transformers serve``, a
hosted API). Nothing is sent anywhere unless the learner sets these and asks for it (``rlprep mock --llm``)::

    RLPREP_LLM_BASE_URL     the endpoint, e.g. http://127.0.0.1:11434/v1 (required)
    RLPREP_LLM_MODEL        the model name the endpoint knows (required)
    RLPREP_LLM_API_KEY      the key, if the endpoint needs one (else OPENAI_API_KEY; local servers need none)
    RLPREP_LLM_TIMEOUT      seconds one call may take, streamed or not (default 120)
    RLPREP_LLM_MAX_TOKENS   a cap on each reply's tokens (default: none beyond each call's own limit)
    RLPREP_LLM_RESPONSE_FORMAT  json_schema (default), json_object or none: how structured replies are asked for

The key lives only in this process's memory: it is never part of a record, a log line or an error message
(:func:`scrub` takes it out of any text that came back from the endpoint).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping

from rlprep.errors import RlprepError

ENV_BASE_URL, ENV_MODEL = "RLPREP_LLM_BASE_URL", "RLPREP_LLM_MODEL"
ENV_KEYS = ("RLPREP_LLM_API_KEY", "OPENAI_API_KEY")
ENV_TIMEOUT, ENV_MAX_TOKENS, ENV_RESPONSE_FORMAT = "RLPREP_LLM_TIMEOUT", "RLPREP_LLM_MAX_TOKENS", "RLPREP_LLM_RESPONSE_FORMAT"
RESPONSE_FORMATS = ("json_schema", "json_object", "none")
DEFAULT_TIMEOUT_S = 120.0
NO_KEY = "not-set"
"""What the client sends as the bearer token when no key is configured (local servers ignore it)."""
SETUP_FIX = (f"export {ENV_BASE_URL}=http://127.0.0.1:11434/v1 {ENV_MODEL}=qwen2.5:7b-instruct (Ollama; the README's "
             "mock section shows vLLM, llama.cpp and transformers serve), then run `rlprep llm check`")


@dataclass(frozen=True)
class LLMConfig:
    """Where the learner's model is and how to call it; ``api_key`` never appears in ``repr`` or a record."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    key_source: str | None = None
    """The variable the key came from (``RLPREP_LLM_API_KEY`` or ``OPENAI_API_KEY``), None without a key."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_tokens_cap: int | None = None
    response_format: str = "json_schema"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMConfig:
        """The settings from the environment; a missing or malformed one is an :class:`RlprepError` naming it."""
        env = os.environ if environ is None else environ
        base_url = (env.get(ENV_BASE_URL) or "").strip()
        model = (env.get(ENV_MODEL) or "").strip()
        missing = [name for name, value in ((ENV_BASE_URL, base_url), (ENV_MODEL, model)) if not value]
        if missing:
            raise RlprepError(f"no language model is configured ({' and '.join(missing)} not set)", SETUP_FIX)
        if not base_url.startswith(("http://", "https://")):
            raise RlprepError(f"{ENV_BASE_URL}={base_url!r} is not an http(s) URL",
                              "set it to the endpoint's OpenAI base URL, e.g. http://127.0.0.1:8000/v1")
        key_source = next((name for name in ENV_KEYS if (env.get(name) or "").strip()), None)
        api_key = env[key_source].strip() if key_source else None
        timeout = _number(env, ENV_TIMEOUT, float, DEFAULT_TIMEOUT_S)
        cap = _number(env, ENV_MAX_TOKENS, int, None)
        fmt = (env.get(ENV_RESPONSE_FORMAT) or "json_schema").strip()
        if fmt not in RESPONSE_FORMATS:
            raise RlprepError(f"{ENV_RESPONSE_FORMAT}={fmt!r} is not one of {', '.join(RESPONSE_FORMATS)}",
                              f"unset it (json_schema) or pick one of {', '.join(RESPONSE_FORMATS)}")
        return cls(base_url.rstrip("/"), model, api_key, key_source, timeout, cap, fmt)

    def masked_key(self) -> str:
        """The key as it may be shown: its source and at most its last four characters."""
        if not self.api_key:
            return f"none ({' / '.join(ENV_KEYS)} not set; fine for a local server)"
        tail = self.api_key[-4:] if len(self.api_key) >= 12 else ""
        return f"set from {self.key_source} ({len(self.api_key)} characters, …{tail})" if tail else \
            f"set from {self.key_source} ({len(self.api_key)} characters)"

    def describe(self) -> list[str]:
        """The settings as lines to print (the key masked)."""
        cap = f", replies capped at {self.max_tokens_cap} tokens" if self.max_tokens_cap else ""
        return [f"endpoint:  {self.base_url}", f"model:     {self.model}", f"key:       {self.masked_key()}",
                f"timeout:   {self.timeout_s:g} s per call{cap}; structured replies via {self.response_format}"]

    def as_record(self) -> dict:
        """What a session's record keeps: the endpoint and the model, never the key."""
        return {"base_url": self.base_url, "model": self.model}


def _number(env: Mapping[str, str], name: str, kind: type, default):
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or value <= 0:
        raise RlprepError(f"{name}={raw!r} is not a positive {'number' if kind is float else 'integer'}",
                          f"unset {name} or set it to e.g. {60 if kind is float else 512}")
    return value


def scrub(text: str, config: LLMConfig | None) -> str:
    """``text`` with the key, if any, replaced by ``***``."""
    key = config.api_key if config is not None else None
    return text.replace(key, "***") if key else text


class LLMError(Exception):
    """A call that did not return a reply: ``kind`` is connection, timeout, status or empty; the message holds no key."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Reply:
    """A model's reply: its text, why it stopped, how long it took, and how many stream chunks it came in."""

    text: str
    finish_reason: str | None
    seconds: float
    chunks: int


class ChatClient:
    """Chat Completions through the official ``openai`` client; ``http_client`` (``openai.DefaultHttpxClient`` with a
    mock transport) lets tests replay recorded responses through the real client."""

    def __init__(self, config: LLMConfig, http_client=None, clock: Callable[[], float] = time.monotonic):
        try:
            import openai
        except ImportError as err:
            raise RlprepError(f"the openai client is not installed ({err})",
                              "install the course extras: pip install -e '.[course]' (or pip install openai)") from None
        self.config = config
        self._openai = openai
        self._clock = clock
        timeout = openai.Timeout(config.timeout_s, connect=min(10.0, config.timeout_s))
        self._client = openai.OpenAI(base_url=config.base_url, api_key=config.api_key or NO_KEY, timeout=timeout,
                                     max_retries=0, http_client=http_client)
        self.format_refused = False
        """True once the endpoint refused ``response_format``: structured replies are then asked for in words only."""

    def complete(self, messages: list[dict], *, max_tokens: int, temperature: float = 0.0, schema: dict | None = None,
                 schema_name: str = "reply", stream: bool = True, on_text: Callable[[str], None] | None = None) -> Reply:
        """One chat call; ``schema`` asks for JSON of that shape (as :attr:`LLMConfig.response_format` says).

        Streamed (the default), the call gives up once it has run :attr:`LLMConfig.timeout_s` in all; ``on_text``
        sees each piece as it comes. Raises :class:`LLMError`.
        """
        if self.config.max_tokens_cap:
            max_tokens = min(max_tokens, self.config.max_tokens_cap)
        kwargs = dict(model=self.config.model, messages=messages, max_tokens=max_tokens, temperature=temperature)
        response_format = self._response_format(schema, schema_name)
        if response_format is not None:
            kwargs["response_format"] = response_format
        try:
            return self._call(kwargs, stream, on_text)
        except self._openai.BadRequestError as err:
            if response_format is None:
                raise self._error(err) from None
            self.format_refused = True  # e.g. a server without JSON-schema decoding: ask once more without it
            kwargs.pop("response_format")
            try:
                return self._call(kwargs, stream, on_text)
            except self._openai.OpenAIError as again:
                raise self._error(again) from None
        except self._openai.OpenAIError as err:
            raise self._error(err) from None

    def _response_format(self, schema: dict | None, name: str) -> dict | None:
        mode = self.config.response_format
        if schema is None or mode == "none" or self.format_refused:
            return None
        if mode == "json_object":
            return {"type": "json_object"}
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}

    def _call(self, kwargs: dict, stream: bool, on_text) -> Reply:
        start = self._clock()
        if not stream:
            response = self._client.chat.completions.create(**kwargs)
            choice = response.choices[0] if response.choices else None
            text = (choice.message.content or "") if choice else ""
            return Reply(text, choice.finish_reason if choice else None, self._clock() - start, 0)
        pieces: list[str] = []
        finish, chunks = None, 0
        with self._client.chat.completions.create(stream=True, **kwargs) as events:
            for event in events:
                chunks += 1
                for choice in event.choices or ():
                    piece = choice.delta.content if choice.delta is not None else None
                    if piece:
                        pieces.append(piece)
                        if on_text is not None:
                            on_text(piece)
                    finish = choice.finish_reason or finish
                if self._clock() - start > self.config.timeout_s:
                    raise LLMError("timeout", f"{self.config.base_url} was still streaming after "
                                              f"{self.config.timeout_s:g} s (the reply was abandoned)")
        return Reply("".join(pieces), finish, self._clock() - start, chunks)

    def _error(self, err: Exception) -> LLMError:
        o, url = self._openai, self.config.base_url
        if isinstance(err, o.APITimeoutError):
            return LLMError("timeout", f"{url} did not answer within {self.config.timeout_s:g} s")
        if isinstance(err, o.APIConnectionError):
            cause = err.__cause__ or err
            return LLMError("connection", scrub(f"cannot reach {url} ({type(cause).__name__}: {cause})", self.config))
        if isinstance(err, o.APIStatusError):
            hint = {401: "the endpoint refused the key: check RLPREP_LLM_API_KEY",
                    403: "the key may not use this model: check RLPREP_LLM_API_KEY and RLPREP_LLM_MODEL",
                    404: "check RLPREP_LLM_MODEL and that RLPREP_LLM_BASE_URL ends with /v1"}.get(err.status_code, "")
            body = scrub(str(getattr(err, "message", err)), self.config)[:300]
            return LLMError("status", f"{url} answered HTTP {err.status_code}: {body}" + (f" ({hint})" if hint else ""))
        return LLMError("status", scrub(f"{type(err).__name__}: {err}", self.config)[:300])


def consent_text(config: LLMConfig, messages: list[dict], sends: str = "Your answers in this session") -> str:
    """What the learner reads before the first call: the endpoint, the model and every message, as sent; ``sends``
    says what the later requests carry."""
    lines = [f"Before anything is sent: the interviewer is {config.model} at {config.base_url}.",
             "Its first request, exactly as it will be sent (the later ones have the same form):"]
    for message in messages:
        lines += [f"----- {message['role']} -----", str(message["content"])]
    lines += ["-----", f"{sends} go to that endpoint; nothing else leaves this machine."]
    return "\n".join(lines)
