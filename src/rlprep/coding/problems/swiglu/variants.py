"""Honest variants of swiglu_mlp."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("fused_gate_up", "one matmul with [w_gate; w_up] stacked, then chunk, as fused kernels do", source='''
        import torch


        def swiglu_mlp(x, w_gate, w_up, w_down):
            gate, up = (x @ torch.cat([w_gate, w_up], dim=0).T).chunk(2, dim=-1)
            return (gate * torch.sigmoid(gate) * up) @ w_down.T
        '''),
    Edit("f_linear", "torch.nn.functional.linear three times", source='''
        import torch.nn.functional as F


        def swiglu_mlp(x, w_gate, w_up, w_down):
            return F.linear(F.silu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)
        '''),
]
