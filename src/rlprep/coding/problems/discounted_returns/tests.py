"""Hidden properties of discounted_returns: forward sums written apart, and GAE at lambda = 1 with V = 0."""

import numpy as np
import torch

from rlprep.algos.gae import compute_gae
from rlprep.coding.testkit import Properties, close, randn

P = Properties()


def _rollout(size, salt, ends=()):
    r = randn(size, size["T"], salt=salt)
    d = torch.zeros(size["T"], dtype=torch.float64)
    for e in ends:
        d[e % size["T"]] = 1.0
    return r, d


def _forward(r, d, gamma, last):
    T, out = len(r), []
    for t in range(T):
        g, disc = 0.0, 1.0
        for k in range(t, T):
            g += disc * float(r[k])
            if d[k]:
                break
            disc *= gamma
        else:
            g += disc * last
        out.append(g)
    return torch.tensor(out, dtype=torch.float64)


def examples(size):
    return [dict(rewards=[1.0, 1.0, 1.0], dones=[0.0, 0.0, 1.0], gamma=0.5),
            dict(rewards=[0.0, 2.0, 0.0, 1.0], dones=[0.0, 1.0, 0.0, 0.0], gamma=size["gamma"], last_value=4.0)]


@P.prop("equals the forward discounted sums within each episode")
def _(f, ref, size):
    r, d = _rollout(size, 1, ends=(2, size["T"] // 2 + 1))
    close(f(rewards=r, dones=d, gamma=size["gamma"], last_value=0.5), _forward(r, d, size["gamma"], 0.5), rtol=1e-9,
          atol=1e-12)


@P.prop("equals GAE's returns at lambda = 1 with zero values", library="rlprep.algos.gae.compute_gae")
def _(f, ref, size):
    r, d = _rollout(size, 2, ends=(3,))
    _, want = compute_gae(r.numpy(), np.zeros(size["T"]), d.numpy(), -1.5, gamma=size["gamma"], lam=1.0)
    close(f(rewards=r, dones=d, gamma=size["gamma"], last_value=-1.5), want, rtol=1e-9, atol=1e-12)


@P.prop("bootstraps last_value only when the last step is not terminal")
def _(f, ref, size):
    r, d = _rollout(size, 3)
    close(f(rewards=r, dones=d, gamma=size["gamma"], last_value=3.0), _forward(r, d, size["gamma"], 3.0), rtol=1e-9,
          atol=1e-12)
    d[-1] = 1.0
    close(f(rewards=r, dones=d, gamma=size["gamma"], last_value=3.0), _forward(r, d, size["gamma"], 0.0), rtol=1e-9,
          atol=1e-12)


@P.prop("a terminal step keeps its own reward and cuts everything after it")
def _(f, ref, size):
    r, d = _rollout(size, 4, ends=(0, 1))
    close(f(rewards=r, dones=d, gamma=size["gamma"], last_value=0.0), _forward(r, d, size["gamma"], 0.0), rtol=1e-9,
          atol=1e-12)
