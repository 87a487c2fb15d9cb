"""rlprep.demos.dr_grpo_weights (lab09's demo cell): per-token gradient weights of GRPO and of a learner's Dr. GRPO."""

from __future__ import annotations

import pytest
import torch

from rlprep.algos.pg_losses import PG_LOSSES
from rlprep.demos.dr_grpo_weights import compare_weights, one_group, token_weights


def test_weights_worked_by_hand_on_a_two_completion_group():
    # lengths 1 and 3, rewards [1, 0]: Dr. GRPO's A = [0.5, -0.5], every valid token weighs A / (B * T) = A / 6;
    # GRPO's A = +-1 / (std [1, 0] + 1e-4) with std = sqrt(1/2), and a token weighs A / (B * |o_i|)
    batch = one_group(lengths=(1, 3), rewards=(1.0, 0.0))
    out = compare_weights(PG_LOSSES["dr_grpo"], batch, plot=False)
    mask = batch["mask"]
    assert torch.allclose(out["dr_grpo"], torch.tensor([[0.5 / 6, 0, 0], [-0.5 / 6] * 3], dtype=torch.float64) * mask)
    a = 0.5 / (2 ** -0.5 + 1e-4)
    assert torch.allclose(out["grpo"], torch.tensor([[a / 2, 0, 0], [-a / 6] * 3], dtype=torch.float64))
    assert out["length_free"] is True


def test_a_length_normalised_loss_is_flagged(capsys):
    out = compare_weights(PG_LOSSES["grpo"], plot=False)  # GRPO's 1/|o_i| passed off as Dr. GRPO
    assert out["length_free"] is False
    assert "NO (look at the divisor" in capsys.readouterr().out
    assert compare_weights(PG_LOSSES["dr_grpo"], plot=False)["length_free"] is True


def test_padding_gets_no_weight_and_bad_groups_are_refused():
    batch = one_group()
    w = token_weights(PG_LOSSES["dapo"], torch.ones(4, dtype=torch.float64), batch)
    assert bool((w[batch["mask"] == 0] == 0).all())  # DAPO, A = +1 on-policy: every one of the 30 tokens gets 1/30
    assert torch.allclose(w[batch["mask"] == 1], torch.full((30,), 1 / 30, dtype=torch.float64))
    with pytest.raises(ValueError, match="one length >= 1 per reward"):
        one_group(lengths=(3, 0), rewards=(1.0, 0.0))


def test_off_policy_weights_show_the_clip():
    # one token of a positive-advantage completion has ratio e^0.5 > 1 + eps: PPO-style clipping (GRPO) zeroes
    # its weight, CISPO keeps it at the clipped weight times A / (total tokens), its neighbours keep r * A / ...
    batch = one_group(lengths=(2, 2), rewards=(1.0, 0.0))
    logp_new = batch["logp"].clone()
    logp_new[0, 0] += 0.5
    adv = torch.tensor([1.0, -1.0], dtype=torch.float64)
    grpo = token_weights(PG_LOSSES["grpo"], adv, batch, logp_new)
    assert grpo[0, 0] == 0 and torch.allclose(grpo[0, 1], torch.tensor(1 / 4, dtype=torch.float64))
    cispo = token_weights(PG_LOSSES["cispo"], adv, batch, logp_new)
    assert torch.allclose(cispo[0, 0], torch.exp(torch.tensor(0.5, dtype=torch.float64)) / 4)
    assert torch.equal(token_weights(PG_LOSSES["grpo"], adv, batch), token_weights(PG_LOSSES["grpo"], adv, batch,
                                                                                   batch["logp"]))
