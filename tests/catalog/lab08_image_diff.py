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


def _validated(bug):
    """The bug behind the same input checks as an honest answer, so that it loses only what the bug costs."""
    def checked(img_a, img_b, threshold=0):
        _check_inputs(img_a, img_b, threshold)
        return bug(img_a, img_b, threshold)

    checked.__name__, checked.__doc__ = bug.__name__, bug.__doc__
    return checked


def _check_inputs(img_a, img_b, threshold=0):
    if not (isinstance(img_a, np.ndarray) and isinstance(img_b, np.ndarray)) or img_a.shape != img_b.shape \
            or img_a.dtype != np.uint8 or img_b.dtype != np.uint8 or img_a.ndim not in (2, 3) or img_a.size == 0:
        raise ValueError("need two uint8 arrays [H, W] or [H, W, C] of the same shape")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)) or not threshold >= 0:
        raise ValueError(f"threshold must be a number >= 0, got {threshold!r}")


def db_threshold_unchecked(img_a, img_b, threshold=0):
    """Checks the images but not the threshold: a negative or non-numeric threshold is used as it is."""
    _check_inputs(img_a, img_b)
    return _box(_diff(img_a, img_b) > float(threshold))


@_validated
def db_grayscale_first(img_a, img_b, threshold=0):
    """Converts both images to grey (0.299 R + 0.587 G + 0.114 B) before differencing: a colour-only change
    (R +40, B -40, or blue alone) moves the grey level by less than the threshold."""
    def grey(img):
        return img @ np.array([0.299, 0.587, 0.114]) if img.ndim == 3 else img.astype(np.float64)

    return _box(np.abs(np.rint(grey(img_a)) - np.rint(grey(img_b))) > threshold)


@_validated
def db_signed_channel_sum(img_a, img_b, threshold=0):
    """Sums the signed channel differences before the absolute value: R +40 and B -40 cancel."""
    d = img_a.astype(np.int16) - img_b.astype(np.int16)
    return _box(np.abs(d.sum(axis=2) if d.ndim == 3 else d) > threshold)


@_validated
def db_uint64_rows(img_a, img_b, threshold=0):
    """Threshold-0 fast path comparing rows as uint64 words through a view of the caller's memory, without
    np.ascontiguousarray: a transposed (column-major) view raises instead of giving the box."""
    if threshold == 0 and img_a[0].size % 8 == 0:
        rows_a = img_a.reshape(img_a.shape[0], -1).view(np.uint64)  # (H, W*C/8): needs C-ordered rows
        rows_b = img_b.reshape(img_b.shape[0], -1).view(np.uint64)
        ys = np.flatnonzero((rows_a != rows_b).any(axis=1))
        if ys.size == 0:
            return None
        band = _diff(img_a[ys[0]:ys[-1] + 1], img_b[ys[0]:ys[-1] + 1]) > 0
        xs = np.flatnonzero(band.any(axis=0))
        return int(xs[0]), int(ys[0]), int(xs[-1]), int(ys[-1])
    return _box(_diff(img_a, img_b) > threshold)


@_validated
def db_bands_no_offset(img_a, img_b, threshold=0):
    """The "two threads" follow-up: boxes the top and bottom halves separately and merges them without adding the
    bottom band's row offset back, so a change reaching into the bottom half gets band coordinates."""
    half = img_a.shape[0] // 2
    boxes = [b for b in (_box(_diff(img_a[:half], img_b[:half]) > threshold),
                         _box(_diff(img_a[half:], img_b[half:]) > threshold)) if b is not None]
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


# diff_bbox_robust ----------------------------------------------------------------------------------------------
def _check_robust(img_a, img_b, sigma=2.0, k=6.0, min_delta=6.0, min_area=20, max_drift=20.0):
    """The contract's ValueErrors: images as for diff_bbox, parameters out of their ranges."""
    _check_inputs(img_a, img_b)
    if not (sigma > 0 and k > 0 and min_delta >= 0 and min_area >= 1 and max_drift >= 0):
        raise ValueError("need sigma > 0, k > 0, min_delta >= 0, min_area >= 1, max_drift >= 0")


def _robust_signature(method):
    """``method(img_a, img_b)`` with the graded signature and its input checks: it loses only what it costs."""
    def checked(img_a, img_b, sigma=2.0, k=6.0, min_delta=6.0, min_area=20, max_drift=20.0):
        _check_robust(img_a, img_b, sigma, k, min_delta, min_area, max_drift)
        return method(img_a, img_b)

    checked.__name__, checked.__doc__ = method.__name__, method.__doc__
    return checked


@_robust_signature
def dbr_exact_diff(img_a, img_b):
    """No noise handling: the exact diff box, so sensor noise alone yields a box."""
    return _box(_diff(img_a, img_b) > 0)


@_robust_signature
def dbr_fixed_threshold_no_drift(img_a, img_b):
    """Fixed threshold of 10 with no drift removal: a global brightness shift of 12 flags the whole image."""
    return _box(_diff(img_a, img_b) > 10)


@_robust_signature
def dbr_relative_to_max(img_a, img_b):
    """Threshold at half the largest difference: always finds 'something', even in pure noise."""
    d = _diff(img_a, img_b).astype(np.float32)
    return _box(d > 0.5 * d.max()) if d.max() > 0 else None


@_robust_signature
def dbr_threshold_too_high(img_a, img_b):
    """Fixed high threshold (60): a gradual change of amplitude 40 is never found."""
    return _box(_diff(img_a, img_b) > 60)


@_robust_signature
def dbr_drift_by_mean_no_smoothing(img_a, img_b):
    """Removes the drift but not the noise: |d - mean(d)| > 3 without smoothing flags noise pixels."""
    d = (img_b.astype(np.float32) - img_a.astype(np.float32))
    d = d.mean(axis=2) if d.ndim == 3 else d
    return _box(np.abs(d - d.mean()) > 3)


def _robust(img_a, img_b, channels="each", background="near_zero", smooth=None):
    """The reference pipeline with one step swapped: ``channels`` "each" (per channel, then any) or "mean" (signed
    channel mean); ``background`` "near_zero" (pixels within 20 of zero) or "all" (the whole frame's median)."""
    import cv2

    d = img_b.astype(np.float32) - img_a.astype(np.float32)
    d = d.reshape(*d.shape[:2], -1)
    if channels == "mean":
        d = d.mean(axis=2, keepdims=True)
    changed = np.zeros(d.shape[:2], np.uint8)
    for c in range(d.shape[2]):
        s = smooth(d[..., c]) if smooth else cv2.GaussianBlur(np.ascontiguousarray(d[..., c]), (0, 0), 2.0)
        bg = s[np.abs(s) <= 20] if background == "near_zero" else s.ravel()
        drift = float(np.median(bg)) if bg.size else 0.0
        noise = 1.4826 * float(np.median(np.abs(bg - drift))) if bg.size else 0.0
        changed |= np.abs(s - drift) > max(6 * noise, 6.0)
    return _components_box(cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))


def _components_box(changed):
    """The box of the union of the 8-connected components of at least 20 pixels of a [H, W] 0/1 mask, or None."""
    import cv2

    n, _, stats, _ = cv2.connectedComponentsWithStats(changed, connectivity=8)
    keep = [i for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 20]
    if not keep:
        return None
    x0, y0 = stats[keep, 0], stats[keep, 1]
    x1, y1 = x0 + stats[keep, 2] - 1, y0 + stats[keep, 3] - 1
    return int(x0.min()), int(y0.min()), int(x1.max()), int(y1.max())


@_robust_signature
def dbr_signed_channel_mean(img_a, img_b):
    """Averages the signed differences over channels first: R +40 and B -40 cancel, a colour-only change is missed
    (the course's own reference had this bug, issue 24)."""
    return _robust(img_a, img_b, channels="mean")


@_robust_signature
def dbr_whole_frame_median(img_a, img_b):
    """Removes the drift with the whole frame's median: when the change covers more than half the frame the median
    is the change's level, and the box returned is the unchanged part (the complement; issue 24)."""
    return _robust(img_a, img_b, background="all")


def dbr_no_validation(img_a, img_b, sigma=2.0, k=6.0, min_delta=6.0, min_area=20, max_drift=20.0):
    """The reference's steps without its input checks: sigma = 0 or min_area = 0 run instead of raising ValueError."""
    if not (isinstance(img_a, np.ndarray) and isinstance(img_b, np.ndarray)):
        raise ValueError("need numpy arrays")
    return _robust(img_a, img_b)


BUGS = {
    "diff_bbox": [db_xy_swapped, db_exclusive_bounds, db_uint8_wraparound, db_channel_ignored, db_border_off_by_one,
                  db_channel_mean, db_greater_equal, db_no_shape_check, db_grayscale_first, db_signed_channel_sum,
                  db_uint64_rows, db_bands_no_offset, db_threshold_unchecked],
    "diff_bbox_robust": [dbr_exact_diff, dbr_fixed_threshold_no_drift, dbr_relative_to_max, dbr_threshold_too_high,
                         dbr_drift_by_mean_no_smoothing, dbr_signed_channel_mean, dbr_whole_frame_median,
                         dbr_no_validation],
}


# Correct alternatives ------------------------------------------------------------------------------------------
def alt_db_numpy(img_a, img_b, threshold=0):
    """Vectorized numpy with int16 differences, validation included."""
    _check_inputs(img_a, img_b, threshold)
    return _box(_diff(img_a, img_b) > threshold)


def alt_db_uint64_rows(img_a, img_b, threshold=0):
    """Threshold 0: rows compared as uint64 words on C-ordered copies, each row zero-padded to a multiple of 8
    bytes; a threshold above 0 falls back to int16 differences."""
    _check_inputs(img_a, img_b, threshold)
    if threshold != 0:
        return _box(_diff(img_a, img_b) > threshold)
    h = img_a.shape[0]
    a = np.ascontiguousarray(img_a).reshape(h, -1)  # (H, W*C)
    b = np.ascontiguousarray(img_b).reshape(h, -1)
    pad = (-a.shape[1]) % 8
    a, b = np.pad(a, ((0, 0), (0, pad))), np.pad(b, ((0, 0), (0, pad)))  # (H, 8k)
    ys = np.flatnonzero((a.view(np.uint64) != b.view(np.uint64)).any(axis=1))
    if ys.size == 0:
        return None
    xs = np.flatnonzero((_diff(img_a[ys[0]:ys[-1] + 1], img_b[ys[0]:ys[-1] + 1]) > 0).any(axis=0))
    return int(xs[0]), int(ys[0]), int(xs[-1]), int(ys[-1])


def alt_db_bands(img_a, img_b, threshold=0):
    """Two row bands in two threads, each band's box shifted back by its first row, then merged."""
    from concurrent.futures import ThreadPoolExecutor

    _check_inputs(img_a, img_b, threshold)
    half = img_a.shape[0] // 2
    bands = [(0, half), (half, img_a.shape[0])]
    with ThreadPoolExecutor(2) as pool:
        boxes = list(pool.map(lambda band: _box(_diff(img_a[band[0]:band[1]], img_b[band[0]:band[1]]) > threshold),
                              bands))
    boxes = [(b[0], b[1] + lo, b[2], b[3] + lo) for b, (lo, _) in zip(boxes, bands) if b is not None]
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


@_robust_signature
def alt_dbr_box_filter(img_a, img_b):
    """A 7x7 box filter instead of a Gaussian, otherwise the reference's steps (per channel, background near 0)."""
    import cv2

    return _robust(img_a, img_b, smooth=lambda d: cv2.blur(np.ascontiguousarray(d), (7, 7)))


@_robust_signature
def alt_dbr_colour_distance(img_a, img_b):
    """Euclidean colour distance of the smoothed, drift-corrected channel differences; the drift is the mode of
    each channel's histogram nearest to zero; fixed level 8 (no noise estimate)."""
    import cv2

    d = img_b.astype(np.float32) - img_a.astype(np.float32)
    d = d.reshape(*d.shape[:2], -1)
    dist2 = np.zeros(d.shape[:2], np.float32)
    for c in range(d.shape[2]):
        s = cv2.GaussianBlur(np.ascontiguousarray(d[..., c]), (0, 0), 2.0)
        counts, edges = np.histogram(s, bins=np.arange(-256.5, 257.5))
        peaks = [i for i in range(1, len(counts) - 1) if counts[i] >= max(counts[i - 1], counts[i + 1])
                 and counts[i] >= 0.1 * s.size]
        centre = edges[min(peaks, key=lambda i: abs(edges[i] + 0.5)) if peaks else 256] + 0.5
        dist2 += (s - np.median(s[np.abs(s - centre) <= 3])) ** 2
    return _components_box((np.sqrt(dist2) > 8).astype(np.uint8))


EXPECTED_GRADES = {  # bugs added for issue 24: {bug: (points out of 18, the graded cells that fail)}
    "db_grayscale_first": (12.0, {"test_db_by_hand", "test_db_channels_borders", "test_db_hard_inputs"}),
    "db_signed_channel_sum": (16.0, {"test_db_hard_inputs"}),
    "db_uint64_rows": (16.0, {"test_db_hard_inputs"}),
    "db_bands_no_offset": (10.0, {"test_db_by_hand", "test_db_channels_borders", "test_db_hard_inputs",
                                  "test_db_threshold"}),
    "dbr_signed_channel_mean": (16.0, {"test_robust_colour_and_large"}),
    "dbr_whole_frame_median": (16.0, {"test_robust_colour_and_large"}),
}
"""Each of these fails the new hidden checks of ``test_db_hard_inputs`` / ``test_robust_colour_and_large`` (a
colour-only change, a change over more than half the frame, a transposed or column-major view)."""


ALTERNATIVES = {"diff_bbox": [alt_db_numpy, alt_db_uint64_rows, alt_db_bands],
                "diff_bbox_robust": [alt_dbr_box_filter, alt_dbr_colour_distance]}
