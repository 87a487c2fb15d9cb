"""ViT patchify (Dosovitskiy et al. 2021, arXiv 2010.11929, Sec. 3.1): one view, one permute, one reshape. O(BCHW)."""

import torch


def patchify(images, patch_size):
    """Cut images into non-overlapping square patches. images: [B, C, H, W]; returns [B, N, C * p * p] with
    N = (H / p) * (W / p) patches in row-major order, each flattened in (channel, row, column) order."""
    B, C, H, W = images.shape
    p = patch_size
    if p < 1 or H % p or W % p:
        raise ValueError(f"patch_size {p} must divide H={H} and W={W}")
    x = images.reshape(B, C, H // p, p, W // p, p)  # (B, C, gh, p, gw, p)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (B, gh, gw, C, p, p): patches row-major, channel-first inside
    return x.reshape(B, (H // p) * (W // p), C * p * p)
