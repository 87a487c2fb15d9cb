"""Known bugs for lab02_reward_model: ``bradley_terry_loss(chosen_rewards, rejected_rewards)``."""

import torch
import torch.nn.functional as F


def bt_sign_flipped(chosen_rewards, rejected_rewards):
    """Sign error: -log sigma(r_r - r_c) rewards the rejected completion."""
    return -F.logsigmoid(rejected_rewards - chosen_rewards).mean()


def bt_sum_not_mean(chosen_rewards, rejected_rewards):
    """Sum over the batch instead of the mean: the loss (and learning rate) scales with B."""
    return -F.logsigmoid(chosen_rewards - rejected_rewards).sum()


def bt_naive_log_sigmoid(chosen_rewards, rejected_rewards):
    """log(sigmoid(x)) instead of logsigmoid: sigmoid underflows to 0 and the loss is inf for large margins."""
    return -torch.log(torch.sigmoid(chosen_rewards - rejected_rewards)).mean()


def bt_missing_minus(chosen_rewards, rejected_rewards):
    """Missing minus sign: maximizes the negative log-likelihood."""
    return F.logsigmoid(chosen_rewards - rejected_rewards).mean()


def bt_probability_not_log(chosen_rewards, rejected_rewards):
    """1 - sigma(margin) instead of -log sigma(margin): not the Bradley-Terry likelihood."""
    return (1 - torch.sigmoid(chosen_rewards - rejected_rewards)).mean()


def bt_mean_margin_first(chosen_rewards, rejected_rewards):
    """Averages the margins before the nonlinearity: -log sigma(mean(r_c - r_r))."""
    return -F.logsigmoid((chosen_rewards - rejected_rewards).mean())


BUGS = {
    "bradley_terry_loss": [bt_sign_flipped, bt_sum_not_mean, bt_naive_log_sigmoid, bt_missing_minus,
                           bt_probability_not_log, bt_mean_margin_first],
}


# Correct alternatives: each must pass the lab's tests (guards against over-strict test cells) -----------------
def alt_softplus(chosen_rewards, rejected_rewards):
    """-log sigma(m) = softplus(-m): same value, same stability."""
    return F.softplus(rejected_rewards - chosen_rewards).mean()


def alt_bce_with_logits(chosen_rewards, rejected_rewards):
    """Binary cross-entropy on the margin with target 1 (the label 'chosen wins')."""
    margin = chosen_rewards - rejected_rewards
    return F.binary_cross_entropy_with_logits(margin, torch.ones_like(margin))


ALTERNATIVES = {"bradley_terry_loss": [alt_softplus, alt_bce_with_logits]}
