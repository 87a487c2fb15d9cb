"""rlprep.multimodal.dual_encoder: shapes, the CLIP temperature cap, learning above chance, the τ gradient profile."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rlprep.multimodal import dual_encoder as de
from rlprep.multimodal import shapes


@pytest.mark.parametrize("bad,match", [
    (dict(temperature=0.0), "temperature"), (dict(batch_size=1), "batch_size"),
    (dict(learnable_temperature=True, temperature=0.001), "max_logit_scale"), (dict(image_size=8), "image_size"),
])
def test_config_rejects_bad_values(bad, match):
    with pytest.raises(ValueError, match=match):
        de.DualEncoderConfig(**bad)


def test_encoders_map_to_the_shared_space_and_captions_cover_96():
    cfg = de.DualEncoderConfig(embed_dim=8, n_train=4, batch_size=2)
    model = de.DualEncoder(cfg)
    captions, ids = de.all_captions()
    assert len(set(captions)) == 96 and ids.shape == (96, shapes.CAPTION_LEN)
    img, txt = model(torch.rand(3, 3, 32, 32), ids[:3])
    assert img.shape == (3, 8) and txt.shape == (3, 8)
    assert float(model.temperature()) == pytest.approx(0.07)
    assert not model.logit_scale.requires_grad  # a buffer when the temperature is fixed


def test_learned_logit_scale_is_capped_at_100():
    model = de.DualEncoder(de.DualEncoderConfig(learnable_temperature=True, n_train=4, batch_size=2))
    assert model.logit_scale.requires_grad
    with torch.no_grad():
        model.logit_scale.fill_(math.log(500.0))
    model.clamp_logit_scale()
    assert float(model.logit_scale.detach().exp()) == pytest.approx(100.0) and float(model.temperature().detach()) == pytest.approx(0.01)


def test_training_learns_far_above_chance_and_the_learned_temperature_moves():
    cfg = de.DualEncoderConfig(steps=120, n_train=512, n_test=128, learnable_temperature=True)
    data = de.make_data(cfg)
    untrained = de.recall_at_1(de.DualEncoder(cfg), data[1])
    model, hist = de.train_dual_encoder(cfg, data=data)
    assert hist["recall@1"][-1] > max(0.3, 5 * untrained)  # chance is 1/96
    assert hist["loss"][-1] < hist["loss"][0] and hist["temperature"][-1] != pytest.approx(0.07)
    assert all(t >= 0.01 - 1e-9 for t in hist["temperature"])


def test_gradient_profile_on_a_hand_sized_batch():
    emb = torch.eye(3, dtype=torch.float64)
    prof = de.gradient_profile(emb, emb, [0.01, 1e6])
    # matched pairs orthogonal to every negative: at tiny τ the match takes all the probability, no gradient
    assert prof["p_positive"][0] == pytest.approx(1.0) and prof["grad_norm"][0] < 1e-10
    # huge τ: uniform softmax, loss log B, the negatives share the push evenly
    assert prof["loss"][1] == pytest.approx(math.log(3)) and prof["p_positive"][1] == pytest.approx(1 / 3)
    assert prof["hardest_share"][1] == pytest.approx(0.5) and prof["effective_negatives"][1] == pytest.approx(2.0)
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(8, 4, generator=g), torch.randn(8, 4, generator=g)
    prof = de.gradient_profile(a, b, np.geomspace(0.01, 1.0, 5))
    assert np.all(np.diff(prof["grad_norm"]) < 0) and np.all(np.diff(prof["hardest_share"]) < 0)
