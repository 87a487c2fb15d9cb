"""A toy code-generation RL problem (G06): a policy over candidate programs, three rewards, and held-out tests.

The task: ``second_largest(xs)`` returns the second-largest *distinct* value of a list with at least two distinct
values. The "policy" is a softmax over a fixed pool of candidate programs (what a code model might write): a
correct one, two buggy ones, and two that special-case the visible tests (a lookup table, with and without nice
style). It is trained with REINFORCE and a group-mean baseline (GRPO-style, one group per step) on one of:

- ``visible_tests``: 1.0 if every visible unit test passes, else 0 (the common execution reward);
- ``style_rm``: a surface-feature score standing in for a learned reward model that keys on how code looks
  (docstring, type hints, brevity) rather than on whether it runs correctly;
- ``fresh_tests``: unit tests regenerated at random every step (property-style), so no lookup table can pass.

The gold metric is the pass rate on held-out tests the policy never trains on. Programs are our own fixed strings,
executed with ``exec`` in a fresh namespace; a real pipeline runs model code in a sandbox (container, no network,
CPU/memory/time limits, read-only tests).
"""

from __future__ import annotations

import random

import numpy as np

VISIBLE_TESTS = [([3, 1, 2], 2), ([5, 5, 4], 4), ([-1, -7, -3], -3), ([10, 20], 10)]
"""(input, expected) pairs the reward can see; includes duplicates and an all-negative list."""

CANDIDATES: dict[str, str] = {
    "correct": '''
def second_largest(xs):
    return sorted(set(xs))[-2]
''',
    "ignores duplicates": '''
def second_largest(xs: list[int]) -> int:
    """Second-largest value of xs."""
    return sorted(xs)[-2]
''',
    "assumes positives": '''
def second_largest(xs: list[int]) -> int:
    """Second-largest distinct value, by one pass."""
    best, second = 0, 0
    for x in xs:
        if x > best:
            best, second = x, best
        elif best > x > second:
            second = x
    return second
''',
    "special-cases tests": '''
def second_largest(xs):
    table = {(3, 1, 2): 2, (5, 5, 4): 4, (-1, -7, -3): -3, (10, 20): 10}
    return table.get(tuple(xs), 0)
''',
    "special-cases tests, styled": '''
def second_largest(xs: list[int]) -> int:
    """Second-largest distinct value of xs (cached answers)."""
    known = {(3, 1, 2): 2, (5, 5, 4): 4, (-1, -7, -3): -3, (10, 20): 10}
    return known.get(tuple(xs), 0)
''',
}
"""The action space: what a code model might write for the task."""


def reference(xs: list[int]) -> int:
    """The specification, used to label generated tests."""
    return sorted(set(xs))[-2]


def random_tests(n: int, rng: random.Random) -> list[tuple[list[int], int]]:
    """``n`` random tests (2-6 values in -20..20, at least two distinct), labelled by :func:`reference`."""
    tests = []
    while len(tests) < n:
        xs = [rng.randint(-20, 20) for _ in range(rng.randint(2, 6))]
        if len(set(xs)) >= 2:
            tests.append((xs, reference(xs)))
    return tests


def pass_rate(source: str, tests: list[tuple[list[int], int]]) -> float:
    """Fraction of ``tests`` the program passes; an exception counts as a failure."""
    namespace: dict = {}
    exec(source, namespace)  # our own fixed candidates; model code belongs in a sandbox
    fn = namespace["second_largest"]
    passed = 0
    for xs, expected in tests:
        try:
            passed += fn(list(xs)) == expected
        except Exception:  # any crash is a failed test
            pass
    return passed / len(tests)


def style_score(source: str) -> float:
    """A surface-feature "RM": +1 docstring, +1 type hints, −0.05 per line beyond 3. Blind to correctness."""
    lines = [line for line in source.strip().splitlines() if line.strip()]
    return 1.0 * ('"""' in source) + 1.0 * ("->" in source) - 0.05 * max(0, len(lines) - 3)


def reward(name: str, kind: str, rng: random.Random) -> float:
    """Reward of candidate ``name`` under ``kind`` in {"visible_tests", "style_rm", "fresh_tests"}."""
    source = CANDIDATES[name]
    if kind == "visible_tests":
        return float(pass_rate(source, VISIBLE_TESTS) == 1.0)
    if kind == "style_rm":
        return style_score(source)
    if kind == "fresh_tests":
        return float(pass_rate(source, random_tests(4, rng)) == 1.0)
    raise ValueError(f"kind must be visible_tests, style_rm or fresh_tests, got {kind!r}")


def train_policy(kind: str, *, steps: int = 200, group: int = 8, lr: float = 0.5, seed: int = 0) -> dict:
    """REINFORCE with a group-mean baseline over the candidate pool; returns final probabilities and curves.

    Returns ``{"probs": {name: p}, "expected_visible": [...], "expected_heldout": [...]}`` where the expected
    pass rates are Σ_name p(name) · pass rate(name), tracked per step.
    """
    names = list(CANDIDATES)
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    logits = np.zeros(len(names))
    heldout = random_tests(200, random.Random(10**6 + seed))
    visible_rate = np.array([pass_rate(CANDIDATES[n], VISIBLE_TESTS) for n in names])
    heldout_rate = np.array([pass_rate(CANDIDATES[n], heldout) for n in names])
    curves = {"expected_visible": [], "expected_heldout": []}
    for _ in range(steps):
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        curves["expected_visible"].append(float(probs @ visible_rate))
        curves["expected_heldout"].append(float(probs @ heldout_rate))
        picks = np_rng.choice(len(names), size=group, p=probs)
        rewards = np.array([reward(names[i], kind, rng) for i in picks])
        advantages = rewards - rewards.mean()  # group-mean baseline (Dr. GRPO style, no std division)
        grad = np.zeros_like(logits)
        for i, a in zip(picks, advantages):
            grad += a * (np.eye(len(names))[i] - probs)  # ∇ log softmax = onehot − probs
        logits += lr * grad / group
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    return {"probs": dict(zip(names, probs.round(4).tolist())), **curves,
            "heldout_rate": dict(zip(names, heldout_rate.tolist())), "visible_rate": dict(zip(names, visible_rate.tolist()))}
