"""The whiteboard code printed in a walkthrough's markdown runs and agrees with the course's reference functions.

A learner copies it into the lab, so it must survive the lab's visible inputs (round38g: W12's version crashed on
the -100 labels Lab 4 passes on padding)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import nbformat
import torch
import torch.nn.functional as F

from rlprep.algos import dpo

ROOT = Path(__file__).parents[1]


def _whiteboard(notebook: str, cell_id: str) -> dict:
    nb = nbformat.read(ROOT / "notebooks" / notebook, as_version=4)
    source = {c.id: c.source for c in nb.cells}[cell_id]
    code = re.search(r"```python\n(.*?)```", source, re.S).group(1)
    namespace = {"torch": torch, "F": F}
    exec(compile(code, f"{notebook}:{cell_id}", "exec"), namespace)
    return namespace


def test_w12_whiteboard_matches_the_reference_on_lab4_style_inputs():
    wb = _whiteboard("05_dpo.ipynb", "w12-full")
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 5, 7, generator=g)
    labels = torch.randint(0, 7, (2, 5), generator=g)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.float32)
    labels[0, 3:] = -100  # the Hugging Face padding label
    assert torch.allclose(wb["sequence_logprobs"](logits, labels, mask), dpo.sequence_logprobs(logits, labels, mask))
    chosen, rejected = torch.tensor([-3.0, -200.0]), torch.tensor([-5.0, 0.0])
    ref = torch.zeros(2)
    got = wb["dpo_loss"](chosen, rejected, ref, ref, beta=1.0)
    assert torch.isfinite(got)  # a margin of -200 in float32: logsigmoid, not log(sigmoid)
    assert math.isclose(float(got), float(dpo.dpo_loss(chosen, rejected, ref, ref, beta=1.0)), rel_tol=1e-6)


def test_g09_whiteboard_matches_the_reference_with_inf_padding_in_value_and_gradient():
    from rlprep.algos import ppo

    wb = _whiteboard("03_ppo_clip_vs_kl.ipynb", "g09-full")  # the first ```python block: the whiteboard loss
    g = torch.Generator().manual_seed(1)
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    logp_old = torch.randn(2, 4, generator=g) - 1.0
    adv = torch.randn(2, 4, generator=g)
    base = logp_old + 0.3 * torch.randn(2, 4, generator=g)  # ratios beyond 1 ± 0.2 on both sides
    pad = torch.tensor(float("-inf"))
    logp_old_padded = torch.where(mask > 0, logp_old, pad)
    grads = []
    for fn in (wb["ppo_clip_loss"], lambda *a: ppo.ppo_clip_loss(*a, clip_eps=0.2)):
        logp = torch.where(mask > 0, base, pad).requires_grad_(True)
        loss = fn(logp, logp_old_padded, adv, mask)
        loss.backward()
        assert torch.isfinite(loss) and torch.isfinite(logp.grad).all()
        grads.append((loss.detach(), logp.grad))
    assert torch.allclose(grads[0][0], grads[1][0]) and torch.allclose(grads[0][1], grads[1][1])
