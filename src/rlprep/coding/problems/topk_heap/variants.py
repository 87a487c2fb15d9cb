"""Honest variants of top_k."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("heappushpop", "heapq.heappushpop on every item after the heap is full", source='''
        import heapq


        def top_k(stream, k):
            if k < 0:
                raise ValueError("k must be non-negative")
            heap = []
            for x in stream:
                if len(heap) < k:
                    heapq.heappush(heap, x)
                elif k:
                    heapq.heappushpop(heap, x)
            out = []
            while heap:
                out.append(heapq.heappop(heap))
            return out[::-1]
        '''),
    Edit("negated_max_heap", "a bounded buffer with sorted insertion (bisect), evicting the smallest", source='''
        import bisect


        def top_k(stream, k):
            if k < 0:
                raise ValueError("negative k")
            kept = []  # ascending
            for x in stream:
                if len(kept) < k:
                    bisect.insort(kept, x)
                elif kept and x > kept[0]:
                    kept.pop(0)
                    bisect.insort(kept, x)
            return kept[::-1]
        '''),
]
