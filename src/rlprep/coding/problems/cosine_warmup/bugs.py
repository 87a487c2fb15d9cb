"""Catalogued bugs of cosine_lr."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("warmup_off_by_one", "warms up to (step + 1) / warmup_steps: never 0 at step 0",
         {"base_lr * step / max(1, warmup_steps)": "base_lr * (step + 1) / max(1, warmup_steps)"}),
    Edit("progress_over_total", "measures progress over total_steps instead of the steps after warmup",
         {"/ max(1, total_steps - warmup_steps)": "/ max(1, total_steps)"}),
    Edit("linear_decay", "decays linearly instead of along the cosine",
         {"base_lr * max(0.0, 0.5 * (1.0 + math.cos(math.pi * num_cycles * 2.0 * progress)))":
          "base_lr * max(0.0, 1.0 - progress)"}),
    Edit("ignores_num_cycles", "always decays one half cycle",
         {"math.pi * num_cycles * 2.0 * progress": "math.pi * progress"}),
    Edit("divides_by_zero_warmup", "divides by warmup_steps without max(1, .)",
         {"    if step < warmup_steps:": "    if step <= warmup_steps and warmup_steps == 0:\n        return base_lr * step / warmup_steps\n    if step < warmup_steps:"}),
    Edit("starts_decay_from_zero_step", "computes progress from step 0, not from the end of warmup",
         {"progress = (step - warmup_steps) /": "progress = step /"}),
]
