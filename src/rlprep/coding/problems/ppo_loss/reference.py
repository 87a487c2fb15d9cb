"""PPO's total loss from the course's one copy of each part: rlprep.algos.ppo's ppo_clip_loss (Schulman et al. 2017,
Eq. 7), value_loss (the ppo2 value clip) and masked_mean; combined as Eq. 9 (policy + c1 value - c2 entropy). O(B T).
"""

from rlprep.algos.ppo import masked_mean, ppo_clip_loss, value_loss


def ppo_loss(logp_new, logp_old, advantages, values, old_values, returns, entropy, mask, clip_eps=0.2,
             vf_clip=0.2, vf_coef=0.5, ent_coef=0.01):
    """PPO's total loss over valid tokens: clipped policy loss + vf_coef * clipped value loss - ent_coef * entropy.
    All tensors [B, T]; mask 1 on valid tokens. Returns a scalar tensor."""
    policy = ppo_clip_loss(logp_new, logp_old, advantages, mask, clip_eps)
    value = value_loss(values, old_values, returns, mask, vf_clip)
    return policy + vf_coef * value - ent_coef * masked_mean(entropy, mask)
