"""rlprep.multimodal: synthetic data, connector shapes and parameter counts, and seeded runs that must learn."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlprep.multimodal import shapes as S
from rlprep.multimodal.connectors import (GatedCrossAttention, MLPProjector, PerceiverResampler, QFormer,
                                          count_parameters)


def test_make_shapes_shapes_ranges_and_captions():
    batch = S.make_shapes(12, image_size=24, seed=3, noise_std=0.1)
    assert batch.images.shape == (12, 3, 24, 24) and batch.images.dtype == np.float32
    assert batch.images.min() >= 0.0 and batch.images.max() <= 1.0
    assert batch.token_ids.shape == (12, S.CAPTION_LEN) and batch.token_ids.dtype == np.int64
    for caption, ids, attrs in zip(batch.captions, batch.token_ids, batch.attributes):
        assert S.decode(ids) == caption == S.caption_of(attrs)
    again = S.make_shapes(12, image_size=24, seed=3, noise_std=0.1)
    np.testing.assert_array_equal(batch.images, again.images)


def test_render_paints_the_colour_at_the_shape_centre_and_background_elsewhere():
    # a large red square at the top left, no noise, full contrast
    attrs = np.array([[S.SHAPES.index("square"), S.COLOUR_NAMES.index("red"), 1, 0]])
    img = S.render(attrs, image_size=32, rng=np.random.default_rng(0))[0]
    np.testing.assert_allclose(img[:, 8, 8], S.COLOURS["red"], atol=1e-6)
    np.testing.assert_allclose(img[:, 28, 28], [S.BACKGROUND] * 3)
    faint = S.render(attrs, image_size=32, contrast=0.5, rng=np.random.default_rng(0))[0]
    np.testing.assert_allclose(faint[:, 8, 8], 0.5 + 0.5 * (np.array(S.COLOURS["red"]) - 0.5), atol=1e-6)


def test_shape_masks_differ_and_triangle_points_up():
    circle, square, triangle = (S.shape_mask(s, 16, 16, 8, 32) for s in S.SHAPES)
    assert circle.sum() != square.sum() != triangle.sum()
    assert triangle[9:12].sum() < triangle[20:23].sum()  # narrow near the apex, wide near the base


def test_colour_given_shape_prior_is_respected():
    table = np.zeros((3, 4))
    table[:, 2] = 1.0  # every shape blue
    batch = S.make_shapes(50, seed=0, colour_given_shape=table)
    assert (batch.attributes[:, 1] == 2).all()
    with pytest.raises(ValueError, match="colour_given_shape"):
        S.make_shapes(5, colour_given_shape=np.ones((3, 4)))


def test_perturb_changes_exactly_one_attribute():
    attrs = S.sample_attributes(500, np.random.default_rng(1))
    wrong = S.perturb_one_attribute(attrs, np.random.default_rng(2))
    assert ((wrong != attrs).sum(axis=1) == 1).all()
    assert (wrong < np.array(S.N_VALUES)).all() and (wrong >= 0).all()


def test_encode_rejects_unknown_words_and_overlong_text():
    assert S.encode("a red circle", length=5)[-2:] == [S.PAD_ID, S.PAD_ID]
    with pytest.raises(ValueError, match="vocabulary"):
        S.encode("a purple circle")
    with pytest.raises(ValueError, match="length"):
        S.encode("a red circle", length=2)


def test_connector_output_shapes_and_token_counts():
    feats = torch.randn(2, 36, 32)  # (B, P, D_v)
    mlp, qf, rs = MLPProjector(32, 48), QFormer(32, 48, n_queries=5, d_hidden=16), PerceiverResampler(32, 48, n_latents=7)
    assert mlp(feats).shape == (2, 36, 48) and mlp.num_tokens(36) == 36 and mlp.num_tokens(36, n_images=9) == 324
    assert qf(feats).shape == (2, 5, 48) and qf(torch.randn(2, 100, 32)).shape == (2, 5, 48) and qf.num_tokens(576) == 5
    assert rs(feats).shape == (2, 7, 48) and rs(torch.randn(2, 3, 36, 32)).shape == (2, 7, 48)  # 3 frames -> 7 tokens
    with pytest.raises(ValueError, match="max_frames"):
        rs(torch.randn(1, 9, 4, 32))


def test_parameter_counts_worked_by_hand():
    # LLaVA-1.5 scale: CLIP ViT-L/14 width 1024 -> Vicuna-7B width 4096, two linear layers with biases
    with torch.device("meta"):
        llava15 = MLPProjector(1024, 4096)
        llava = MLPProjector(1024, 4096, n_layers=1)
    assert count_parameters(llava15) == 1024 * 4096 + 4096 + 4096 * 4096 + 4096 == 20_979_712
    assert count_parameters(llava) == 1024 * 4096 + 4096
    assert count_parameters(QFormer(8, 8, n_queries=3, d_hidden=8, n_layers=1)) > 3 * 8  # queries are parameters
    assert QFormer(8, 8, n_queries=3, d_hidden=8).queries.numel() == 24


def test_gated_cross_attention_is_identity_at_init_and_not_after_opening_the_gate():
    block = GatedCrossAttention(16, 8)
    x, visual = torch.randn(2, 5, 16), torch.randn(2, 3, 8)
    torch.testing.assert_close(block(x, visual), x)  # tanh(0) = 0: the frozen LM is untouched
    with torch.no_grad():
        block.alpha_xattn.fill_(1.0)
    assert not torch.allclose(block(x, visual), x)


def test_qformer_and_resampler_outputs_depend_on_the_image():
    torch.manual_seed(0)
    for conn in (QFormer(16, 16, n_queries=4, d_hidden=16), PerceiverResampler(16, 16, n_latents=4)):
        a, b = conn(torch.randn(1, 9, 16)), conn(torch.randn(1, 9, 16))
        assert not torch.allclose(a, b)


@pytest.mark.parametrize("connector", ["mlp", "qformer", "resampler"])
def test_tiny_vlm_learns_to_use_the_image(connector):
    """Overfitting 24 captions: the true caption must beat one-attribute-off captions far above chance (1/4),
    which a model that ignores the image cannot do (every image's caption is equally likely to it)."""
    from rlprep.multimodal.captioner import TinyVLM, caption_loss, evaluate

    torch.manual_seed(0)
    model = TinyVLM(connector, n_queries=4)
    data = S.make_shapes(24, image_size=24, seed=0)
    images, ids = torch.from_numpy(data.images), torch.from_numpy(data.token_ids)
    before = evaluate(model, data)["eval/match_accuracy"]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(150):
        loss = caption_loss(model(images, ids), ids)
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = evaluate(model, data)["eval/match_accuracy"]
    assert after >= 0.6 and after > before + 0.2, (before, after)


def test_colour_qa_prior_makes_a_blind_model_hallucinate_and_a_vivid_image_fixes_it():
    from rlprep.multimodal.colour_qa import hallucination_by_contrast, make_qa, train_supervised

    train = make_qa(1000, 0, typical_prob=0.85)
    test = make_qa(500, 1, counterfactual_only=True, contrasts=(0.05, 1.0))
    blind = hallucination_by_contrast(train_supervised(train, use_image=False, steps=150), test)
    assert all(v["hallucination"] == 1.0 for v in blind.values())  # text only: always the typical colour
    seeing = hallucination_by_contrast(train_supervised(train, steps=200), test)
    assert seeing[1.0]["accuracy"] > 0.8 and seeing[0.05]["hallucination"] > seeing[1.0]["hallucination"] + 0.3


def test_grpo_on_biased_prompts_earns_reward_without_looking():
    from rlprep.multimodal.colour_qa import grpo_train, make_qa

    prompts = make_qa(1000, 0, typical_prob=0.85)
    _, log = grpo_train(prompts, steps=60, eval_data=make_qa(400, 1, typical_prob=0.25))
    assert log[-2]["reward/mean"] > log[0]["reward/mean"] + 0.3
    assert log[-1]["eval/counterfactual_accuracy"] < 0.25  # the policy learned the prior, not the image


def test_grpo_logs_zero_variance_groups_whose_gradient_is_exactly_zero():
    """A collapsed policy samples groups that are all right or all wrong: GRPO's advantages and gradient are 0."""
    from rlprep.multimodal.colour_qa import grpo_train, make_qa

    _, log = grpo_train(make_qa(1000, 0, typical_prob=0.85), steps=60, eval_data=make_qa(400, 1, typical_prob=0.25))
    rows = [r for r in log if "reward/mean" in r]
    assert all(0.0 <= r["stats/frac_zero_std_groups"] <= 1.0 for r in rows)
    assert rows[0]["stats/frac_zero_std_groups"] < 0.5  # a random init explores: most groups mix right and wrong
    last = rows[-1]
    assert (last["stats/frac_zero_std_groups"] == 1.0) == (last["stats/grad_norm"] == 0.0)
    assert last["stats/frac_zero_std_groups"] == 1.0 and last["stats/grad_norm"] == 0.0


def test_attention_pooling_weights_are_a_distribution_over_existing_images():
    from rlprep.multimodal.fusion import NoteClassifier, make_notes

    notes = make_notes(20, 4, seed=0)
    assert notes.mask[:, 0].all() and ((notes.where < notes.mask.sum(1)) | (notes.where == -1)).all()
    for pooling in ("cover", "mean", "attention"):
        _, w = NoteClassifier(pooling)(notes)
        torch.testing.assert_close(w.sum(1), torch.ones(20))
        assert (w[~notes.mask] == 0).all()


@pytest.mark.slow
def test_captioner_mlp_generalizes_to_held_out_images():
    """The notebook's cpu-profile run (600 steps, seed 0): the MLP projector's held-out match accuracy leaves
    chance (0.25) by a wide margin."""
    from rlprep.multimodal.captioner import MatchConfig, train_captioner

    _, log = train_captioner(MatchConfig(connector="mlp", steps=600, eval_every=600))
    assert log[0]["eval/match_accuracy"] < 0.35 and log[-1]["eval/match_accuracy"] > 0.4, log


def test_config_and_bad_input_errors():
    from rlprep.multimodal.captioner import MatchConfig, TinyVLM
    from rlprep.multimodal.colour_qa import prior_table
    from rlprep.multimodal.fusion import NoteClassifier

    with pytest.raises(ValueError, match="connector"):
        MatchConfig(connector="linear")
    with pytest.raises(ValueError, match="steps"):
        MatchConfig(steps=0)
    with pytest.raises(ValueError, match="patch"):
        TinyVLM(image_size=25, patch=6)
    with pytest.raises(ValueError, match="pooling"):
        NoteClassifier("max")
    with pytest.raises(ValueError, match="typical_prob"):
        prior_table(1.5)
    np.testing.assert_allclose(prior_table(0.85).sum(1), 1.0)
