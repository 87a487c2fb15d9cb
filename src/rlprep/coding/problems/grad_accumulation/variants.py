"""Honest variants of accumulated_grad."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("manual_gradient", "the softmax-minus-one-hot gradient by hand, accumulated without autograd", source='''
        import torch


        def accumulated_grad(weight, hidden, targets, micro_batch_size, ignore_index=-100):
            V = weight.shape[0]
            valid_all = targets != ignore_index
            n = valid_all.sum()
            grad = torch.zeros_like(weight)
            loss = 0.0
            for s in range(0, hidden.shape[0], micro_batch_size):
                h = hidden[s:s + micro_batch_size].reshape(-1, hidden.shape[-1])
                t = targets[s:s + micro_batch_size].reshape(-1)
                keep = t != ignore_index
                h, t = h[keep], t[keep]
                logp = torch.log_softmax(h @ weight.T, dim=-1)
                loss += float(-logp[torch.arange(len(t)), t].sum() / n)
                d_logits = (logp.exp() - torch.nn.functional.one_hot(t, V).to(h.dtype)) / n
                grad += d_logits.T @ h
            return grad, loss
        '''),
    Edit("weights_by_token_share", "averages per micro-batch, then weights each by its share of the tokens", source='''
        import torch
        import torch.nn.functional as F


        def accumulated_grad(weight, hidden, targets, micro_batch_size, ignore_index=-100):
            total = (targets != ignore_index).sum().item()
            w = weight.detach().clone().requires_grad_()
            out = 0.0
            for s in range(0, len(hidden), micro_batch_size):
                t = targets[s:s + micro_batch_size]
                n = (t != ignore_index).sum().item()
                if n == 0:
                    continue
                logits = hidden[s:s + micro_batch_size] @ w.T
                mean = F.cross_entropy(logits.flatten(0, 1), t.flatten(), ignore_index=ignore_index)
                (mean * n / total).backward()
                out += mean.item() * n / total
            return w.grad, out
        '''),
]
