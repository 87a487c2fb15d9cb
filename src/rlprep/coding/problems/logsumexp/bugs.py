"""Catalogued bugs of logsumexp."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("no_shift", "log(sum(exp(x))): overflows to inf for large x and gives -inf for very negative x",
         {"out = m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))":
          "out = torch.log(torch.exp(x).sum(dim=dim, keepdim=True))"}),
    Edit("forgets_to_add_max_back", "shifts by the max but never adds it back",
         {"out = m + torch.log(": "out = torch.log("}),
    Edit("nan_on_masked_rows", "shifts a fully masked slice by -inf: -inf - (-inf) is NaN",
         {"    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # an all -inf slice: shift by 0, not -inf\n": ""}),
    Edit("ignores_keepdim", "always drops the reduced dimension",
         {"return out if keepdim else out.squeeze(dim)": "return out.squeeze(dim)"}),
    Edit("max_over_everything", "shifts by the global max: slices far below it underflow to log(0)",
         {"m = x.amax(dim=dim, keepdim=True)": "m = x.max().reshape([1] * x.ndim)"}),
    Edit("mean_not_sum", "averages the exponentials (log-mean-exp is logsumexp - log n)",
         {"torch.exp(x - m).sum(dim=dim, keepdim=True)": "torch.exp(x - m).mean(dim=dim, keepdim=True)"}),
]
