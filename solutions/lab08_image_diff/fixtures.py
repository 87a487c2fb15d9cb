"""Hidden cases of lab08 (image diff): the expected boxes of the graded ``diff_bbox`` and ``diff_bbox_robust`` calls.

- ``diff_bbox`` cases edit a seeded random 9 x 13 x 3 uint8 image (a 16 x 9 grey one for the transposed view; the
  edits are written out in the hidden test too, so it shows its inputs); the expected box is the reference's
  answer;
- ``diff_bbox_robust`` cases are scenes from ``rlprep.demos.image_diff_scenes.robust_pair(seed, offset, blob,
  colour, step)``; the expected box comes from the synthetic change itself (``target_box``: where a blob reaches
  25% of its peak; ``step_box``: the columns a step moves), never from an implementation.
"""

from __future__ import annotations

import numpy as np

from rlprep.algos.image_diff import diff_bbox
from rlprep.demos.image_diff_scenes import step_box, target_box


def random_image() -> np.ndarray:
    """The hidden cases' first image: [9, 13, 3] uint8, seed 7 (the hidden test rebuilds it the same way)."""
    return np.random.default_rng(7).integers(0, 256, (9, 13, 3), dtype=np.uint8)


def diff_case(edit, threshold: int) -> dict:
    """``edit(b)`` changes a copy ``b`` of the random image in place; the reference's box at ``threshold``."""
    a = random_image()
    b = a.copy()
    edit(b)
    return {"threshold": threshold, "box": diff_bbox(a, b, threshold)}


def mid_image() -> np.ndarray:
    """The colour cases' first image: [9, 13, 3] uint8 in [60, 190), seed 8, so +-40 never clips."""
    return np.random.default_rng(8).integers(60, 190, (9, 13, 3), dtype=np.uint8)


def grey_image() -> np.ndarray:
    """The layout cases' grey image: [16, 9] uint8, seed 9; its transpose has rows of 16 bytes (two uint64 words)."""
    return np.random.default_rng(9).integers(0, 256, (16, 9), dtype=np.uint8)


def colour_case(edit, threshold: int) -> dict:
    a = mid_image()
    b = a.copy()
    edit(b)
    return {"threshold": threshold, "box": diff_bbox(a, b, threshold)}


def red_up_blue_down(b):
    b[2:5, 4:9, 0] += 40  # R +40, B -40: the grey level moves by ~7 and the channel sum by 0
    b[2:5, 4:9, 2] -= 40


def blue_only(b):
    b[6:8, 1:3, 2] += 40  # only the blue channel: ~5 grey levels


def transposed_case() -> dict:
    a = grey_image()
    b = a.copy()
    b[3, 5] ^= 0x20
    b[12, 1] ^= 0x01
    return {"threshold": 0, "box": diff_bbox(a.T, b.T, 0)}


def fortran_case() -> dict:
    a = random_image()
    b = a.copy()
    b[4, 2:11, 1] ^= 0x08
    return {"threshold": 0, "box": diff_bbox(np.asfortranarray(a), np.asfortranarray(b), 0)}


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


def large(b):
    b[:, 3:] ^= 0x08  # columns 3..12 of 13, every row: more than half the frame


def valid_edit(b):
    b[2, 7, 0] ^= 0x40  # one pixel, first channel, in the top half: the valid pair of the validation test


def sliced_case() -> dict:
    """A strided view: rows 1.. and every other column of the random image, changed at (row 4, column 6)."""
    a = random_image()
    b = a.copy()
    b[4, 6, 2] ^= 0x10
    return {"threshold": 0, "box": diff_bbox(a[1:, ::2], b[1:, ::2], 0)}


def colour_blob_case(seed: int, offset: float, blob: tuple, colour: tuple) -> dict:
    """A blob that moves the channels by ``colour`` times its profile; the blob's 25%-of-peak box."""
    return {"seed": seed, "offset": offset, "blob": blob, "colour": colour, "box": target_box(blob)}


def step_case(seed: int, offset: float, step: tuple) -> dict:
    """Every column from ``step[0]`` on moves by ``step[1]``; the box of those columns."""
    return {"seed": seed, "offset": offset, "step": step, "box": step_box(step)}


def blob_case(seed: int, offset: float, blob: tuple) -> dict:
    """A scene (seed, global offset, blob = (cy, cx, radius, amplitude)) and the blob's 25%-of-peak box."""
    return {"seed": seed, "offset": offset, "blob": blob, "box": target_box(blob)}


def fixtures() -> dict:
    return {
        "corner": diff_case(corner, 0),
        "borders": diff_case(borders, 0),
        "strip": diff_case(strip, 0),
        "one_channel": diff_case(one_channel, 8),
        "red_blue": colour_case(red_up_blue_down, 30),
        "blue_only": colour_case(blue_only, 30),
        "large": diff_case(large, 0),
        "transposed": transposed_case(),
        "fortran": fortran_case(),
        "colour_blob1": colour_blob_case(31, 0.0, (60, 50, 16, 38.0), (0.0, 0.0, 1.0)),
        "colour_blob2": colour_blob_case(32, -7.0, (40, 110, 14, 36.0), (-1.0, 1.0, 0.0)),
        "step1": step_case(33, 5.0, (40, -40.0)),
        "step2": step_case(34, -9.0, (70, 40.0)),
        "blob1": blob_case(23, 6.0, (30, 30, 12, -35.0)),
        "blob2": blob_case(24, 0.0, (80, 120, 15, 38.0)),
        "blob3": blob_case(25, -12.0, (64, 40, 16, 36.0)),
        "valid": diff_case(valid_edit, 0),
        "sliced": sliced_case(),
        # the noise-only and drift-only cells also hold a blob, so an answer that always says None loses them
        "noise_blob": blob_case(26, 0.0, (70, 90, 14, 37.0)),
        "drift_blob": blob_case(27, 12.0, (50, 60, 13, -36.0)),
        "step_small": step_case(35, 0.0, (120, 40.0)),  # a step over the right quarter of the frame
    }
