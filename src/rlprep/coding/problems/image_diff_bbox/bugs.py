"""Catalogued bugs of diff_bbox."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("uint8_wraparound", "subtracts uint8 arrays directly: 3 - 5 wraps to 254",
         {"return cv2.norm(block_a.reshape(n, -1), block_b.reshape(n, -1), cv2.NORM_INF) > threshold":
          "return int((block_a - block_b).max()) > threshold"}),
    Edit("first_channel_only", "looks at the first channel only",
         {"a, b = np.ascontiguousarray(img_a), np.ascontiguousarray(img_b)":
          "a, b = (np.ascontiguousarray(x[..., 0] if x.ndim == 3 else x) for x in (img_a, img_b))"}),
    Edit("x_y_swapped", "returns (y_min, x_min, y_max, x_max)",
         {"return int(x_min), int(y_min), int(x_max), int(y_max)": "return int(y_min), int(x_min), int(y_max), int(x_max)"}),
    Edit("exclusive_max", "returns exclusive maxima",
         {"return int(x_min), int(y_min), int(x_max), int(y_max)": "return int(x_min), int(y_min), int(x_max) + 1, int(y_max) + 1"}),
    Edit("threshold_inclusive", "counts a difference equal to the threshold",
         {"cv2.NORM_INF) > threshold": "cv2.NORM_INF) >= threshold"}),
    Edit("last_column_from_the_left", "searches the last column from the left: the box is one column wide",
         {"x_max = first_hit(x_min, width, True,": "x_max = first_hit(x_min, width, False,"}),
]
