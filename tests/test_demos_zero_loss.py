"""W11's evidence for a GRPO loss that *becomes* 0 (rlprep.demos.zero_loss): a sharper policy ties its groups,
a logged mean over micro-batches reads 0 while each micro-batch trains, group statistics computed inside
micro-batches erase the signal, and with β > 0 a tied batch still has the KL gradient."""

from __future__ import annotations

import pytest
import torch

from rlprep.demos.zero_loss import kl_gradient_when_tied, split_group_losses, zero_std_by_temperature


def test_a_logged_zero_hides_micro_batches_that_train():
    rewards = torch.tensor([1.0, 1, 1, 1, 0, 0, 0, 0] * 2)  # each group: right half, then wrong half
    out = split_group_losses(rewards, group_size=8, micro_batch=4)
    assert all(abs(m) > 0.5 for m in out["micro_losses"])  # every micro-batch has a loss ...
    assert out["logged_loss"] == pytest.approx(0.0, abs=1e-12)  # ... their mean, the printed number, is 0
    assert out["grad_norm"] > 0.05
    assert out["grad_norm_split_stats"] == 0.0  # half groups all right / all wrong: the signal is gone
    mixed = split_group_losses(torch.tensor([1.0, 0] * 8), group_size=8, micro_batch=4)
    assert mixed["grad_norm_split_stats"] > 0.05  # mixed halves keep a signal: the zero above is the split's doing
    with pytest.raises(ValueError):
        split_group_losses(rewards, group_size=8, micro_batch=3)


def test_with_beta_a_tied_batch_keeps_only_the_kl_gradient():
    out = kl_gradient_when_tied(beta=0.04)
    assert out["loss"] == pytest.approx(0.04 * out["k3_before"], rel=1e-9)  # the loss is β·KL alone
    assert out["grad_norm"] > 0 and out["k3_after"] < out["k3_before"]  # and its step pulls towards π_ref
    none = kl_gradient_when_tied(beta=0.0)
    assert none["loss"] == 0.0 and none["grad_norm"] == 0.0


def test_a_sharper_policy_ties_its_groups():
    from rlprep.tinyworld import get_task, load_policy

    policy, tokenizer = load_policy("arithmetic", "smoke")
    rows = zero_std_by_temperature(policy, tokenizer, get_task("arithmetic"), temperatures=(1.0, 0.05),
                                   pool_size=16, group_size=4)
    hot, cold = rows
    assert cold["frac_identical_groups"] >= 0.9 and cold["frac_zero_std_groups"] >= 0.9
    assert hot["frac_identical_groups"] < cold["frac_identical_groups"]
    assert 0.0 <= hot["frac_zero_std_groups"] <= cold["frac_zero_std_groups"]


def test_the_accuracy_column_tells_saturation_from_collapse():
    """W11's "became 0" evidence: the same tie signature from the trained additions (accuracy near 1, saturation) and
    from level-3 prompts the policy half fails (ties with accuracy well below 1, the collapse signature).

    The cold end is T = 0.05, where the ties are near 1 on both levels: at T = 0.5 the smoke start ties 81-91% of
    its level-2 groups depending on the machine's float rounding (measured on one-thread builds for AVX-512, AVX2 and
    no vector unit), so a 90% bar there tested the build, not the claim."""
    from rlprep.tinyworld import get_task, load_policy

    policy, tokenizer = load_policy("arithmetic", "smoke")
    task = get_task("arithmetic")
    for level, accuracy_ok in ((2, lambda a: a >= 0.9), (3, lambda a: a <= 0.7)):
        hot, cold = zero_std_by_temperature(policy, tokenizer, task, temperatures=(2.0, 0.05), pool_size=32,
                                            level=level)
        assert hot["frac_zero_std_groups"] < cold["frac_zero_std_groups"] and cold["frac_zero_std_groups"] >= 0.9, level
        assert accuracy_ok(cold["accuracy"]), (level, cold)
