"""Reward-signal toys (notebook 01): BT fit, best-of-n Goodhart, pass@k, informative GRPO groups."""

import math

import numpy as np
import pytest

from rlprep.demos.reward_signals import best_of_n_gold, fit_linear_bradley_terry, informative_group_fraction, pass_at_k


def test_bradley_terry_fit_recovers_ranking_and_noise_hurts():
    clean = fit_linear_bradley_terry(400, flip_rate=0.0, seed=0)
    noisy = fit_linear_bradley_terry(400, flip_rate=0.3, seed=0)
    assert clean["test_accuracy"] > 0.9 and clean["cosine"] > 0.9
    assert noisy["test_accuracy"] < clean["test_accuracy"]
    assert noisy["label_agreement"] == pytest.approx(0.7, abs=0.06)


def test_best_of_n_goodhart_shapes():
    ns = [1, 4, 64]
    light = best_of_n_gold(ns, "gaussian", trials=3000, seed=1)
    assert light["gold"][0] == pytest.approx(0.0, abs=0.05)  # n = 1 is a random pick
    assert np.all(np.diff(light["gold"]) > 0) and np.all(light["proxy"][1:] > light["gold"][1:])
    heavy = best_of_n_gold([4, 4096], "heavy", trials=500, seed=2)
    assert heavy["gold"][1] < heavy["gold"][0]  # the proxy's maximum is an error outlier


def test_pass_at_k_by_hand():
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 1, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(4, 2))  # = 0.5
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(5, 3, 3) == 1.0


def test_informative_groups():
    assert informative_group_fraction(0.0, 8) == 0.0
    assert informative_group_fraction(0.5, 2) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        informative_group_fraction(0.5, 1)
