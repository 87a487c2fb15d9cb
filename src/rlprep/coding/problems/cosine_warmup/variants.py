"""Honest variants of cosine_lr."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("half_angle", "0.5 (1 + cos) written as cos^2 of the half angle", source='''
        import math


        def cosine_lr(step, base_lr, warmup_steps, total_steps, num_cycles=0.5):
            if warmup_steps > 0 and step < warmup_steps:
                return base_lr * step / warmup_steps
            frac = (step - warmup_steps) / max(total_steps - warmup_steps, 1)
            angle = math.pi * num_cycles * frac
            return base_lr * max(0.0, 0.5 * (1 + math.cos(2 * angle)))
        '''),
    Edit("lambda_factor", "a multiplier function, as LambdaLR takes, times base_lr", source='''
        import math


        def _factor(step, warmup, total, cycles):
            if step < warmup:
                return float(step) / float(max(1, warmup))
            progress = float(step - warmup) / float(max(1, total - warmup))
            return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(cycles) * 2.0 * progress)))


        def cosine_lr(step, base_lr, warmup_steps, total_steps, num_cycles=0.5):
            return base_lr * _factor(step, warmup_steps, total_steps, num_cycles)
        '''),
]
