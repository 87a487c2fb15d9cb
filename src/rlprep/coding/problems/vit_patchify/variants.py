"""Honest variants of patchify."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("unfold", "F.unfold and a transpose", source='''
        import torch.nn.functional as F


        def patchify(images, patch_size):
            _, _, H, W = images.shape
            if H % patch_size != 0 or W % patch_size != 0:
                raise ValueError("the patch size must divide the image")
            return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)
        '''),
    Edit("loops", "slices patch by patch and stacks them", source='''
        import torch


        def patchify(images, patch_size):
            B, C, H, W = images.shape
            p = patch_size
            if H % p or W % p:
                raise ValueError("bad patch size")
            rows = []
            for r in range(0, H, p):
                for c in range(0, W, p):
                    rows.append(images[:, :, r:r + p, c:c + p].reshape(B, -1))
            return torch.stack(rows, dim=1)
        '''),
]
