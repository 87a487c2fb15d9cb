"""Honest variants of apply_rope."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("complex_numbers", "pairs (i, i + d/2) as complex numbers multiplied by exp(i p theta)", source='''
        import torch


        def apply_rope(x, position_ids, base=10000.0):
            d = x.shape[-1]
            if d % 2 != 0:
                raise ValueError("odd head size")
            h = d // 2
            theta = base ** (-torch.arange(h, dtype=torch.float64) * 2 / d)
            angle = position_ids.to(torch.float64)[:, None, :, None] * theta  # (B, 1, T, d/2)
            z = torch.complex(x[..., :h].double(), x[..., h:].double()) * torch.polar(torch.ones_like(angle), angle)
            return torch.cat((z.real, z.imag), dim=-1).to(x.dtype)
        '''),
    Edit("explicit_pairs", "rotates each pair with the 2 x 2 formula, float64 angles", source='''
        import torch


        def apply_rope(x, position_ids, base=10000.0):
            B, H, T, d = x.shape
            if d % 2:
                raise ValueError("d must be even")
            half = d // 2
            inv = 1.0 / base ** (torch.arange(half, dtype=torch.float64) * 2.0 / d)
            ang = position_ids.double().unsqueeze(-1) * inv  # (B, T, half)
            c, s = ang.cos().unsqueeze(1).to(x.dtype), ang.sin().unsqueeze(1).to(x.dtype)
            a, b = x[..., :half], x[..., half:]
            return torch.cat((a * c - b * s, b * c + a * s), dim=-1)
        '''),
]
