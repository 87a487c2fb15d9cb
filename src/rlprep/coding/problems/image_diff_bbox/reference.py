"""The image-diff bounding box: the course's one copy, rlprep.algos.image_diff.diff_bbox (lab 8, W33).

Exact whatever the layout; fast by scanning rows inward in blocks with cv2.norm(NORM_INF), then columns in the band.
"""

from rlprep.algos.image_diff import diff_bbox
