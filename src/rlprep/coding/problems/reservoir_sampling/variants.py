"""Honest variants of reservoir_sample."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("iterator", "one pass over an iterator, counting items", source='''
        import math


        def reservoir_sample(stream, k, uniforms):
            if not k >= 1:
                raise ValueError("k must be positive")
            res, seen = [], 0
            for item, u in zip(stream, uniforms):
                if seen < k:
                    res.append(item)
                else:
                    slot = math.floor(u * (seen + 1))
                    if slot < k:
                        res[slot] = item
                seen += 1
            return res
        '''),
    Edit("slice_then_loop", "the first k sliced, then the rest", source='''
        def reservoir_sample(stream, k, uniforms):
            if k <= 0:
                raise ValueError("k <= 0")
            out = list(stream[:k])
            for i in range(k, len(stream)):
                j = int((i + 1) * uniforms[i])
                if j < k:
                    out[j] = stream[i]
            return out
        '''),
]
