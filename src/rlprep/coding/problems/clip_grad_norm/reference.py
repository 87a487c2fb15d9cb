"""Global gradient-norm clipping, as torch.nn.utils.clip_grad_norm_. O(total entries); one factor for all tensors."""

import torch


def clip_grad_norm(grads, max_norm, norm_type=2.0):
    """Scale all gradients together so their global norm is at most max_norm. grads: list of tensors.
    Returns (clipped grads as a list of new tensors, the total norm before clipping as a float)."""
    norms = torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads])  # (n_tensors,)
    total = torch.linalg.vector_norm(norms, norm_type)  # the norm of all entries as one vector
    factor = torch.clamp(max_norm / (total + 1e-6), max=1.0)  # never scales up
    return [g * factor for g in grads], float(total)
