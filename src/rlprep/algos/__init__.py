"""Reference implementations of every graded function (the one copy the labs' answer cells are generated from).

Each function is small, pure and self-contained: it uses only ``math``, ``numpy as np``, ``torch`` and
``torch.nn.functional as F`` (plus ``cv2`` in ``image_diff``), so ``rlprep release`` can paste its source into a
notebook answer cell. Import the submodules directly, e.g. ``from rlprep.algos.dpo import dpo_loss``.
"""
