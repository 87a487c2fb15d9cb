"""Catalogued bugs of cross_entropy."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("mean_over_all_rows", "divides by every position, ignored ones included: padding dilutes the loss",
         {"per_token[valid].mean()": "(per_token * valid).mean()"}),
    Edit("hardcoded_minus_100", "compares with -100 whatever ignore_index says",
         {"valid = targets != ignore_index": "valid = targets != -100"}),
    Edit("log_of_softmax", "log(softmax(x)): a probability that underflows to 0 gives an infinite loss",
         {"logits - torch.logsumexp(logits, dim=-1, keepdim=True)": "torch.log(torch.softmax(logits, dim=-1))"}),
    Edit("smoothing_sums_classes", "the uniform term sums -log p over classes instead of averaging it",
         {"uniform = -logp.mean(dim=-1)": "uniform = -logp.sum(dim=-1)"}),
    Edit("smoothing_forgets_nll_weight", "keeps the full NLL and adds eps times the uniform term",
         {"(1.0 - label_smoothing) * nll": "nll"}),
    Edit("gathers_at_ignore_index", "gathers at the ignored target itself: -100 indexes out of range",
         {"logp.gather(-1, safe.unsqueeze(-1))": "logp.gather(-1, targets.unsqueeze(-1))"}),
]
