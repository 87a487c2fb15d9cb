"""A paged KV-cache block allocator (PagedAttention, Kwon et al. 2023, arXiv 2309.06180, Sec. 4).

A heap of free block ids (lowest first), a block table and a token count per sequence; allocation all-or-nothing.
"""

import heapq


class BlockAllocator:
    """Fixed-size KV-cache blocks shared by sequences, as PagedAttention allocates them."""

    def __init__(self, num_blocks: int, block_size: int):
        if num_blocks < 1 or block_size < 1:
            raise ValueError("num_blocks and block_size must be >= 1")
        self.block_size = block_size
        self.free_ids = list(range(num_blocks))  # a heap: the lowest free id first
        self.tables = {}  # seq_id -> block ids in order
        self.lengths = {}  # seq_id -> tokens stored

    def append(self, seq_id: int, n_tokens: int) -> list:
        """Make room for n_tokens more tokens of seq_id; return its block table (block ids in order)."""
        table = self.tables.get(seq_id, [])
        length = self.lengths.get(seq_id, 0) + n_tokens
        needed = -(-length // self.block_size) - len(table)  # ceil: a partly filled last block is used first
        if needed > len(self.free_ids):
            raise RuntimeError(f"out of KV-cache blocks: need {needed}, {len(self.free_ids)} free")
        table = table + [heapq.heappop(self.free_ids) for _ in range(max(needed, 0))]
        self.tables[seq_id], self.lengths[seq_id] = table, length
        return list(table)

    def free(self, seq_id: int) -> int:
        """Release every block of seq_id; return the number of free blocks."""
        for block in self.tables.pop(seq_id):  # KeyError for an unknown sequence
            heapq.heappush(self.free_ids, block)
        del self.lengths[seq_id]
        return len(self.free_ids)
