"""Catalogued bugs of apply_rope."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("rotate_half_sign", "rotate_half as cat(x2, -x1): rotates the other way",
         {"torch.cat((-x2, x1), dim=-1)": "torch.cat((x2, -x1), dim=-1)"}),
    Edit("interleaved_angles", "repeat_interleave of the angles: pairs (2i, 2i+1)'s angle on the half layout",
         {"torch.cat((freqs, freqs), dim=-1)": "freqs.repeat_interleave(2, dim=-1)"}),
    Edit("frequency_exponent", "inv_freq = base^(-i/d) with i = 0, 2, 4 read as 0, 1, 2",
         {"torch.arange(0, d, 2, dtype=torch.float32) / d": "torch.arange(0, d // 2, dtype=torch.float32) / d"}),
    Edit("column_positions", "uses the column index instead of position_ids",
         {"position_ids[..., None].float()": "torch.arange(x.shape[2], dtype=torch.float32)[None, :, None]"}),
    Edit("sin_cos_swapped", "x * sin + rotate_half(x) * cos",
         {"return x * cos + rotated * sin": "return x * sin + rotated * cos"}),
    Edit("odd_size_accepted", "does not check the head size",
         {"    if d % 2:\n": "    if False:\n"}),
]
