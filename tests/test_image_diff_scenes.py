"""rlprep.demos.image_diff_scenes: seeded pairs, the drift and blob they add, and the target box."""

from __future__ import annotations

import numpy as np
import pytest

from rlprep.demos.image_diff_scenes import NOISE_STD, blob_box, robust_pair, soft_blob, target_box


def test_pairs_are_seeded_uint8_and_differ_only_by_noise_drift_and_blob():
    a, b = robust_pair(4)
    a2, b2 = robust_pair(4)
    assert a.dtype == np.uint8 and a.shape == (120, 160, 3)
    assert np.array_equal(a, a2) and np.array_equal(b, b2) and not np.array_equal(a, b)
    d = b.astype(float) - a.astype(float)
    assert abs(d.mean()) < 0.2 and d.std() == pytest.approx(NOISE_STD * np.sqrt(2), rel=0.1)  # noise of two shots
    _, drifted = robust_pair(4, offset=12.0)
    assert (drifted.astype(float) - a).mean() == pytest.approx(12.0, abs=0.3)


def test_blob_box_by_hand():
    blob = soft_blob(9, 9, cy=4, cx=4, radius=3, amp=10.0)
    assert blob[4, 4] == pytest.approx(10.0) and blob[4, 7] == 0.0 and blob[0, 0] == 0.0
    # 0.5 (1 + cos(pi r / 3)) >= 0.25 <=> r <= 2: the pixels within distance 2 of the centre
    assert blob_box(blob, 0.25) == (2, 2, 6, 6)
    assert target_box((4, 4, 3, -10.0), 9, 9) == (2, 2, 6, 6)  # sign does not matter
    with pytest.raises(ValueError, match="radius"):
        soft_blob(9, 9, 4, 4, 0, 1.0)


def test_colour_weights_and_step_change_only_what_they_say():
    from rlprep.demos.image_diff_scenes import step_box

    a, b = robust_pair(8, noise_std=0.0, blob=(60, 80, 10, 40.0), colour=(1.0, 0.0, -1.0))
    d = b.astype(int) - a.astype(int)  # (H, W, 3)
    assert tuple(d[60, 80]) == (40, 0, -40) and not d[0, 0].any()
    a, b = robust_pair(8, noise_std=0.0, step=(60, 40.0))
    d = b.astype(int) - a.astype(int)
    assert (d[:, 60:] == 40).all() and not d[:, :60].any()
    assert step_box((60, 40.0)) == (60, 0, 159, 119)
