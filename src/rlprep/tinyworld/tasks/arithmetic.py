"""Arithmetic with a verifiable reward: ``07+45=`` -> ``52``.

Operands are zero-padded to the level's digit count, so every prompt of a level has the same length
(handy: equal-length prompts need no padding). A problem belongs to the held-out test split when a hash of
``(a, op, b)`` says so (about 20%), so train and test never share a problem whatever the seed.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass

from rlprep.tinyworld.transcript import Turn

OPERATORS = "+-*"
LEVELS: dict[int, tuple[int, str]] = {
    1: (1, "+"),
    2: (2, "+"),
    3: (2, "+-"),
    4: (2, "+-*"),
    5: (3, "+"),
    6: (3, "+-*"),
}
"""Difficulty level -> (digits per operand, operators). Level 2 (2-digit addition) is the default."""
TEST_FRACTION = 0.2
_PROMPT = re.compile(r"^(\d+)([+\-*])(\d+)=$")


@dataclass(frozen=True)
class Example:
    prompt: str
    """e.g. "07+45=" """
    answer: str
    """e.g. "52" (the exact completion the verifier accepts, before eos)"""


def in_test_split(a: int, op: str, b: int) -> bool:
    """Whether the problem ``a op b`` is held out (a fixed hash, not a seed, decides)."""
    digest = hashlib.sha256(f"{a}{op}{b}".encode()).digest()
    return int.from_bytes(digest[:4], "big") < TEST_FRACTION * 2**32


def _solve(a: int, op: str, b: int) -> int:
    return a + b if op == "+" else a - b if op == "-" else a * b


class ArithmeticTask:
    """Exact-match arithmetic: ``sample`` problems, ``verify`` an answer, ``reward`` = 1.0 or 0.0."""

    name = "arithmetic"
    levels = LEVELS
    sft_batch_fraction = 1.0
    """Share of the profile's ``sft_batch`` the warm start uses."""
    sft_steps_fraction = 1.0
    """Share of the profile's ``sft_steps`` the warm start uses."""

    def sample(self, n: int, split: str = "train", seed: int = 0, level: int | None = None,
               digits: int = 2, ops: str = "+") -> list[Example]:
        """``n`` problems from ``split`` ("train" or "test"), reproducible for ``seed``.

        ``level`` (a key of :data:`LEVELS`) overrides ``digits`` and ``ops``. Problems may repeat.
        """
        if split not in ("train", "test"):
            raise ValueError(f"split must be 'train' or 'test', got {split!r}")
        if level is not None:
            if level not in LEVELS:
                raise ValueError(f"unknown level {level!r}: use one of {sorted(LEVELS)}")
            digits, ops = LEVELS[level]
        if digits < 1 or not ops or set(ops) - set(OPERATORS):
            raise ValueError(f"need digits >= 1 and ops from {OPERATORS!r}, got digits={digits}, ops={ops!r}")
        rng = random.Random(f"arithmetic-{split}-{seed}-{digits}-{ops}")
        want_test = split == "test"
        out: list[Example] = []
        while len(out) < n:
            a, b = rng.randrange(10**digits), rng.randrange(10**digits)
            op = rng.choice(ops)
            if in_test_split(a, op, b) != want_test:
                continue
            out.append(Example(f"{a:0{digits}d}{op}{b:0{digits}d}=", str(_solve(a, op, b))))
        return out

    def answer(self, prompt: str) -> str:
        """The correct completion for ``prompt`` (ValueError if it is not an arithmetic prompt)."""
        match = _PROMPT.match(prompt.strip())
        if not match:
            raise ValueError(f"not an arithmetic prompt: {prompt!r} (expected e.g. '07+45=')")
        return str(_solve(int(match[1]), match[2], int(match[3])))

    def verify(self, prompt: str, completion: str) -> bool:
        """Exact match of ``completion`` (surrounding whitespace ignored) with the answer."""
        return completion.strip() == self.answer(prompt)

    def reward(self, prompt: str, completion: str) -> float:
        """1.0 when :meth:`verify` holds, else 0.0: the sparse verifiable reward of GRPO/RLVR."""
        return 1.0 if self.verify(prompt, completion) else 0.0

    # --- supervised warm start -------------------------------------------------------------
    def sft_transcript(self, rng: random.Random) -> list[Turn]:
        """One SFT example on the default level (2-digit addition): prompt (masked) + answer (trained)."""
        (example,) = self.sample(1, "train", seed=rng.randrange(2**62))
        return [Turn(example.prompt, "obs"), Turn(example.answer, "act")]

    def evaluate(self, model, tokenizer, seed: int = 0, n: int = 256) -> dict[str, float]:
        """Greedy exact-match accuracy on ``n`` held-out 2-digit additions: ``{"eval/accuracy": ...}``."""
        examples = self.sample(n, "test", seed=seed, level=2)
        return {"eval/accuracy": evaluate_accuracy(model, tokenizer, self, examples, max_new_tokens=5)}


def evaluate_accuracy(policy, tokenizer, task, examples: list[Example], max_new_tokens: int,
                      batch_size: int = 256) -> float:
    """Greedy accuracy: the fraction of ``examples`` whose greedy completion ``task.verify`` accepts.

    The policy is put in eval mode for the sampling and given back in the mode it was in.
    """
    import torch

    from rlprep.rollout import generate

    was_training = policy.training
    policy.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, len(examples), batch_size):
            prompts = [ex.prompt for ex in examples[start:start + batch_size]]
            out = generate(policy, tokenizer, prompts, max_new_tokens=max_new_tokens, temperature=0.0)
            correct += sum(task.verify(p, t) for p, t in zip(prompts, out.texts))
    policy.train(was_training)
    return correct / max(1, len(examples))


def sample_success_rates(policy, tokenizer, task, prompts: list[str], n_samples: int, max_new_tokens: int,
                         temperature: float = 1.0, seed: int = 0, return_rollout: bool = False):
    """Per-prompt fraction of ``n_samples`` sampled completions ``task.reward`` accepts: ``[len(prompts)]``
    numpy floats (and the rollout with its ``[P*n]`` rewards, groups consecutive, when ``return_rollout``)."""
    import numpy as np
    import torch

    from rlprep.rollout import generate

    repeated = [p for p in prompts for _ in range(n_samples)]  # (P*n,) consecutive groups
    was_training = policy.training
    policy.eval()
    with torch.no_grad():
        out = generate(policy, tokenizer, repeated, max_new_tokens=max_new_tokens, temperature=temperature,
                       seed=seed)
    policy.train(was_training)
    rewards = np.array([task.reward(p, t) for p, t in zip(repeated, out.texts)])  # (P*n,)
    rates = rewards.reshape(len(prompts), n_samples).mean(axis=1)  # (P,)
    return (rates, out, rewards) if return_rollout else rates
