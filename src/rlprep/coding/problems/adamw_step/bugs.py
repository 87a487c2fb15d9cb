"""Catalogued bugs of adamw_step."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("l2_not_decoupled", "adds weight_decay * param to the gradient (Adam + L2), which Adam then rescales",
         {"    param = param * (1 - lr * weight_decay)  # decoupled decay: not part of the gradient\n":
          "    grad = grad + weight_decay * param\n"}),
    Edit("no_bias_correction", "skips bias correction: the first steps are too large",
         {"bias1 = 1 - beta1 ** step": "bias1 = 1", "bias2 = 1 - beta2 ** step": "bias2 = 1"}),
    Edit("eps_inside_sqrt", "adds eps inside the square root",
         {"(exp_avg_sq / bias2).sqrt() + eps": "(exp_avg_sq / bias2 + eps).sqrt()"}),
    Edit("decay_by_wd_alone", "decays by weight_decay instead of lr * weight_decay",
         {"(1 - lr * weight_decay)": "(1 - weight_decay)"}),
    Edit("step_from_zero", "uses step + 1 in the bias correction (counts the steps from 0)",
         {"bias1 = 1 - beta1 ** step": "bias1 = 1 - beta1 ** (step + 1)",
          "bias2 = 1 - beta2 ** step": "bias2 = 1 - beta2 ** (step + 1)"}),
    Edit("second_moment_of_grad", "accumulates grad, not grad squared, in the second moment",
         {"(1 - beta2) * grad * grad": "(1 - beta2) * grad.abs()"}),
]
