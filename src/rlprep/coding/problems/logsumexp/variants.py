"""Honest variants of logsumexp."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("log1p_of_the_rest", "m + log1p(sum of the other terms): the max's own term is exactly 1", source='''
        import torch


        def logsumexp(x, dim=-1, keepdim=False):
            m = x.max(dim=dim, keepdim=True).values
            safe = torch.nan_to_num(m, neginf=0.0)
            e = torch.exp(x - safe)
            total = e.sum(dim=dim, keepdim=True)
            out = safe + torch.log1p(total - 1.0)
            return out if keepdim else out.squeeze(dim)
        '''),
    Edit("online_loop", "one pass over the slices with a running max and a rescaled running sum", source='''
        import torch


        def logsumexp(x, dim=-1, keepdim=False):
            z = x.movedim(dim, 0)
            m = torch.full(z.shape[1:], float("-inf"), dtype=x.dtype)
            s = torch.zeros(z.shape[1:], dtype=x.dtype)
            for row in z:
                new_m = torch.maximum(m, row)
                safe = torch.where(torch.isinf(new_m), torch.zeros_like(new_m), new_m)
                s = s * torch.exp(m - safe) + torch.exp(row - safe)
                m = new_m
            safe = torch.where(torch.isinf(m), torch.zeros_like(m), m)
            out = safe + torch.log(s)
            return out.unsqueeze(dim) if keepdim else out
        '''),
]
