"""Top-k of a stream with a min-heap of size k: O(n log k) time, O(k) memory."""

import heapq


def top_k(stream, k):
    """The k largest numbers of a stream, largest first, keeping at most k items in memory. stream: a list (read
    once, in order); k: int >= 0. Returns a list of min(k, len(stream)) numbers."""
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    if k == 0:
        return []
    heap = []  # the k largest so far; heap[0] is the smallest of them
    for x in stream:
        if len(heap) < k:
            heapq.heappush(heap, x)
        elif x > heap[0]:
            heapq.heapreplace(heap, x)  # evict the smallest kept item
    return sorted(heap, reverse=True)
