"""Importance weights and their truncation: the course's one copy, rlprep.algos.importance_sampling.importance_weights
(lab 6; V-trace's rho-bar, arXiv 1802.01561, Eq. 1). O(N), computed in log space.
"""

from rlprep.algos.importance_sampling import importance_weights
