"""Honest variants of sample_with_temperature."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("searchsorted", "torch.searchsorted on the cdf, clamped to the last possible token", source='''
        import torch


        def sample_with_temperature(logits, temperature, u):
            if temperature < 0:
                raise ValueError("negative temperature")
            if temperature == 0:
                return torch.argmax(logits, dim=-1)
            p = torch.softmax(logits / temperature, dim=-1)
            cdf = p.cumsum(-1)
            idx = torch.searchsorted(cdf, u.to(cdf.dtype).unsqueeze(-1), right=True).squeeze(-1)
            out = []
            for b in range(p.shape[0]):
                allowed = torch.nonzero(p[b] > 0).flatten()
                out.append(min(int(idx[b]), int(allowed[-1])))
            return torch.tensor(out, dtype=torch.int64)
        '''),
    Edit("python_loop", "a plain loop over the vocabulary per row", source='''
        import math

        import torch


        def sample_with_temperature(logits, temperature, u):
            if temperature < 0:
                raise ValueError("temperature must be non-negative")
            out = []
            for row, ub in zip(logits.tolist(), u.tolist()):
                if temperature == 0:
                    out.append(max(range(len(row)), key=lambda i: (row[i], -i)))
                    continue
                m = max(row)
                w = [math.exp((v - m) / temperature) for v in row]
                z = sum(w)
                total, pick = 0.0, None
                for i, wi in enumerate(w):
                    if wi == 0:
                        continue
                    pick = i
                    total += wi / z
                    if total > ub:
                        break
                out.append(pick)
            return torch.tensor(out)
        '''),
]
