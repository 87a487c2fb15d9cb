"""Honest variants of kl_estimators."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("expm1", "k3 = expm1(log r) - log r, accurate for tiny log-ratios", source='''
        import torch


        def kl_estimators(logp, ref_logp):
            if logp.shape != ref_logp.shape:
                raise ValueError("shape mismatch")
            d = ref_logp - logp
            return -d, d * d / 2, torch.expm1(d) - d
        '''),
    Edit("ratio_form", "r = pi_ref / pi first, then the three formulas", source='''
        import torch


        def kl_estimators(logp, ref_logp):
            if logp.size() != ref_logp.size():
                raise ValueError("logp and ref_logp differ in shape")
            log_ratio = ref_logp - logp
            ratio = torch.exp(log_ratio)
            return -log_ratio, 0.5 * log_ratio.pow(2), (ratio - 1) - log_ratio
        '''),
]
