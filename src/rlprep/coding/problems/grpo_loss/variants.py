"""Honest variants of grpo_loss."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("written_out", "the loss written from the paper, masked_fill for padding", source='''
        import torch


        def grpo_loss(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0, ref_logp=None,
                      aggregation="sequence"):
            if logp_new.shape != logp_old.shape or logp_new.shape != mask.shape or logp_new.ndim != 2:
                raise ValueError("logp_new, logp_old and mask must be [B, T]")
            if advantages.shape not in (logp_new.shape[:1], logp_new.shape):
                raise ValueError("advantages must be [B] or [B, T]")
            if beta > 0 and ref_logp is None:
                raise ValueError("beta > 0 needs ref_logp")
            if aggregation not in ("sequence", "token"):
                raise ValueError("aggregation must be sequence or token")
            valid = mask.bool()
            if torch.isnan(logp_new[valid]).any() or torch.isnan(logp_old[valid]).any():
                raise ValueError("NaN log-probs")
            delta = (logp_new - logp_old.detach()).masked_fill(~valid, 0.0)
            rho = delta.exp()
            A = advantages.detach()
            if A.ndim == 1:
                A = A[:, None].expand_as(rho)
            loss = -torch.minimum(rho * A, rho.clamp(1 - eps_low, 1 + eps_high) * A)
            if beta > 0:
                x = (ref_logp.detach() - logp_new).masked_fill(~valid, 0.0)
                loss = loss + beta * (x.exp() - x - 1)
            loss = loss.masked_fill(~valid, 0.0)
            w = valid.to(loss.dtype)
            if aggregation == "token":
                return loss.sum() / w.sum().clamp(min=1)
            return (loss.sum(-1) / w.sum(-1).clamp(min=1)).mean()
        '''),
    Edit("per_row_loop", "one row at a time", source='''
        import torch


        def grpo_loss(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=0.2, beta=0.0, ref_logp=None,
                      aggregation="sequence"):
            if aggregation not in {"sequence", "token"}:
                raise ValueError("unknown aggregation")
            if beta > 0 and (ref_logp is None or ref_logp.shape != logp_new.shape):
                raise ValueError("ref_logp needed")
            if not (logp_new.shape == logp_old.shape == mask.shape):
                raise ValueError("shapes")
            rows, tokens, count = [], [], 0
            for b in range(logp_new.shape[0]):
                keep = mask[b].bool()
                if torch.isnan(logp_new[b][keep]).any():
                    raise ValueError("NaN")
                new, old = logp_new[b][keep], logp_old[b][keep].detach()
                a = advantages[b].detach()
                a = a[keep] if a.ndim == 1 else a
                ratio = torch.exp(new - old)
                per = -torch.min(ratio * a, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * a)
                if beta > 0:
                    lr = ref_logp[b][keep].detach() - new
                    per = per + beta * (torch.exp(lr) - lr - 1)
                tokens.append(per.sum())
                count += int(keep.sum())
                rows.append(per.sum() / max(int(keep.sum()), 1))
            if aggregation == "token":
                return torch.stack(tokens).sum() / max(count, 1)
            return torch.stack(rows).mean()
        '''),
]
