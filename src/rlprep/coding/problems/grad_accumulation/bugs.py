"""Catalogued bugs of accumulated_grad."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("mean_per_micro_batch", "averages inside each micro-batch, then over micro-batches",
         {'reduction="sum") / n_valid': 'reduction="mean") / -(-hidden.shape[0] // micro_batch_size)'}),
    Edit("sum_without_normalising", "sums the token losses and never divides",
         {'reduction="sum") / n_valid': 'reduction="sum")'}),
    Edit("counts_ignored_tokens", "divides by every position, ignored ones included",
         {"n_valid = int((targets != ignore_index).sum())": "n_valid = targets.numel()"}),
    Edit("drops_last_partial", "skips a last micro-batch smaller than micro_batch_size",
         {"range(0, hidden.shape[0], micro_batch_size)": "range(0, hidden.shape[0] - micro_batch_size + 1, micro_batch_size)"}),
    Edit("no_accumulation", "zeroes the gradient before each micro-batch: only the last one survives",
         {"        loss.backward()  # gradients add up in w.grad": "        w.grad = None\n        loss.backward()"}),
    Edit("hardcoded_ignore", "ignores -100 whatever ignore_index says",
         {"ignore_index=ignore_index,\n": "ignore_index=-100,\n"}),
]
