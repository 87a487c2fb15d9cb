"""CLIP's symmetric InfoNCE: the course's one copy, rlprep.algos.infonce.infonce_loss (lab 7).

O(B^2 D); the loss at random initialisation is about log B.
"""

from rlprep.algos.infonce import infonce_loss
