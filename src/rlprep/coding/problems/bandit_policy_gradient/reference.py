"""One policy-gradient step on a softmax bandit: sample by inverse CDF, reward, group-mean baseline, ascent.

O(G + K); the gradient of mean(A log pi(a)) with respect to the logits is mean(A (onehot(a) - pi)).
"""

import torch


def policy_gradient_step(logits, rewards, uniforms, lr):
    """One RL step of a softmax policy over K actions: sample G actions with the uniforms, score them with the
    reward table, compute group-mean-baseline advantages and take a gradient-ascent step on the logits.
    logits: [K]; rewards: [K]; uniforms: [G]. Returns (new_logits [K], actions [G] int64, advantages [G])."""
    probs = torch.softmax(logits, dim=-1)  # (K,)
    cdf = probs.cumsum(dim=-1)  # (K,)
    actions = (cdf[None, :] <= uniforms[:, None]).sum(dim=-1).clamp(max=logits.shape[0] - 1)  # (G,) rollout
    r = rewards[actions]  # (G,) reward
    advantages = r - r.mean()  # (G,) group-mean baseline
    onehot = torch.nn.functional.one_hot(actions, logits.shape[0]).to(probs.dtype)  # (G, K)
    grad = (advantages[:, None] * (onehot - probs[None, :])).mean(dim=0)  # (K,) d mean(A log pi(a)) / d logits
    return logits + lr * grad, actions, advantages  # ascent
