"""Catalogued bugs of rms_norm."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("subtracts_mean", "centres the row first: that is LayerNorm without a bias",
         {"    rms = torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)  # (..., 1) no mean subtracted\n":
          "    x = x - x.mean(dim=-1, keepdim=True)\n    rms = torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)\n"}),
    Edit("eps_outside_sqrt", "adds eps to the root mean square",
         {"torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)": "(torch.sqrt((x * x).mean(dim=-1, keepdim=True)) + eps)"}),
    Edit("no_square_root", "divides by the mean square itself",
         {"torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)": "((x * x).mean(dim=-1, keepdim=True) + eps)"}),
    Edit("sum_not_mean", "uses the sum of squares: the scale depends on D",
         {"(x * x).mean(dim=-1, keepdim=True)": "(x * x).sum(dim=-1, keepdim=True)"}),
    Edit("forgets_weight", "never applies the weight",
         {"return y * weight if weight is not None else y": "return y"}),
    Edit("mean_abs", "divides by the mean absolute value instead of the root mean square",
         {"torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)": "(x.abs().mean(dim=-1, keepdim=True) + eps)"}),
]
