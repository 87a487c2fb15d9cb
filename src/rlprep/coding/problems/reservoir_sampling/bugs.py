"""Catalogued bugs of reservoir_sample."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("off_by_one_range", "draws j on 0..i-1: later items are kept too often",
         {"j = int(uniforms[i] * (i + 1))  # uniform on 0..i": "j = int(uniforms[i] * i)"}),
    Edit("slot_off_by_one", "writes into slot j - 1 (slot 0's draw lands on the last slot)",
         {"reservoir[j] = item  # kept": "reservoir[j - 1] = item  # kept"}),
    Edit("always_replaces", "every new item replaces a random slot",
         {"j = int(uniforms[i] * (i + 1))  # uniform on 0..i": "j = int(uniforms[i] * k)"}),
    Edit("misaligned_uniforms", "uses uniforms[i - k] for item i",
         {"j = int(uniforms[i] * (i + 1))": "j = int(uniforms[i - k] * (i + 1))"}),
    Edit("probability_k_over_i", "keeps item i with probability k / i",
         {"j = int(uniforms[i] * (i + 1))  # uniform on 0..i": "j = int(uniforms[i] * max(i, 1))"}),
]
