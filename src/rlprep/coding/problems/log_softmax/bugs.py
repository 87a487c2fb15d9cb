"""Catalogued bugs of log_softmax."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("log_of_softmax", "log(softmax): -inf where the probability underflows",
         {"return shifted - torch.log(torch.exp(shifted).sum(dim=dim, keepdim=True))":
          "return torch.log(torch.exp(shifted) / torch.exp(shifted).sum(dim=dim, keepdim=True))"}),
    Edit("no_normalisation", "returns x - max: the log-partition term is missing",
         {"return shifted - torch.log(torch.exp(shifted).sum(dim=dim, keepdim=True))": "return shifted"}),
    Edit("no_shift", "exponentiates the raw logits: overflow to inf, then NaN",
         {"shifted = x - x.amax(dim=dim, keepdim=True)": "shifted = x"}),
    Edit("sum_over_everything", "normalises over the whole tensor",
         {"torch.exp(shifted).sum(dim=dim, keepdim=True)": "torch.exp(shifted).sum()"}),
    Edit("mean_not_sum", "log of the mean of the exponentials (off by log n)",
         {"torch.exp(shifted).sum(dim=dim, keepdim=True)": "torch.exp(shifted).mean(dim=dim, keepdim=True)"}),
]
