"""Honest variants of softmax: each must get full marks."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("via_logsumexp", "exp(x - logsumexp(x)) with the logsumexp written out", source='''
        import torch


        def softmax(x, dim=-1):
            m = torch.max(x, dim=dim, keepdim=True).values
            lse = m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))
            return torch.exp(x - lse)
        '''),
    Edit("float64_inside", "computes in float64 and casts back to the input dtype", source='''
        import torch


        def softmax(x, dim=-1):
            z = x.double()
            z = z - z.max(dim=dim, keepdim=True).values
            p = z.exp()
            p = p / p.sum(dim=dim, keepdim=True)
            return p.to(x.dtype)
        '''),
    Edit("moved_dim", "moves dim to the end, works on the last axis, moves it back", source='''
        import torch


        def softmax(x, dim=-1):
            z = x.movedim(dim, -1)
            z = z - z.max(-1, keepdim=True).values
            e = z.exp()
            return (e / e.sum(-1, keepdim=True)).movedim(-1, dim)
        '''),
]
