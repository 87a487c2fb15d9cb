"""Hidden properties of diff_bbox, compared with OpenCV's absdiff + boundingRect."""

import cv2
import numpy as np

from rlprep.coding.testkit import Properties, close, expect, raises, randint

P = Properties()


def _pair(size, salt, box=None, C=None):
    H, W = size["H"], size["W"]
    C = size["C"] if C is None else C
    shape = (H, W) if C == 1 else (H, W, C)
    a = randint(size, 0, 256, *shape, salt=salt).numpy().astype(np.uint8)
    b = a.copy()
    if box is not None:
        x0, y0, x1, y1 = box
        b[y0:y1 + 1, x0:x1 + 1] = 255 - b[y0:y1 + 1, x0:x1 + 1]
    return a, b


def _cv(a, b, threshold=0):
    d = cv2.absdiff(a, b)
    mask = (d.max(axis=-1) if d.ndim == 3 else d) > threshold
    points = cv2.findNonZero(mask.astype(np.uint8))
    if points is None:
        return None
    x, y, w, h = cv2.boundingRect(points)
    return (x, y, x + w - 1, y + h - 1)


def _box(f, a, b, threshold=0):
    out = f(img_a=a, img_b=b, threshold=threshold)
    expect(out is None or (isinstance(out, (tuple, list)) and len(out) == 4), "expected a 4-tuple or None")
    return None if out is None else tuple(int(v) for v in out)


def examples(size):
    a = np.zeros((4, 5), dtype=np.uint8)
    b = a.copy()
    b[1, 2] = 9
    b[2, 3] = 9
    return [dict(img_a=a, img_b=b), dict(img_a=a, img_b=a.copy())]


@P.prop("matches OpenCV's absdiff + boundingRect", library="cv2.boundingRect")
def _(f, ref, size):
    box = (size["W"] // 4, size["H"] // 3, size["W"] - 3, size["H"] - 2)
    a, b = _pair(size, 1, box=box)
    close(_box(f, a, b), _cv(a, b))


@P.prop("returns None when nothing differs, and finds a single pixel at a corner")
def _(f, ref, size):
    a, _ = _pair(size, 2)
    expect(f(img_a=a, img_b=a.copy()) is None, "identical images must give None")
    b = a.copy()
    b[-1, -1] ^= 1
    close(_box(f, a, b), _cv(a, b))


@P.prop("no uint8 wrap-around: |3 - 5| is 2, not 254 (threshold 10)")
def _(f, ref, size):
    a, _ = _pair(size, 3, C=1)
    b = a.copy()
    b[a <= 253] += 2  # small changes everywhere, below the threshold (a - b wraps to 254 in uint8)
    b[2, 3] = a[2, 3] + 100 if a[2, 3] < 100 else a[2, 3] - 100
    close(_box(f, a, b, threshold=10), _cv(a, b, 10))


@P.prop("a change in one channel counts, and strided views give the same box")
def _(f, ref, size):
    a, _ = _pair(size, 4, C=max(3, size["C"]))
    b = a.copy()
    b[1:3, 2:5, -1] ^= 0x40  # one channel only
    close(_box(f, a, b), _cv(a, b))
    at, bt = a.transpose(1, 0, 2), b.transpose(1, 0, 2)  # non-contiguous views
    close(_box(f, at, bt), _cv(np.ascontiguousarray(at), np.ascontiguousarray(bt)))


@P.prop("raises ValueError for mismatched shapes, non-uint8 images or a negative threshold")
def _(f, ref, size):
    a, b = _pair(size, 5, box=(0, 0, 1, 1))
    raises(ValueError, f, img_a=a, img_b=b[:-1])
    raises(ValueError, f, img_a=a.astype(np.float32), img_b=b.astype(np.float32))
    raises(ValueError, f, img_a=a, img_b=b, threshold=-1)
    close(_box(f, a, b), _cv(a, b))
