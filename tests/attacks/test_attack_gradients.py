"""Attacks on the gradient checks: autograd runs in the learner's kernel (``wire.serve`` calls
``rlprep.grading.asserts.value_and_grad`` there), so an answer cell can rebind the checker and report any gradient.

No grader can see how a kernel computed a gradient (a kernel can always lie about its own computation), so the
grade does not claim it: every test that relies on what the kernel reports about autograd (gradients, whether a
result is detached) or about non-contiguous inputs says so in its output and in the report, and docs/grading.md
lists those properties as checked in the learner's process.
"""

from __future__ import annotations

from lab_grading import ROOT, graded_cells, passed, shown

from rlprep.grading.executor import KERNEL_NOTE_MARK, kernel_side_checks

DPO_WITHOUT_STOP_GRADIENT = '''
import torch
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    margin = (policy_chosen_logps - ref_chosen_logps) - (policy_rejected_logps - ref_rejected_logps)  # no detach
    return -F.logsigmoid(beta * margin).mean()
'''

FAKE_GRADIENTS = '''
import rlprep.grading.asserts as A

_real = A.value_and_grad


def _fake(fn, wrt=(), **kwargs):
    value, grads = _real(fn, wrt=wrt, **kwargs)
    return value, {name: torch.zeros_like(g) if name.startswith("ref_") else g for name, g in grads.items()}


A.value_and_grad = _fake
'''


def test_a_kernel_that_fakes_the_stop_gradient_is_told_apart_in_the_report_and_the_docs():
    cells = graded_cells("lab04_dpo", {"dpo_loss": DPO_WITHOUT_STOP_GRADIENT + FAKE_GRADIENTS},
                         only={"test_dpo_gradients"})
    cell = cells["test_dpo_gradients"]
    # The grade cannot tell (lab04's dpo_loss without stop-gradient scored 15/15): this pins the limitation, so
    # the note below and the docs stay true. If a grader ever checks it outside the kernel, change both.
    assert passed(cell)
    note = [line for line in shown(cell).splitlines() if line.startswith(KERNEL_NOTE_MARK)]
    assert note and "gradients" in note[0] and "learner's kernel" in note[0] and "not a guarantee" in note[0], note
    assert "Where each property is checked" in note[0]
    docs = (ROOT / "docs" / "grading.md").read_text()
    section = docs.split("### Where each property is checked", 1)[1].split("\n## ", 1)[0]
    assert "stop-gradient" in section and "learner's kernel" in section


def test_which_calls_rely_on_the_kernel():
    import numpy as np
    import torch

    x = torch.zeros(2, 3)
    assert kernel_side_checks((x,), {}, "call") == set()
    assert kernel_side_checks((), {"x": x}, "value_and_grad") == {"gradients"}
    assert kernel_side_checks(([x.requires_grad_(True)],), {}, "call") == {"whether a result is detached"}
    assert kernel_side_checks((), {"a": {"b": torch.zeros(2, 3).T}}, "call") == {"non-contiguous inputs"}
    assert kernel_side_checks((np.asfortranarray(np.zeros((2, 3))),), {}, "call") == {"non-contiguous inputs"}
