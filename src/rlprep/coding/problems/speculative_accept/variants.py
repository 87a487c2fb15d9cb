"""Honest variants of speculative_accept."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("vectorised", "all acceptance tests at once, the first rejection by cumprod", source='''
        import torch


        def _sample(probs, r):
            cdf = torch.cumsum(probs, 0)
            i = int(torch.searchsorted(cdf, torch.tensor([r], dtype=cdf.dtype), right=True)[0])
            return min(i, int(torch.nonzero(probs).flatten()[-1]))


        def speculative_accept(draft_logits, target_logits, draft_tokens, u, r):
            q = draft_logits.softmax(-1)
            p = target_logits.softmax(-1)
            K = draft_tokens.shape[0]
            rows = torch.arange(K)
            ok = u.to(p.dtype) < p[rows, draft_tokens] / q[rows, draft_tokens]
            n = int(torch.cumprod(ok.int(), 0).sum())
            if n < K:
                res = (p[n] - q[n]).clamp_min(0)
                nxt = _sample(res / res.sum(), r)
            else:
                nxt = _sample(p[K], r)
            return draft_tokens[:n].tolist() + [nxt]
        '''),
    Edit("min_one_form", "the paper's min(1, p/q) written out, float64 probabilities", source='''
        import torch


        def speculative_accept(draft_logits, target_logits, draft_tokens, u, r):
            q = torch.softmax(draft_logits.double(), -1)
            p = torch.softmax(target_logits.double(), -1)
            out = []
            for i in range(len(draft_tokens)):
                x = int(draft_tokens[i])
                if u[i] < min(1.0, float(p[i, x]) / float(q[i, x])):
                    out.append(x)
                    continue
                dist = torch.relu(p[i] - q[i])
                dist = dist / dist.sum()
                break
            else:
                dist = p[len(draft_tokens)]
            acc = 0.0
            for v, m in enumerate(dist.tolist()):
                if m > 0:
                    last = v
                    acc += m
                    if acc > r:
                        return out + [v]
            return out + [last]
        '''),
]
