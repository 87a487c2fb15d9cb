"""Reference implementations of every graded function (the one copy the labs' answer cells are generated from).

Each graded function is small, pure and self-contained: it uses only ``math``, ``numpy as np``, ``torch`` and
``torch.nn.functional as F`` (plus ``cv2`` in ``image_diff``), and at most a graded function of its own lab defined
above it (``grpo_loss`` calls lab 5's ``kl_k3``), so ``rlprep release`` can paste its source into a notebook answer
cell that runs in the sandboxed kernel, which has no ``rlprep.algos``. Import the submodules directly, e.g. ``from rlprep.algos.dpo import dpo_loss``.
"""
