"""Speculative sampling's verification (Leviathan et al. 2023, arXiv 2211.17192, Algorithm 1).

O(K V). Accept x_i when u_i < p_i(x_i) / q_i(x_i); on the first rejection sample from norm(max(0, p - q)); else a
bonus token from p_K. Each emitted token is distributed exactly as the target's p.
"""

import torch


def speculative_accept(draft_logits, target_logits, draft_tokens, u, r):
    """Verify K drafted tokens against the target model. draft_logits: [K, V]; target_logits: [K + 1, V];
    draft_tokens: [K] int64; u: [K] uniforms; r: one uniform. Returns the emitted tokens as a list of ints."""
    q = torch.softmax(draft_logits, dim=-1)  # (K, V)
    p = torch.softmax(target_logits, dim=-1)  # (K + 1, V)
    emitted = []
    for i, x in enumerate(draft_tokens.tolist()):
        if float(u[i]) < float(p[i, x] / q[i, x]):
            emitted.append(x)  # accepted: kept with probability min(1, p/q)
            continue
        residual = torch.clamp(p[i] - q[i], min=0)  # (V,) the mass the draft under-covers
        return emitted + [_inverse_cdf(residual / residual.sum(), r)]
    return emitted + [_inverse_cdf(p[len(emitted)], r)]  # every draft accepted: a bonus token from p_K


def _inverse_cdf(probs, r):
    """The smallest index whose cumulative probability exceeds r (the last index with mass if rounding falls short)."""
    cdf = probs.cumsum(-1)
    idx = int((cdf <= r).sum())
    return min(idx, int(torch.nonzero(probs > 0).max()))
