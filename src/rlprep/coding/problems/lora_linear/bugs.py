"""Catalogued bugs of lora_linear."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("scale_alpha_only", "scales by alpha, not alpha / r",
         {"(alpha / r) * update": "alpha * update"}),
    Edit("scale_inverted", "scales by r / alpha",
         {"(alpha / r) * update": "(r / alpha) * update"}),
    Edit("forgets_bias", "drops the bias",
         {"        base = base + bias": "        base = base"}),
    Edit("scales_the_base_too", "applies alpha / r to the whole output",
         {"return base + (alpha / r) * update": "return (alpha / r) * (base + update)"}),
    Edit("a_and_b_swapped", "projects with B first: the shapes only agree when in == out, and the math never does",
         {"(x @ lora_A.T) @ lora_B.T": "(x @ lora_B) @ lora_A"}),
]
