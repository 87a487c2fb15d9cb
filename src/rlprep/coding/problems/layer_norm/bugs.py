"""Catalogued bugs of layer_norm."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("unbiased_variance", "divides by D - 1 (torch.var's default), not D",
         {"((x - mean) ** 2).mean(dim=-1, keepdim=True)": "((x - mean) ** 2).sum(dim=-1, keepdim=True) / (x.shape[-1] - 1)"}),
    Edit("eps_outside_sqrt", "adds eps to the standard deviation instead of the variance",
         {"torch.sqrt(var + eps)": "(torch.sqrt(var) + eps)"}),
    Edit("one_pass_variance", "E[x^2] - E[x]^2: catastrophic cancellation with a large offset in float32",
         {"((x - mean) ** 2).mean(dim=-1, keepdim=True)": "(x * x).mean(dim=-1, keepdim=True) - mean * mean"}),
    Edit("normalises_over_batch", "takes the statistics over dim 0 (BatchNorm's axis)",
         {"mean = x.mean(dim=-1, keepdim=True)": "mean = x.mean(dim=0, keepdim=True)",
          "((x - mean) ** 2).mean(dim=-1, keepdim=True)": "((x - mean) ** 2).mean(dim=0, keepdim=True)"}),
    Edit("bias_before_weight", "adds the bias before scaling",
         {"        y = y * weight\n    if bias is not None:\n        y = y + bias":
          "        y = y * weight\n    if bias is not None:\n        y = (y + bias) * (weight if weight is not None else 1)"}),
    Edit("forgets_bias", "never adds the bias",
         {"        y = y + bias": "        y = y"}),
]
