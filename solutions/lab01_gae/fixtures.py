"""Hidden cases of lab01 (GAE): seeded rollouts and the reference ``compute_gae``'s answers on them.

Each case is ``{rewards, values, dones, last_value, gamma, lam, advantages, returns}``; the lab's hidden tests
write ``compute_gae({{ mid.rewards }}, ...)`` and compare with ``{{ mid.advantages }}``.
"""

from __future__ import annotations

import numpy as np

from rlprep.algos.gae import compute_gae

T = 8


def case(rewards, values, dones, last_value, gamma=0.99, lam=0.95) -> dict:
    advantages, returns = compute_gae(rewards, values, dones, last_value, gamma, lam)
    return {"rewards": rewards, "values": values, "dones": dones, "last_value": float(last_value),
            "gamma": gamma, "lam": lam, "advantages": advantages, "returns": returns}


def fixtures() -> dict:
    rng = np.random.default_rng(20261130)
    rollouts = [(np.round(rng.normal(size=T), 3), np.round(rng.normal(size=T), 3)) for _ in range(4)]
    (r0, v0), (r1, v1), (r2, v2), (r3, v3) = rollouts
    no_end = np.zeros(T)
    mid = np.zeros(T)
    mid[[2, 5]] = 1.0  # three episodes: t = 0..2, 3..5, 6..7
    last_done = np.zeros(T)
    last_done[-1] = 1.0
    return {
        "no_done": case(r0, v0, no_end, 0.4),
        "mid": case(r1, v1, mid, -0.7),
        "cut": case(r2, v2, no_end, 1.3, gamma=0.9, lam=0.8),
        "terminal": case(r2, v2, last_done, 0.0),
        # One rollout without episode ends for each test that is not about them, so a bug in the done mask
        # fails the episode tests only, and the lambda/gamma tests name lambda/gamma bugs alone.
        "lam0": case(r3, v3, no_end, 0.5, gamma=0.9, lam=0.0),
        "lam1": case(r3, v3, no_end, 0.5, gamma=0.9, lam=1.0),
        "wiring": case(r0, v0, no_end, 0.2, gamma=0.7, lam=0.3),
        "defaults": case(r2, v2, no_end, 0.9),
        # T = 1: the only step is also the last one, so the bootstrap and the episode end meet in it.
        "one_cut": case(r3[:1], v3[:1], np.zeros(1), 1.7, gamma=0.9, lam=0.8),
        "one_done": case(r3[:1], v3[:1], np.ones(1), 1.7, gamma=0.9, lam=0.8),
        # the float32 rollout of the shape test, so its shapes come with values (a zeros answer has the shapes)
        "float32": case(np.ones(7, dtype=np.float32), np.zeros(7, dtype=np.float32), np.zeros(7, dtype=np.float32),
                        np.float32(0.5)),
    }
