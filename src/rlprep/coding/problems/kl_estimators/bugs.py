"""Catalogued bugs of kl_estimators."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("log_ratio_reversed", "takes log r = logp - ref_logp: k1 changes sign, k3 estimates the other KL",
         {"    log_r = ref_logp - logp  # log(pi_ref / pi)\n    k1": "    log_r = logp - ref_logp\n    k1",
          "return k1, k2, kl_k3(logp, ref_logp)": "return k1, k2, kl_k3(ref_logp, logp)"}),
    Edit("k2_without_half", "drops the 1/2 of k2",
         {"k2 = 0.5 * log_r ** 2": "k2 = log_r ** 2"}),
    Edit("k3_without_minus_one", "k3 = r - log r, off by one",
         {"return torch.exp(log_r) - log_r - 1": "return torch.exp(log_r) - log_r"}),
    Edit("k1_sign", "k1 = log r",
         {"k1 = -log_r  # unbiased, can be negative": "k1 = log_r"}),
    Edit("k3_as_abs_k1", "returns |log r| as k3",
         {"return k1, k2, kl_k3(logp, ref_logp)": "return k1, k2, log_r.abs()"}),
]
