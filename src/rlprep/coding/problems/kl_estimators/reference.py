"""k1, k2 and k3 (Schulman 2020, "Approximating KL Divergence"); k3 is the course's one copy, rlprep.algos.grpo.kl_k3.

O(N) elementwise; log r = ref_logp - logp.
"""

from rlprep.algos.grpo import kl_k3


def kl_estimators(logp, ref_logp):
    """Per-token estimates of KL(pi || pi_ref) from tokens sampled from pi. logp, ref_logp: [...] log-probs of the
    sampled tokens. Returns (k1, k2, k3), each of the inputs' shape."""
    if logp.shape != ref_logp.shape:
        raise ValueError(f"logp {tuple(logp.shape)} and ref_logp {tuple(ref_logp.shape)} must have one shape")
    log_r = ref_logp - logp  # log(pi_ref / pi)
    k1 = -log_r  # unbiased, can be negative
    k2 = 0.5 * log_r ** 2  # biased, low variance
    return k1, k2, kl_k3(logp, ref_logp)  # unbiased and >= 0
