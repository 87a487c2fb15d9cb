"""Property checks for lab08's graded functions (the image diff), as ``properties.py`` writes them.

Seeded images, a plain-loop oracle for the exact box, and synthetic scenes whose expected box comes from the change
itself; none calls the reference implementation.
"""

from __future__ import annotations

import numpy as np


def _bbox_oracle(a, b, threshold):
    H, W = a.shape[:2]
    hits = []
    for y in range(H):
        for x in range(W):
            pa, pb = np.atleast_1d(a[y, x]).astype(int), np.atleast_1d(b[y, x]).astype(int)
            if max(abs(int(u) - int(v)) for u, v in zip(pa, pb)) > threshold:
                hits.append((x, y))
    if not hits:
        return None
    xs, ys = [h[0] for h in hits], [h[1] for h in hits]
    return min(xs), min(ys), max(xs), max(ys)


def image_diff_cases(seed=0):
    """Small seeded (img_a, img_b, threshold) cases: borders, one channel, small differences, no change."""
    rng = np.random.default_rng(seed)
    cases = []
    a = rng.integers(0, 256, (9, 13, 3), dtype=np.uint8)
    b = a.copy(); b[0, 12, 2] ^= 0xFF; cases.append((a, b, 0))  # top-right corner, last channel only
    b = a.copy(); b[8, 0, 1] ^= 0x10; b[3, 5, 0] ^= 0x10; cases.append((a, b, 0))  # bottom-left border
    b = a.copy(); b[2:6, 3:4] ^= 1; cases.append((a, b, 0))  # a one-level change, non-square box
    b = a.copy(); b[4, 7, 0] ^= 0x40; cases.append((a, b, 8))
    b = a.copy(); b[6, 2, 1] ^= 0x10; b[1, 1, 0] ^= 0x04; cases.append((a, b, 8))  # one channel by 16: max, not mean
    c = np.full((6, 8, 3), 5, np.uint8); d = c.copy(); d[2, 3] = 3; d[4, 6] = 200; cases.append((c, d, 8))  # 5-3
    c = np.full((6, 8), 100, np.uint8); d = c.copy(); d[1, 2] = 108; d[5, 7] = 109  # gray; > not >=
    cases.append((c, d, 8))
    cases.append((a, a.copy(), 0))  # nothing differs
    m = rng.integers(60, 190, (9, 13, 3), dtype=np.uint8)
    n = m.copy(); n[2:5, 4:9, 0] += 40; n[2:5, 4:9, 2] -= 40; cases.append((m, n, 30))  # colour only: R +40, B -40
    n = m.copy(); n[6:8, 1:3, 2] += 40; cases.append((m, n, 30))  # the blue channel alone
    b = a.copy(); b[:, 3:] ^= 0x08; cases.append((a, b, 0))  # more than half the frame
    g = rng.integers(0, 256, (16, 8), dtype=np.uint8); h = g.copy(); h[3, 5] ^= 0x20; h[12, 1] ^= 1
    cases.append((g.T, h.T, 0))  # transposed views: rows of 16 bytes, not C-contiguous
    cases.append((np.asfortranarray(a), np.asfortranarray(b), 0))  # column-major colour images
    return cases


def check_diff_bbox(fn):
    for a, b, threshold in image_diff_cases():
        got = fn(a, b, threshold)
        want = _bbox_oracle(a, b, threshold)
        assert got == want, f"shape {a.shape}, threshold {threshold}: expected {want}, got {got}"
    grey = np.zeros((4, 4), np.uint8)
    _check_value_errors(fn, [(np.zeros((4, 4, 3), np.uint8), np.zeros((4, 5, 3), np.uint8)),
                             (np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32)),
                             (np.zeros((4, 4, 3), np.uint8), grey), (grey, grey, -1), (grey, grey, "5")])


def _check_value_errors(fn, cases):
    """``fn(*args)`` raises ValueError for every ``args`` in ``cases``."""
    for args in cases:
        try:
            fn(*args)
        except ValueError:
            continue
        raise AssertionError(f"expected ValueError for {[getattr(a, 'shape', a) for a in args]}")


ROBUST_TOLERANCE = 3  # pixels: each edge of the found box within this distance of the blob's >= 25% box


def robust_cases(seed=0, H=120, W=160):
    """(img_a, img_b, expected) cases: noise only, global drift, soft-edged blobs with noise and drift."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:H, 0:W]
    base = (60 + 80 * (xx / W) + 40 * np.sin(yy / 9.0))[..., None].repeat(3, axis=2)  # (H, W, 3) smooth scene

    def shot(offset=0.0, blob=None):
        img = base + offset + rng.normal(0, 3.0, base.shape)
        if blob is not None:
            img = img + blob[..., None]
        return np.clip(np.rint(img), 0, 255).astype(np.uint8)

    def soft_blob(cy, cx, radius, amp):  # raised cosine: soft edges, support of the given radius
        r = np.hypot(yy - cy, xx - cx) / radius
        return amp * np.where(r < 1, 0.5 * (1 + np.cos(np.pi * r)), 0.0)

    def box(blob, level):
        ys, xs = np.nonzero(blob >= level * blob.max())
        return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())

    b1, b2 = soft_blob(50, 90, 18, 40.0), soft_blob(30, 30, 12, -35.0)
    colour = shot().astype(np.float64)
    colour[..., 0] += b1
    colour[..., 2] -= b1  # R +40, B -40: the grey level barely moves
    step = np.zeros((H, W))
    step[:, 60:] = 40.0  # the right 62% of the frame
    return [
        (shot(), np.clip(np.rint(colour), 0, 255).astype(np.uint8), box(b1, 0.25)),
        (shot(), shot(offset=6.0, blob=step), (60, 0, W - 1, H - 1)),
        (shot(), shot(), None),
        (shot(), shot(offset=12.0), None),
        (shot(), shot(offset=-8.0, blob=b1), box(b1, 0.25)),
        (shot(), shot(blob=np.abs(b2)), box(np.abs(b2), 0.25)),
        (shot(), shot(offset=6.0, blob=b2), box(np.abs(b2), 0.25)),
    ]


def check_diff_bbox_robust(fn):
    grey = np.zeros((8, 8), np.uint8)
    _check_value_errors(fn, [(grey, np.zeros((8, 9), np.uint8)), (grey.astype(np.float32), grey.astype(np.float32)),
                             (grey, grey, 0.0), (grey, grey, 2.0, 6.0, 6.0, 0)])
    for i, (a, b, want) in enumerate(robust_cases()):
        got = fn(a, b)
        if want is None:
            assert got is None, f"case {i}: noise/drift only must give None, got {got}"
        else:
            assert got is not None, f"case {i}: the soft blob at {want} was missed"
            err = max(abs(g - w) for g, w in zip(got, want))
            assert err <= ROBUST_TOLERANCE, f"case {i}: box {got} is {err} px from {want} (tol. {ROBUST_TOLERANCE})"
