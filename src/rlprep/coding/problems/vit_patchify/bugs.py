"""Catalogued bugs of patchify."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("channels_last_inside_patch", "flattens each patch as (row, column, channel), the einops 'p1 p2 c' layout",
         {"x.permute(0, 2, 4, 1, 3, 5)": "x.permute(0, 2, 4, 3, 5, 1)"}),
    Edit("column_major_patches", "orders the patches column by column",
         {"x.permute(0, 2, 4, 1, 3, 5)": "x.permute(0, 4, 2, 1, 3, 5)"}),
    Edit("reshape_without_permute", "reshapes straight to [B, N, C p p]: patches are not contiguous rows of pixels",
         {"    x = x.permute(0, 2, 4, 1, 3, 5)  # (B, gh, gw, C, p, p): patches row-major, channel-first inside\n": ""}),
    Edit("rows_and_columns_swapped", "transposes each patch (column, row)",
         {"x.permute(0, 2, 4, 1, 3, 5)": "x.permute(0, 2, 4, 1, 5, 3)"}),
    Edit("silent_crop", "crops the image to a multiple of p instead of raising",
         {"    if p < 1 or H % p or W % p:\n        raise ValueError(f\"patch_size {p} must divide H={H} and W={W}\")\n":
          "    H, W = H - H % p, W - W % p\n    images = images[:, :, :H, :W]\n"}),
]
