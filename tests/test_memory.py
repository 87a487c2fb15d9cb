"""G11 memory arithmetic, pinned to the ZeRO paper's own numbers (arXiv 1910.02054)."""

from __future__ import annotations

import pytest

from rlprep.memory import GB, activation_bytes, model_state_bytes


def test_mixed_precision_adam_is_16_bytes_per_param():
    states = model_state_bytes(1.0)
    assert (states.weights, states.grads, states.optimizer) == (2.0, 2.0, 12.0)


def test_zero_paper_example_7_5b_is_120_gb():
    assert model_state_bytes(7.5e9).model_states / GB == pytest.approx(120.0)


def test_7b_is_112_gb_not_the_seeds_56_gb_optimizer_estimate():
    states = model_state_bytes(7e9)
    assert states.model_states / GB == pytest.approx(112.0)
    # The seed counts only Adam's two fp32 moments (8 B/param = 56 GB) and forgets the fp32 master copy.
    assert states.optimizer / GB == pytest.approx(84.0)


@pytest.mark.parametrize("stage,expected", [(1, 4 + 12 / 64), (2, 2 + 14 / 64), (3, 16 / 64)])
def test_zero_stage_formulas(stage, expected):
    # Paper, Sec. 5: P_os = 4Ψ + KΨ/N_d, P_os+g = 2Ψ + (2+K)Ψ/N_d, P_os+g+p = (4+K)Ψ/N_d with K = 12.
    assert model_state_bytes(1.0, n_gpus=64, zero_stage=stage).model_states == pytest.approx(expected)


def test_checkpointing_keeps_only_layer_inputs():
    full = activation_bytes(2048, 1, 4096, 32, 32)
    ckpt = activation_bytes(2048, 1, 4096, 32, 32, checkpointing=True)
    assert ckpt == 2 * 2048 * 4096 * 32
    assert full / ckpt == pytest.approx((34 + 5 * 32 * 2048 / 4096) / 2)


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="zero_stage"):
        model_state_bytes(1e9, zero_stage=4)
    with pytest.raises(ValueError, match="unknown dtype"):
        model_state_bytes(1e9, weight_dtype="int3")
