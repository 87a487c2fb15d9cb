"""Hidden cases of lab06 (importance sampling): seeded log-probs and the references' answers on them.

``iw`` is a [3, 5] batch whose ratios span ~0.1 to ~10 with its weights plain and truncated, ``iw_3d`` a
[2, 3, 4] batch truncated at 1.2, ``ise`` twelve samples with ``is_estimate`` for every (self_normalized, clip).
``far`` holds log-probs near -800 (exp of each underflows to 0; their differences are small): weights computed in
log space.
The lab's hidden tests write ``importance_weights({{ iw.logp_target }}, {{ iw.logp_behavior }})`` and compare
with ``{{ iw.weights }}``.
"""

from __future__ import annotations

import torch

from rlprep.algos.importance_sampling import importance_weights, is_estimate


def fixtures() -> dict:
    gen = torch.Generator().manual_seed(20261130)

    def draw(*shape, scale=1.0, shift=0.0):
        return torch.round((torch.randn(*shape, generator=gen, dtype=torch.float64) * scale + shift) * 1000) / 1000

    lt, lb = draw(3, 5, shift=-1.5), draw(3, 5, shift=-1.5)  # (3, 5) log-probs, ratios from ~0.1 to ~10
    lt3, lb3 = draw(2, 3, 4, scale=0.5, shift=-2.0), draw(2, 3, 4, scale=0.5, shift=-2.0)  # (2, 3, 4)
    n = 12
    f = draw(n, scale=2.0)  # (n,)
    lt_e, lb_e = draw(n, scale=0.8, shift=-2.0), draw(n, scale=0.8, shift=-2.0)  # (n,) each
    far_t, far_b = lt - 800.0, lb - 800.0  # (3, 5): exp(-800) is 0 in float64, the ratios are those of iw
    return {
        "far": {"logp_target": far_t, "logp_behavior": far_b, "weights": importance_weights(far_t, far_b)},
        "iw": {"logp_target": lt, "logp_behavior": lb, "weights": importance_weights(lt, lb),
               "clip_2": importance_weights(lt, lb, clip=2.0), "clip_05": importance_weights(lt, lb, clip=0.5)},
        "iw_3d": {"logp_target": lt3, "logp_behavior": lb3, "clip_12": importance_weights(lt3, lb3, clip=1.2)},
        "ise": {"f": f, "logp_target": lt_e, "logp_behavior": lb_e,
                "ordinary": is_estimate(f, lt_e, lb_e),
                "self_normalized": is_estimate(f, lt_e, lb_e, self_normalized=True),
                "truncated": is_estimate(f, lt_e, lb_e, clip=1.5),
                "truncated_self_normalized": is_estimate(f, lt_e, lb_e, self_normalized=True, clip=1.5)},
    }
