"""Catalogued bugs of policy_gradient_step."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("no_baseline", "uses the raw rewards as advantages",
         {"advantages = r - r.mean()  # (G,) group-mean baseline": "advantages = r"}),
    Edit("gradient_descent", "steps against the gradient",
         {"return logits + lr * grad, actions, advantages  # ascent": "return logits - lr * grad, actions, advantages"}),
    Edit("score_sign", "uses pi - onehot as the gradient of log pi",
         {"(onehot - probs[None, :])": "(probs[None, :] - onehot)"}),
    Edit("greedy_rollout", "always takes the most likely action",
         {"actions = (cdf[None, :] <= uniforms[:, None]).sum(dim=-1).clamp(max=logits.shape[0] - 1)  # (G,) rollout":
          "actions = logits.argmax().repeat(uniforms.shape[0])"}),
    Edit("table_mean_baseline", "subtracts the mean of the reward table instead of the sampled group's",
         {"advantages = r - r.mean()": "advantages = r - rewards.mean()"}),
    Edit("sum_over_samples", "sums the per-sample gradients instead of averaging",
         {"(onehot - probs[None, :])).mean(dim=0)": "(onehot - probs[None, :])).sum(dim=0)"}),
]
