"""Linear warmup then cosine decay, as transformers' get_cosine_schedule_with_warmup. O(1) per step."""

import math


def cosine_lr(step, base_lr, warmup_steps, total_steps, num_cycles=0.5):
    """The learning rate at `step` (0-based) of a linear warmup followed by a cosine decay to 0."""
    if step < warmup_steps:
        return base_lr * step / max(1, warmup_steps)
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return base_lr * max(0.0, 0.5 * (1.0 + math.cos(math.pi * num_cycles * 2.0 * progress)))
