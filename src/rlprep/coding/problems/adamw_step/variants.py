"""Honest variants of adamw_step."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("torch_style_step_size", "torch's own arrangement: step_size = lr / bias1, denominator sqrt(v) / sqrt(bias2) + eps",
         source='''
        import math

        import torch


        def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                       weight_decay=1e-2):
            b1, b2 = betas
            p = param.clone().mul_(1 - lr * weight_decay)
            m = exp_avg.clone().lerp_(grad, 1 - b1)
            v = exp_avg_sq.clone().mul_(b2).addcmul_(grad, grad, value=1 - b2)
            step_size = lr / (1 - b1 ** step)
            denom = v.sqrt() / math.sqrt(1 - b2 ** step) + eps
            p.addcdiv_(m, denom, value=-step_size)
            return p, m, v
        '''),
    Edit("decay_from_old_param", "computes the Adam step first and subtracts the decay of the old parameter", source='''
        def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                       weight_decay=1e-2):
            b1, b2 = betas
            m = b1 * exp_avg + (1 - b1) * grad
            v = b2 * exp_avg_sq + (1 - b2) * grad ** 2
            m_hat = m / (1 - b1 ** step)
            v_hat = v / (1 - b2 ** step)
            update = m_hat / (v_hat ** 0.5 + eps)
            return param - lr * weight_decay * param - lr * update, m, v
        '''),
]
