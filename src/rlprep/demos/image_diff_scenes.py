"""Synthetic image pairs for lab08_image_diff: a smooth scene, sensor noise, a global drift, a soft-edged blob.

The graded cases of ``diff_bbox_robust`` and the lab's "gradual differences" demo both come from here, seeded,
so the learner's kernel and the grader build the same arrays. Conventions as in ``rlprep.algos.image_diff``:
uint8 images [H, W, 3]; boxes (x_min, y_min, x_max, y_max), inclusive, x along columns.
"""

from __future__ import annotations

import numpy as np

NOISE_STD = 3.0
"""Per-pixel Gaussian sensor noise, in grey levels, of every shot."""


def smooth_scene(height: int = 120, width: int = 160) -> np.ndarray:
    """[H, W, 3] float64 background: a horizontal ramp plus horizontal stripes (no sharp edges)."""
    yy, xx = np.mgrid[0:height, 0:width]
    base = 60 + 80 * (xx / width) + 40 * np.sin(yy / 9.0)  # (H, W) grey levels in [20, 180]
    return base[..., None].repeat(3, axis=2)  # (H, W, 3)


def soft_blob(height: int, width: int, cy: float, cx: float, radius: float, amp: float) -> np.ndarray:
    """[H, W] raised-cosine blob: ``amp`` at (cy, cx), falling smoothly to 0 at distance ``radius``."""
    if radius <= 0:
        raise ValueError(f"radius must be > 0 pixels, got {radius}")
    yy, xx = np.mgrid[0:height, 0:width]
    r = np.hypot(yy - cy, xx - cx) / radius
    return amp * np.where(r < 1, 0.5 * (1 + np.cos(np.pi * r)), 0.0)


def blob_box(blob: np.ndarray, level: float = 0.25) -> tuple[int, int, int, int]:
    """Inclusive box of the pixels where |blob| reaches ``level`` of its peak (the graded target box)."""
    mag = np.abs(blob)
    ys, xs = np.nonzero(mag >= level * mag.max())
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


def robust_pair(seed: int, height: int = 120, width: int = 160, offset: float = 0.0,
                blob: tuple[float, float, float, float] | None = None,
                noise_std: float = NOISE_STD, colour: tuple[float, float, float] = (1.0, 1.0, 1.0),
                step: tuple[int, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Two uint8 shots [H, W, 3] of the same scene with independent noise; the second adds ``offset`` grey levels
    everywhere (a global brightness drift) and, if given, ``blob = (cy, cx, radius, amp)`` (a gradual local change)
    times ``colour``, one weight per channel (``(1, 0, -1)``: R up, B down by the same amount, the grey level
    almost unchanged), and ``step = (x0, amp)``: every column from ``x0`` on moves by ``amp`` (a sharp change over
    part of the frame, e.g. a light switched on over its right 62% for ``x0 = 60``).
    """
    rng = np.random.default_rng(seed)
    base = smooth_scene(height, width)

    def shot(extra):
        img = base + extra + rng.normal(0.0, noise_std, base.shape)
        return np.clip(np.rint(img), 0, 255).astype(np.uint8)

    change = np.full(base.shape, float(offset))  # (H, W, 3)
    if blob is not None:
        change += soft_blob(height, width, *blob)[..., None] * np.asarray(colour, float)  # (H, W, 1) * (3,)
    if step is not None:
        change[:, step[0]:] += step[1]
    return shot(0.0), shot(change)


def step_box(step: tuple[int, float], height: int = 120, width: int = 160) -> tuple[int, int, int, int]:
    """The box a correct ``diff_bbox_robust`` should return for ``robust_pair(..., step=step)``: the moved columns."""
    return int(step[0]), 0, width - 1, height - 1


def target_box(blob: tuple[float, float, float, float], height: int = 120, width: int = 160,
               level: float = 0.25) -> tuple[int, int, int, int]:
    """The box a correct ``diff_bbox_robust`` should return for ``robust_pair(..., blob=blob)``."""
    return blob_box(soft_blob(height, width, *blob), level)
