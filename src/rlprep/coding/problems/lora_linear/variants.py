"""Honest variants of lora_linear."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("f_linear", "F.linear for both paths, peft's layout", source='''
        import torch.nn.functional as F


        def lora_linear(x, weight, bias, lora_A, lora_B, alpha):
            scaling = alpha / lora_A.shape[0]
            return F.linear(x, weight, bias) + F.linear(F.linear(x, lora_A), lora_B) * scaling
        '''),
    Edit("einsum", "einsum with an explicit rank, float64 accumulate", source='''
        import torch


        def lora_linear(x, weight, bias, lora_A, lora_B, alpha):
            rank = lora_A.size(0)
            y = torch.einsum("...i,oi->...o", x, weight)
            low = torch.einsum("...i,ri->...r", x, lora_A)
            y = y + alpha / rank * torch.einsum("...r,or->...o", low, lora_B)
            return y if bias is None else y + bias
        '''),
]
