"""`transformers serve` on 127.0.0.1 with the course's own tiny GPT-2, for the tests of `rlprep mock --llm`.

The model is the tiny world's GPT-2 (rlprep.tinyworld: its character tokenizer, the smoke profile's width and depth,
freshly initialised, 2048 positions so a prompt and a reply fit), saved with `save_pretrained` and made chat-capable
by a chat template. The template keeps the last TEMPLATE_CHARS characters of each message, because a character-level
model reads one token per character. It answers nonsense, which is what the fallback tests need. No network: the
server is started with HF_HUB_OFFLINE and without the CLI's daily PyPI update check.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

TEMPLATE_CHARS = 300
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{ message['role'][:1] }}:{{ message['content'][-" + str(TEMPLATE_CHARS) + ":] }}\n"
    "{% endfor -%}"
    "{%- if add_generation_prompt %}a:{% endif -%}"
)
MAX_TOKENS = 48
"""RLPREP_LLM_MAX_TOKENS for sessions against the tiny model: its replies are nonsense however long they are."""


def build_tiny_chat_model(folder: Path) -> Path:
    """The tiny GPT-2 and its tokenizer, with a chat template, saved in ``folder``."""
    from rlprep.profiles import get_profile
    from rlprep.tinyworld import build_tokenizer
    from rlprep.tinyworld.model import build_model

    tokenizer = build_tokenizer()
    tokenizer.chat_template = CHAT_TEMPLATE
    model = build_model(dataclasses.replace(get_profile("smoke"), n_positions=2048), tokenizer, seed=0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TinyChatServer:
    """`transformers serve MODEL --host 127.0.0.1 --port N --device cpu` as a child process."""

    def __init__(self, model_dir: Path, log: Path):
        self.model = str(model_dir)
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HUB_DISABLE_UPDATE_CHECK="1",
                   OMP_NUM_THREADS="1", HF_HOME=str(log.parent / "hf-home"))
        self._log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "transformers.cli.transformers", "serve", self.model, "--host", "127.0.0.1",
             "--port", str(self.port), "--device", "cpu", "--log-level", "warning"],
            stdout=self._log, stderr=subprocess.STDOUT, env=env)
        self.log = log

    def wait_ready(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"transformers serve exited ({self.proc.returncode}):\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1) as response:
                    if json.loads(response.read()).get("status") == "ok":
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"transformers serve was not ready in {timeout:g} s:\n{self.log.read_text()[-3000:]}")

    def env(self, **extra: str) -> dict[str, str]:
        """The RLPREP_LLM_* settings that point at this server."""
        return {"RLPREP_LLM_BASE_URL": self.base_url, "RLPREP_LLM_MODEL": self.model,
                "RLPREP_LLM_MAX_TOKENS": str(MAX_TOKENS), **extra}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
