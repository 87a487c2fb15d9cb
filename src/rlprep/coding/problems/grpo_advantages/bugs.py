"""Catalogued bugs of group_advantages."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("population_std", "divides by the population std (G, not G - 1)",
         {'"group": lambda: grouped.std(dim=1, unbiased=True)': '"group": lambda: grouped.std(dim=1, unbiased=False)'}),
    Edit("batch_mean_baseline", "centres on the whole batch's mean instead of each group's",
         {"(grouped - grouped.mean(dim=1, keepdim=True))": "(grouped - grouped.mean())"}),
    Edit("no_eps", "divides by the bare std: a tied group is 0 / 0",
         {".repeat_interleave(group_size) + eps,": ".repeat_interleave(group_size),"}),
    Edit("groups_strided", "reads groups as strided (every N-th reward) instead of consecutive",
         {"grouped = rewards.detach().view(-1, group_size)  # (N, G)": "grouped = rewards.detach().view(group_size, -1).T.contiguous()  # (N, G)"}),
    Edit("std_tiled", "repeats the group stds as a block instead of per answer",
         {".repeat_interleave(group_size) + eps,": ".repeat(group_size) + eps,"}),
    Edit("accepts_any_scale", "falls back to 'none' for an unknown scale",
         {"    if scale not in std_by_scale:\n": "    if scale not in std_by_scale:\n        scale = \"none\"\n    if False:\n"}),
]
