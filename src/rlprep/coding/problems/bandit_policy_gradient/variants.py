"""Honest variants of policy_gradient_step."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("autograd", "log_softmax and torch.autograd.grad", source='''
        import torch


        def policy_gradient_step(logits, rewards, uniforms, lr):
            with torch.no_grad():
                cdf = torch.softmax(logits, 0).cumsum(0)
                actions = torch.searchsorted(cdf, uniforms.to(cdf.dtype), right=True).clamp(max=len(logits) - 1)
                r = rewards[actions]
                adv = r - r.mean()
            theta = logits.detach().clone().requires_grad_(True)
            objective = (adv * torch.log_softmax(theta, 0)[actions]).mean()
            (grad,) = torch.autograd.grad(objective, theta)
            return (theta + lr * grad).detach(), actions, adv
        '''),
    Edit("counts", "the gradient from action counts: sum_i A_i onehot(a_i) / G minus mean(A) pi", source='''
        import torch


        def policy_gradient_step(logits, rewards, uniforms, lr):
            K, G = logits.shape[0], uniforms.shape[0]
            p = torch.exp(logits - logits.max())
            p = p / p.sum()
            c = torch.cumsum(p, 0)
            acts = []
            for u in uniforms.tolist():
                i = 0
                while i < K - 1 and float(c[i]) <= u:
                    i += 1
                acts.append(i)
            actions = torch.tensor(acts, dtype=torch.int64)
            r = rewards[actions]
            adv = r - r.sum() / G
            grad = torch.zeros_like(logits)
            grad.index_add_(0, actions, adv / G)
            grad = grad - adv.mean() * p
            return logits + lr * grad, actions, adv
        '''),
]
