"""Honest variants of discounted_returns."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("numpy_loop", "numpy, returning an array", source='''
        import numpy as np


        def discounted_returns(rewards, dones, gamma, last_value=0.0):
            r = np.asarray(rewards, dtype=np.float64)
            d = np.asarray(dones, dtype=np.float64)
            G = np.empty_like(r)
            nxt = last_value
            for t in range(len(r) - 1, -1, -1):
                nxt = r[t] + gamma * nxt * (1 - d[t])
                G[t] = nxt
            return G
        '''),
    Edit("per_episode_matrix", "splits at the dones and discounts each episode with a power vector", source='''
        import torch


        def discounted_returns(rewards, dones, gamma, last_value=0.0):
            r = torch.as_tensor(rewards, dtype=torch.float64)
            d = torch.as_tensor(dones, dtype=torch.float64)
            out = torch.zeros_like(r)
            start = 0
            for t in range(len(r)):
                if d[t] or t == len(r) - 1:
                    seg = r[start:t + 1].clone()
                    tail = 0.0 if d[t] else float(last_value)
                    for i in range(len(seg) - 1, -1, -1):
                        tail = float(seg[i]) + gamma * tail
                        out[start + i] = tail
                    start = t + 1
            return out
        '''),
]
