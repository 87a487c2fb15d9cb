"""Catalogued bugs of dpo_loss."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("reference_not_detached", "lets the gradient reach the frozen reference's log-probs",
         {"ref_chosen_logps.detach()": "ref_chosen_logps", "ref_rejected_logps.detach()": "ref_rejected_logps"}),
    Edit("margin_sign_flipped", "prefers the rejected completion",
         {"beta * (chosen_logratios - rejected_logratios)": "beta * (rejected_logratios - chosen_logratios)"}),
    Edit("log_of_sigmoid", "log(sigmoid(z)) underflows to -inf for large negative margins",
         {"-F.logsigmoid(beta * (chosen_logratios - rejected_logratios))":
          "-torch.log(torch.sigmoid(beta * (chosen_logratios - rejected_logratios)))"}),
    Edit("forgets_beta", "drops beta from the sigmoid's argument",
         {"beta * (chosen_logratios - rejected_logratios)": "(chosen_logratios - rejected_logratios)"}),
    Edit("sum_over_pairs", "sums the pair losses instead of averaging them",
         {"rejected_logratios)).mean()": "rejected_logratios)).sum()"}),
    Edit("accepts_beta_zero", "lets beta = 0 through (the loss is then ln 2 whatever the data)",
         {"if beta <= 0:": "if beta < 0:"}),
]
