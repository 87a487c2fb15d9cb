"""Catalogued bugs of softmax: each must lose marks."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("no_max_shift", "exponentiates the raw logits: exp overflows to inf and inf/inf is NaN",
         {"x - x.amax(dim=dim, keepdim=True)": "x"}),
    Edit("sum_over_everything", "normalises by the sum over the whole tensor, not along dim",
         {"e.sum(dim=dim, keepdim=True)": "e.sum()"}),
    Edit("max_along_last_dim", "shifts by the max along the last dim whatever dim is: wrong for dim != -1",
         {"x.amax(dim=dim, keepdim=True)": "x.amax(dim=-1, keepdim=True)"}),
    Edit("shift_by_min", "subtracts the min: every exponent is >= 0 and large logits overflow",
         {"x.amax(dim=dim, keepdim=True)": "x.amin(dim=dim, keepdim=True)"}),
    Edit("no_keepdim", "drops keepdim: the sum broadcasts against the wrong axis",
         {"e.sum(dim=dim, keepdim=True)": "e.sum(dim=dim)"}),
    Edit("global_max", "shifts by the max of the whole tensor: slices far below it underflow to 0/0",
         {"x.amax(dim=dim, keepdim=True)": "x.max()"}),
]
