"""The DPO loss: the course's one copy, rlprep.algos.dpo.dpo_loss (lab 4's reference).

O(B); F.logsigmoid keeps it finite for any margin; the reference log-probs are detached.
"""

from rlprep.algos.dpo import dpo_loss
