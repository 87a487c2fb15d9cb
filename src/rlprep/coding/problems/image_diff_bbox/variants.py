"""Honest variants of diff_bbox."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("numpy_mask", "the simple O(H W C) answer: an int16 difference, a mask, argmax from both ends", source='''
        import numpy as np


        def diff_bbox(img_a, img_b, threshold=0):
            for img in (img_a, img_b):
                if not isinstance(img, np.ndarray) or img.dtype != np.uint8 or img.ndim not in (2, 3) or img.size == 0:
                    raise ValueError("images must be non-empty uint8 arrays [H, W] or [H, W, C]")
            if img_a.shape != img_b.shape:
                raise ValueError("shapes differ")
            if isinstance(threshold, bool) or not threshold >= 0:
                raise ValueError("threshold must be >= 0")
            d = np.abs(img_a.astype(np.int16) - img_b.astype(np.int16))
            if d.ndim == 3:
                d = d.max(axis=2)
            mask = d > threshold
            rows, cols = mask.any(axis=1), mask.any(axis=0)
            if not rows.any():
                return None
            y0, y1 = int(np.argmax(rows)), int(len(rows) - 1 - np.argmax(rows[::-1]))
            x0, x1 = int(np.argmax(cols)), int(len(cols) - 1 - np.argmax(cols[::-1]))
            return x0, y0, x1, y1
        '''),
    Edit("cv2_absdiff", "cv2.absdiff and cv2.boundingRect", source='''
        import cv2
        import numpy as np


        def diff_bbox(img_a, img_b, threshold=0):
            if not (isinstance(img_a, np.ndarray) and isinstance(img_b, np.ndarray)):
                raise ValueError("numpy arrays expected")
            if img_a.dtype != np.uint8 or img_b.dtype != np.uint8 or img_a.ndim not in (2, 3) or img_a.size == 0:
                raise ValueError("uint8 [H, W] or [H, W, C] expected")
            if img_a.shape != img_b.shape:
                raise ValueError("images differ in shape")
            if threshold < 0:
                raise ValueError("negative threshold")
            d = cv2.absdiff(np.ascontiguousarray(img_a), np.ascontiguousarray(img_b))
            if d.ndim == 3:
                d = d.max(axis=2)
            pts = cv2.findNonZero((d > threshold).astype(np.uint8))
            if pts is None:
                return None
            x, y, w, h = cv2.boundingRect(pts)
            return x, y, x + w - 1, y + h - 1
        '''),
]
