"""Honest variants of compute_gae."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("torch_tensors", "the same recursion on torch float64 tensors, returning tensors", source='''
        import torch


        def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
            r = torch.as_tensor(rewards, dtype=torch.float64)
            v = torch.as_tensor(values, dtype=torch.float64)
            d = torch.as_tensor(dones, dtype=torch.float64)
            next_v = torch.cat([v[1:], torch.tensor([float(last_value)], dtype=torch.float64)])
            delta = r + gamma * next_v * (1 - d) - v
            adv = torch.zeros_like(r)
            acc = 0.0
            for t in range(len(r) - 1, -1, -1):
                acc = delta[t] + gamma * lam * (1 - d[t]) * acc
                adv[t] = acc
            return adv, adv + v
        '''),
    Edit("discount_matrix", "a T x T matrix of (gamma lam)^(k - t) factors, zeroed past each episode end", source='''
        import numpy as np


        def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
            r, v, d = (np.asarray(x, dtype=np.float64) for x in (rewards, values, dones))
            T = len(r)
            delta = r + gamma * np.append(v[1:], last_value) * (1 - d) - v
            W = np.zeros((T, T))
            for t in range(T):
                w = 1.0
                for k in range(t, T):
                    W[t, k] = w
                    if d[k]:
                        break
                    w *= gamma * lam
            adv = W @ delta
            return adv, adv + v
        '''),
]
