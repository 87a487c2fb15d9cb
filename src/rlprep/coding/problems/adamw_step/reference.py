"""One AdamW step: Loshchilov and Hutter 2019 (arXiv 1711.05101), Algorithm 2, as torch.optim.AdamW computes it.

O(n) time; the state is two tensors per parameter. The decay is applied to the parameter before the Adam step.
"""

import torch


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
               weight_decay=1e-2):
    """One AdamW update of one tensor. Returns new (param, exp_avg, exp_avg_sq); step counts from 1."""
    beta1, beta2 = betas
    param = param * (1 - lr * weight_decay)  # decoupled decay: not part of the gradient
    exp_avg = beta1 * exp_avg + (1 - beta1) * grad  # first moment m_t
    exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad * grad  # second moment v_t
    bias1 = 1 - beta1 ** step  # the moments started at 0: divide the shrinkage out
    bias2 = 1 - beta2 ** step
    denom = (exp_avg_sq / bias2).sqrt() + eps  # eps outside the square root, as torch
    param = param - lr * (exp_avg / bias1) / denom
    return param, exp_avg, exp_avg_sq
