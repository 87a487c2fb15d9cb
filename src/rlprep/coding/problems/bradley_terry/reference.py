"""The Bradley–Terry reward-model loss: the course's one copy, rlprep.algos.reward_model.bradley_terry_loss (lab 2).

O(B); F.logsigmoid keeps it finite for any margin.
"""

from rlprep.algos.reward_model import bradley_terry_loss
