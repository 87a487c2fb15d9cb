"""``rlprep llm check``: what language model ``rlprep mock --llm`` would use, and one test call to it.

Prints the settings (the key masked: its source, length and last four characters at most), the test request as it
is sent, the reply as it streams in, and how long it took. Exit status 0 when the endpoint answered, 1 when the call
failed (the error names the fix), 2 when nothing is configured.
"""

from __future__ import annotations

import argparse
import sys

TEST_MESSAGES = [
    {"role": "system", "content": "You are checking a connection. Follow the instruction exactly."},
    {"role": "user", "content": 'Reply with the JSON object {"ready": true} and nothing else.'},
]
TEST_MAX_TOKENS = 32


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = ("The language model `rlprep mock --llm` uses: any OpenAI-compatible Chat Completions "
                          "endpoint, set with environment variables.")
    parser.epilog = """\
environment:
  RLPREP_LLM_BASE_URL     the endpoint, e.g. http://127.0.0.1:11434/v1 (Ollama), http://127.0.0.1:8000/v1 (vLLM,
                          transformers serve), http://127.0.0.1:8080/v1 (llama.cpp's llama-server)
  RLPREP_LLM_MODEL        the model's name at that endpoint
  RLPREP_LLM_API_KEY      the key, when the endpoint needs one (else OPENAI_API_KEY); never written anywhere
  RLPREP_LLM_TIMEOUT      seconds a call may take in all (default 120)
  RLPREP_LLM_MAX_TOKENS   cap on each reply's tokens (small local models)
  RLPREP_LLM_RESPONSE_FORMAT  json_schema (default), json_object or none
"""
    sub = parser.add_subparsers(dest="action", metavar="check")
    check = sub.add_parser("check", help="show the settings (key masked) and make one short test call")
    check.add_argument("--no-call", action="store_true", help="only show the settings; send nothing")


def run(args: argparse.Namespace) -> int:
    from rlprep.errors import RlprepError
    from rlprep.interview.llm_client import ChatClient, LLMConfig, LLMError

    if args.action != "check":
        raise RlprepError("say what to do with the model", "run 'rlprep llm check'")
    config = LLMConfig.from_env()
    print("rlprep mock --llm would use:")
    for line in config.describe():
        print(f"  {line}")
    host = config.base_url.split("//", 1)[-1].split("/", 1)[0].split(":", 1)[0]
    if config.api_key and config.base_url.startswith("http://") and host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: the key would travel unencrypted (http://) to {host}: use https:// for a remote endpoint",
              file=sys.stderr)
    if args.no_call:
        return 0
    print(f"\nOne test call to {config.model} at {config.base_url}, sent as:")
    for message in TEST_MESSAGES:
        print(f"  {message['role']}: {message['content']}")
    print("reply (streamed): ", end="", flush=True)
    client = ChatClient(config)
    try:
        reply = client.complete(TEST_MESSAGES, max_tokens=TEST_MAX_TOKENS, schema={"type": "object"},
                                schema_name="ready", on_text=lambda piece: print(piece, end="", flush=True))
    except LLMError as err:
        print()
        print(f"error: the test call failed: {err}", file=sys.stderr)
        print("fix: check the endpoint is running and the settings above (`curl $RLPREP_LLM_BASE_URL/models` lists "
              "its models)", file=sys.stderr)
        return 1
    print()
    print(f"answered in {reply.seconds:.1f} s, {reply.chunks} stream chunks, finish reason {reply.finish_reason}"
          + ("; it refused response_format, so structured replies are asked for in words only"
             if client.format_refused else ""))
    if not reply.text.strip():
        print("warning: the reply was empty; the interviewer will fall back to the offline scorer", file=sys.stderr)
    return 0
