"""GAE for one rollout: the course's one copy, rlprep.algos.gae.compute_gae (lab 1's reference).

O(T): one backward pass; (1 - done_t) cuts both the bootstrap and the recursion at an episode end.
"""

from rlprep.algos.gae import compute_gae
