"""Gradient accumulation equal to the large batch: sum token losses, divide every micro-batch by the batch's token count.

The same O(B T V D) work as the big batch with 1/k of its activation memory.
"""

import torch
import torch.nn.functional as F


def accumulated_grad(weight, hidden, targets, micro_batch_size, ignore_index=-100):
    """Gradient of the full batch's token-mean cross-entropy w.r.t. an LM head, accumulated over micro-batches.
    weight: [V, D]; hidden: [B, T, D]; targets: [B, T]. Returns (grad [V, D], loss as a float)."""
    n_valid = int((targets != ignore_index).sum())  # the whole batch's token count, known before any micro-batch
    w = weight.detach().clone().requires_grad_(True)
    total = 0.0
    for start in range(0, hidden.shape[0], micro_batch_size):  # the last micro-batch may be smaller
        h = hidden[start:start + micro_batch_size]  # (b, T, D)
        t = targets[start:start + micro_batch_size]  # (b, T)
        logits = h @ w.T  # (b, T, V)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), t.reshape(-1), ignore_index=ignore_index,
                               reduction="sum") / n_valid
        loss.backward()  # gradients add up in w.grad
        total += float(loss.detach())
    return w.grad, total
