"""Honest variants of clip_grad_norm."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("flatten_all", "concatenates every gradient into one vector", source='''
        import torch


        def clip_grad_norm(grads, max_norm, norm_type=2.0):
            flat = torch.cat([g.reshape(-1) for g in grads])
            total = flat.abs().max() if norm_type == float("inf") else flat.abs().pow(norm_type).sum() ** (1 / norm_type)
            coef = max_norm / (float(total) + 1e-6)
            if coef < 1:
                return [g * coef for g in grads], float(total)
            return [g.clone() for g in grads], float(total)
        '''),
    Edit("torch_foreach", "torch._foreach_norm and _foreach_mul, as the library's fast path", source='''
        import torch


        def clip_grad_norm(grads, max_norm, norm_type=2.0):
            norms = torch._foreach_norm([g.clone() for g in grads], norm_type)
            total = torch.linalg.vector_norm(torch.stack(norms), norm_type)
            clip_coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
            return torch._foreach_mul([g.clone() for g in grads], clip_coef), total.item()
        '''),
]
