"""Known bugs for lab08_image_diff: ``diff_bbox`` and ``diff_bbox_robust``."""

import numpy as np


# diff_bbox -----------------------------------------------------------------------------------------------------
def _box(changed, swap=False, exclusive=0):
    ys, xs = np.nonzero(changed)
    if len(ys) == 0:
        return None
    box = (int(xs.min()), int(ys.min()), int(xs.max()) + exclusive, int(ys.max()) + exclusive)
    return (box[1], box[0], box[3], box[2]) if swap else box


def _diff(a, b):
    d = np.abs(a.astype(np.int16) - b.astype(np.int16))
    return d.max(axis=2) if d.ndim == 3 else d


def db_xy_swapped(img_a, img_b, threshold=0):
    """x and y swapped: returns (y_min, x_min, y_max, x_max)."""
    return _box(_diff(img_a, img_b) > threshold, swap=True)


def db_exclusive_bounds(img_a, img_b, threshold=0):
    """Exclusive upper bounds (max + 1), as a slice end, instead of inclusive coordinates."""
    return _box(_diff(img_a, img_b) > threshold, exclusive=1)


def db_uint8_wraparound(img_a, img_b, threshold=0):
    """Subtracts in uint8: 3 - 5 wraps to 254, so small differences pass any threshold."""
    d = np.abs(img_a - img_b)
    return _box((d.max(axis=2) if d.ndim == 3 else d) > threshold)


def db_channel_ignored(img_a, img_b, threshold=0):
    """Looks at channel 0 only: changes in the other channels are missed."""
    d = _diff(img_a[..., 0] if img_a.ndim == 3 else img_a, img_b[..., 0] if img_b.ndim == 3 else img_b)
    return _box(d > threshold)


def db_border_off_by_one(img_a, img_b, threshold=0):
    """Scans rows and columns 1..n-2 only: changes on the image border are missed."""
    changed = _diff(img_a, img_b) > threshold
    changed[0, :] = changed[-1, :] = False
    changed[:, 0] = changed[:, -1] = False
    return _box(changed)


def db_channel_mean(img_a, img_b, threshold=0):
    """Mean over channels instead of max: a change in one channel is diluted below the threshold."""
    d = np.abs(img_a.astype(np.int16) - img_b.astype(np.int16))
    return _box((d.mean(axis=2) if d.ndim == 3 else d) > threshold)


def db_greater_equal(img_a, img_b, threshold=0):
    """>= threshold instead of >: at threshold 0 every pixel differs."""
    return _box(_diff(img_a, img_b) >= threshold)


def db_no_shape_check(img_a, img_b, threshold=0):
    """No input validation: mismatched shapes broadcast (or crash with a numpy error) instead of a ValueError."""
    a, b = np.asarray(img_a), np.asarray(img_b)
    n = min(a.shape[0], b.shape[0])
    return _box(_diff(a[:n], b[:n]) > threshold)


# diff_bbox_robust ----------------------------------------------------------------------------------------------
def dbr_exact_diff(img_a, img_b, **kwargs):
    """No noise handling: the exact diff box, so sensor noise alone yields a box."""
    return _box(_diff(img_a, img_b) > 0)


def dbr_fixed_threshold_no_drift(img_a, img_b, **kwargs):
    """Fixed threshold of 10 with no drift removal: a global brightness shift of 12 flags the whole image."""
    return _box(_diff(img_a, img_b) > 10)


def dbr_relative_to_max(img_a, img_b, **kwargs):
    """Threshold at half the largest difference: always finds 'something', even in pure noise."""
    d = _diff(img_a, img_b).astype(np.float32)
    return _box(d > 0.5 * d.max()) if d.max() > 0 else None


def dbr_threshold_too_high(img_a, img_b, **kwargs):
    """Fixed high threshold (60): a gradual change of amplitude 40 is never found."""
    return _box(_diff(img_a, img_b) > 60)


def dbr_drift_by_mean_no_smoothing(img_a, img_b, **kwargs):
    """Removes the drift but not the noise: |d - mean(d)| > 3 without smoothing flags noise pixels."""
    d = (img_b.astype(np.float32) - img_a.astype(np.float32))
    d = d.mean(axis=2) if d.ndim == 3 else d
    return _box(np.abs(d - d.mean()) > 3)


BUGS = {
    "diff_bbox": [db_xy_swapped, db_exclusive_bounds, db_uint8_wraparound, db_channel_ignored, db_border_off_by_one,
                  db_channel_mean, db_greater_equal, db_no_shape_check],
    "diff_bbox_robust": [dbr_exact_diff, dbr_fixed_threshold_no_drift, dbr_relative_to_max, dbr_threshold_too_high,
                         dbr_drift_by_mean_no_smoothing],
}


# Correct alternatives ------------------------------------------------------------------------------------------
def alt_db_numpy(img_a, img_b, threshold=0):
    """Vectorized numpy with int16 differences, validation included."""
    if not (isinstance(img_a, np.ndarray) and isinstance(img_b, np.ndarray)) or img_a.shape != img_b.shape \
            or img_a.dtype != np.uint8 or img_b.dtype != np.uint8 or img_a.ndim not in (2, 3):
        raise ValueError("need two uint8 arrays [H, W] or [H, W, C] of the same shape")
    return _box(_diff(img_a, img_b) > threshold)


def alt_dbr_median_blur(img_a, img_b, **kwargs):
    """Box-filtered drift-corrected difference with a MAD-based threshold and a minimum component area."""
    import cv2

    d = img_b.astype(np.float32) - img_a.astype(np.float32)
    d = d.mean(axis=2) if d.ndim == 3 else d
    d = cv2.blur(d - np.median(d), (7, 7))
    level = max(6.0 * 1.4826 * float(np.median(np.abs(d - np.median(d)))), 6.0)
    changed = (np.abs(d) > level).astype(np.uint8)
    n, _, stats, _ = cv2.connectedComponentsWithStats(changed)
    keep = [i for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 20]
    if not keep:
        return None
    x0, y0 = stats[keep, 0], stats[keep, 1]
    x1, y1 = x0 + stats[keep, 2] - 1, y0 + stats[keep, 3] - 1
    return int(x0.min()), int(y0.min()), int(x1.max()), int(y1.max())


ALTERNATIVES = {"diff_bbox": [alt_db_numpy], "diff_bbox_robust": [alt_dbr_median_blur]}
