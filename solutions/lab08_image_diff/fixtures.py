"""Hidden cases of lab08 (image diff): the expected boxes of the graded ``diff_bbox`` and ``diff_bbox_robust`` calls.

- ``diff_bbox`` cases edit a seeded random 9 x 13 x 3 uint8 image (the edits are written out in the hidden test
  too, so it shows its inputs); the expected box is the reference's answer;
- ``diff_bbox_robust`` cases are scenes from ``rlprep.demos.image_diff_scenes.robust_pair(seed, offset, blob)``;
  the expected box comes from the synthetic blob itself (``target_box``: where it reaches 25% of its peak),
  never from an implementation.
"""

from __future__ import annotations

import numpy as np

from rlprep.algos.image_diff import diff_bbox
from rlprep.demos.image_diff_scenes import target_box


def random_image() -> np.ndarray:
    """The hidden cases' first image: [9, 13, 3] uint8, seed 7 (the hidden test rebuilds it the same way)."""
    return np.random.default_rng(7).integers(0, 256, (9, 13, 3), dtype=np.uint8)


def diff_case(edit, threshold: int) -> dict:
    """``edit(b)`` changes a copy ``b`` of the random image in place; the reference's box at ``threshold``."""
    a = random_image()
    b = a.copy()
    edit(b)
    return {"threshold": threshold, "box": diff_bbox(a, b, threshold)}


def corner(b):
    b[0, 12, 2] ^= 0xFF  # top-right corner, last channel only


def borders(b):
    b[8, 0, 1] ^= 0x10  # bottom-left corner
    b[3, 5, 0] ^= 0x10


def strip(b):
    b[2:6, 3:4] ^= 1  # a 4 x 1 strip, one grey level


def one_channel(b):
    b[6, 2, 1] ^= 0x10  # |a - b| = 16 in one channel: above threshold 8
    b[1, 1, 0] ^= 0x04  # |a - b| = 4: below it


def blob_case(seed: int, offset: float, blob: tuple) -> dict:
    """A scene (seed, global offset, blob = (cy, cx, radius, amplitude)) and the blob's 25%-of-peak box."""
    return {"seed": seed, "offset": offset, "blob": blob, "box": target_box(blob)}


def fixtures() -> dict:
    return {
        "corner": diff_case(corner, 0),
        "borders": diff_case(borders, 0),
        "strip": diff_case(strip, 0),
        "one_channel": diff_case(one_channel, 8),
        "blob1": blob_case(23, 6.0, (30, 30, 12, -35.0)),
        "blob2": blob_case(24, 0.0, (80, 120, 15, 38.0)),
        "blob3": blob_case(25, -12.0, (64, 40, 16, 36.0)),
    }
