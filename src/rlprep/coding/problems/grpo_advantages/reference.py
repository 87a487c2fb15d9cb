"""GRPO's group-relative advantages: the course's one copy, rlprep.algos.grpo.group_advantages (lab 5's reference).

O(N G); Bessel-corrected stds plus eps, exactly as TRL 1.16's GRPOTrainer.
"""

from rlprep.algos.grpo import group_advantages
