"""Hidden properties of compute_gae: the reference loop, and the lam = 1 / lam = 0 identities written apart."""

import numpy as np

from rlprep.coding.testkit import Properties, close, randn

P = Properties()


def _rollout(size, salt, ends=(3,)):
    T = size["T"]
    rewards = randn(size, T, salt=salt).numpy()
    values = randn(size, T, salt=salt + 1).numpy()
    dones = np.zeros(T)
    for e in ends:
        if e < T:
            dones[e] = 1.0
    return rewards, values, dones


def _mc_returns(rewards, dones, last_value, gamma):
    out, g = np.zeros(len(rewards)), last_value * (1 - dones[-1])
    for t in reversed(range(len(rewards))):
        g = rewards[t] + gamma * g * (1 - dones[t]) if t < len(rewards) - 1 or not dones[t] else rewards[t]
        out[t] = g
    return out


def examples(size):
    return [dict(rewards=[1.0, 0.0, 2.0], values=[0.5, 0.5, 0.5], dones=[0.0, 0.0, 1.0], last_value=9.0,
                 gamma=0.9, lam=0.8),
            dict(rewards=[0.0, 1.0, 0.0, 1.0], values=[0.2, 0.4, 0.1, 0.3], dones=[0.0, 1.0, 0.0, 0.0],
                 last_value=0.5, gamma=size["gamma"], lam=size["lam"])]


@P.prop("matches the backward recursion on a rollout with an episode end inside")
def _(f, ref, size):
    r, v, d = _rollout(size, 1, ends=(2, size["T"] // 2 + 1))
    close(f(rewards=r, values=v, dones=d, last_value=0.7, gamma=size["gamma"], lam=size["lam"]),
          ref(r, v, d, 0.7, size["gamma"], size["lam"]), rtol=1e-9, atol=1e-12)


@P.prop("lam = 1 gives the Monte-Carlo return minus V")
def _(f, ref, size):
    r, v, d = _rollout(size, 2, ends=(size["T"] // 3,))
    adv, ret = f(rewards=r, values=v, dones=d, last_value=1.3, gamma=size["gamma"], lam=1.0)
    mc = _mc_returns(r, d, 1.3, size["gamma"])
    close(adv, mc - v, rtol=1e-9, atol=1e-10)


@P.prop("lam = 0 gives the one-step TD residual")
def _(f, ref, size):
    r, v, d = _rollout(size, 3, ends=(1,))
    nxt = np.append(v[1:], -0.4) * (1 - d)
    adv, _ = f(rewards=r, values=v, dones=d, last_value=-0.4, gamma=size["gamma"], lam=0.0)
    close(adv, r + size["gamma"] * nxt - v, rtol=1e-9, atol=1e-12)


@P.prop("bootstraps last_value only when the rollout is cut mid-episode")
def _(f, ref, size):
    r, v, d = _rollout(size, 4, ends=())
    a1, _ = f(rewards=r, values=v, dones=d, last_value=0.0, gamma=size["gamma"], lam=size["lam"])
    a2, _ = f(rewards=r, values=v, dones=d, last_value=2.0, gamma=size["gamma"], lam=size["lam"])
    close(np.asarray(a2, dtype=float) - np.asarray(a1, dtype=float),
          2.0 * (size["gamma"] * size["lam"]) ** np.arange(size["T"])[::-1] * size["gamma"], rtol=1e-9, atol=1e-12)
    d[-1] = 1.0
    close(f(rewards=r, values=v, dones=d, last_value=5.0, gamma=size["gamma"], lam=size["lam"]),
          ref(r, v, d, 0.0, size["gamma"], size["lam"]), rtol=1e-9, atol=1e-12)


@P.prop("no advantage leaks across an episode boundary")
def _(f, ref, size):
    r, v, d = _rollout(size, 5, ends=(2,))
    adv, _ = f(rewards=r, values=v, dones=d, last_value=0.3, gamma=size["gamma"], lam=size["lam"])
    r2 = r.copy()
    r2[3:] += 10.0  # the next episode's rewards change; the first episode's advantages must not
    adv2, _ = f(rewards=r2, values=v, dones=d, last_value=0.3, gamma=size["gamma"], lam=size["lam"])
    close(np.asarray(adv2, dtype=float)[:3], ref(r, v, d, 0.3, size["gamma"], size["lam"])[0][:3], rtol=1e-9,
          atol=1e-12)
    close(adv, ref(r, v, d, 0.3, size["gamma"], size["lam"])[0], rtol=1e-9, atol=1e-12)


@P.prop("returns are advantages plus values")
def _(f, ref, size):
    r, v, d = _rollout(size, 6, ends=(4,))
    adv, ret = f(rewards=r, values=v, dones=d, last_value=-1.0, gamma=size["gamma"], lam=size["lam"])
    close(ret, ref(r, v, d, -1.0, size["gamma"], size["lam"])[1], rtol=1e-9, atol=1e-12)
