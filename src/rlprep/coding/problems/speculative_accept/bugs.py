"""Catalogued bugs of speculative_accept."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("ratio_inverted", "accepts when u < q / p",
         {"float(u[i]) < float(p[i, x] / q[i, x])": "float(u[i]) < float(q[i, x] / p[i, x])"}),
    Edit("resamples_from_p", "resamples from p instead of the residual: p is over-counted",
         {"return emitted + [_inverse_cdf(residual / residual.sum(), r)]": "return emitted + [_inverse_cdf(p[i], r)]"}),
    Edit("residual_without_clamp", "p - q without max(0, .): negative masses corrupt the cdf",
         {"torch.clamp(p[i] - q[i], min=0)": "(p[i] - q[i])"}),
    Edit("no_bonus_token", "emits nothing more when every draft is accepted",
         {"    return emitted + [_inverse_cdf(p[len(emitted)], r)]  # every draft accepted: a bonus token from p_K":
          "    return emitted"}),
    Edit("continues_after_rejection", "skips a rejected draft and keeps verifying the next ones",
         {"        residual = torch.clamp(p[i] - q[i], min=0)  # (V,) the mass the draft under-covers\n"
          "        return emitted + [_inverse_cdf(residual / residual.sum(), r)]":
          "        continue"}),
    Edit("non_strict_comparison", "accepts when u <= p/q: a zero-probability token is accepted at u = 0",
         {"float(u[i]) < float(p[i, x] / q[i, x])": "float(u[i]) <= float(p[i, x] / q[i, x])"}),
]
