"""Honest variants of ppo_loss."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("cleanrl_style", "CleanRL's names (pg_loss1/pg_loss2, v_loss_unclipped/v_loss_clipped) on selected tokens", source='''
        import torch


        def ppo_loss(logp_new, logp_old, advantages, values, old_values, returns, entropy, mask, clip_eps=0.2,
                     vf_clip=0.2, vf_coef=0.5, ent_coef=0.01):
            shapes = {t.shape for t in (logp_new, logp_old, advantages, values, old_values, returns, entropy, mask)}
            if len(shapes) != 1:
                raise ValueError("every input must have one [B, T] shape")
            m = mask.bool()
            if not m.any():
                raise ValueError("no valid token")
            logratio = logp_new[m] - logp_old[m].detach()
            ratio = logratio.exp()
            adv = advantages[m].detach()
            pg_loss1 = -adv * ratio
            pg_loss2 = -adv * torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()
            new_v, old_v, ret = values[m], old_values[m].detach(), returns[m].detach()
            v_loss_unclipped = (new_v - ret) ** 2
            v_clipped = old_v + torch.clamp(new_v - old_v, -vf_clip, vf_clip)
            v_loss_clipped = (v_clipped - ret) ** 2
            v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
            return pg_loss + vf_coef * v_loss - ent_coef * entropy[m].mean()
        '''),
    Edit("where_masked", "torch.where on the full [B, T] tensors and one token count", source='''
        import torch


        def ppo_loss(logp_new, logp_old, advantages, values, old_values, returns, entropy, mask, clip_eps=0.2,
                     vf_clip=0.2, vf_coef=0.5, ent_coef=0.01):
            if not (logp_new.shape == logp_old.shape == advantages.shape == values.shape == old_values.shape
                    == returns.shape == entropy.shape == mask.shape):
                raise ValueError("shape mismatch")
            valid = mask > 0
            n = valid.sum()
            if n == 0:
                raise ValueError("empty mask")
            z = torch.zeros_like(logp_new)
            lr = torch.where(valid, logp_new - logp_old.detach(), z)
            r = torch.exp(lr)
            a = torch.where(valid, advantages.detach(), z)
            surrogate = torch.minimum(r * a, r.clamp(1 - clip_eps, 1 + clip_eps) * a)
            policy = -(torch.where(valid, surrogate, z)).sum() / n
            v = torch.where(valid, values, z)
            vo = torch.where(valid, old_values.detach(), z)
            R = torch.where(valid, returns.detach(), z)
            vclip = torch.clamp(v, vo - vf_clip, vo + vf_clip)
            vloss = 0.5 * torch.where(valid, torch.maximum((v - R) ** 2, (vclip - R) ** 2), z).sum() / n
            ent = torch.where(valid, entropy, z).sum() / n
            return policy + vf_coef * vloss - ent_coef * ent
        '''),
]
