"""Reservoir sampling, Algorithm R (Vitter 1985): O(n) time, O(k) memory; every item kept with probability k / n."""


def reservoir_sample(stream, k, uniforms):
    """Algorithm R: a uniform sample of k items from a stream read once. uniforms[i] in [0, 1) is the random
    number for item i (used for i >= k). Returns the reservoir as a list of min(k, n) items."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    reservoir = []
    for i, item in enumerate(stream):
        if i < k:
            reservoir.append(item)  # fill the slots first
            continue
        j = int(uniforms[i] * (i + 1))  # uniform on 0..i
        if j < k:
            reservoir[j] = item  # kept with probability k / (i + 1)
    return reservoir
