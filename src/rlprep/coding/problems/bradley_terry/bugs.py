"""Catalogued bugs of bradley_terry_loss."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("log_of_sigmoid", "log(sigmoid(m)): an infinite loss for very negative margins",
         {"return -F.logsigmoid(margin).mean()": "return -torch.log(torch.sigmoid(margin)).mean()"}),
    Edit("margin_reversed", "rejected minus chosen",
         {"margin = chosen_rewards - rejected_rewards  # (B,)": "margin = rejected_rewards - chosen_rewards  # (B,)"}),
    Edit("sum_over_pairs", "sums over pairs",
         {"return -F.logsigmoid(margin).mean()": "return -F.logsigmoid(margin).sum()"}),
    Edit("hinge", "a hinge on the margin instead of the logistic loss",
         {"return -F.logsigmoid(margin).mean()": "return torch.clamp(1 - margin, min=0).mean()"}),
    Edit("accepts_column_rewards", "accepts [B, 1] rewards (pairs then broadcast into [B, B])",
         {"if chosen_rewards.ndim != 1 or chosen_rewards.shape != rejected_rewards.shape:":
          "if chosen_rewards.shape != rejected_rewards.shape:"}),
]
