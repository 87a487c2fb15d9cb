"""Reward-hacking demo: the text features are counted by hand; probes pair each rung's RM and gold scores."""

from __future__ import annotations

import pytest

from rlprep.demos.reward_hacking import PROBE_LADDERS, review_features, rm_probes
from rlprep.tinyworld import get_task


def test_review_features_by_hand():
    texts = [" it is very very lovely.",                                   # 24 chars, 2 ints, 1 repeat
             " it is very good. the price is very really fine.",         # 48 chars, 3 ints, 0 repeats
             " it is is good."]                                            # unparsable, 0 ints
    f = review_features(["Review of the mug:"] * 3, texts)
    assert f["text/chars"] == pytest.approx((24 + 48 + 15) / 3)
    assert f["text/intensifiers"] == pytest.approx(5 / 3)
    assert f["text/repeats"] == pytest.approx(1 / 3)
    assert f["text/over_budget"] == 0.0  # 48 is within the budget
    assert f["text/parse_rate"] == pytest.approx(2 / 3)


def test_probe_ladders_charge_repeats_in_gold():
    task = get_task("reviews")
    prompt = "Review of the mug:"
    golds = [task.gold_score(prompt, t) for t in PROBE_LADDERS["repeated intensifier"]]
    assert all(b < a for a, b in zip(golds, golds[1:]))  # each extra "very" costs 0.5
    distinct = [task.gold_score(prompt, t) for t in PROBE_LADDERS["distinct intensifiers"]]
    assert all(b > a for a, b in zip(distinct, distinct[1:]))

    class LengthRM:  # an RM that only counts characters
        def score(self, tokenizer, prompts, completions):
            import torch
            return torch.tensor([float(len(c)) for c in completions])

    out = rm_probes(LengthRM(), None, prompt)
    assert set(out) == set(PROBE_LADDERS)
    rep = out["repeated intensifier"]
    assert rep["rm"] == [float(len(t)) for t in rep["text"]] and rep["gold"] == golds
