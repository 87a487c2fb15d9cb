"""Catalogued bugs of top_k."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("keeps_the_smallest", "replaces when the new item is smaller: keeps the k smallest",
         {"elif x > heap[0]:": "elif x < heap[0]:"}),
    Edit("ascending_result", "returns the kept items smallest first",
         {"return sorted(heap, reverse=True)": "return sorted(heap)"}),
    Edit("heap_order", "returns the heap's internal order",
         {"return sorted(heap, reverse=True)": "return list(heap)"}),
    Edit("replace_before_full", "starts replacing after k - 1 items",
         {"if len(heap) < k:": "if len(heap) < k - 1:"}),
    Edit("first_k_only", "keeps the first k items and ignores the rest",
         {"        elif x > heap[0]:\n            heapq.heapreplace(heap, x)  # evict the smallest kept item\n": ""}),
    Edit("drops_duplicates", "skips a value already kept",
         {"    for x in stream:\n": "    for x in stream:\n        if x in heap:\n            continue\n"}),
]
