"""Catalogued bugs of BlockAllocator."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("ignores_partial_block", "allocates ceil(n / block_size) new blocks per append, never filling the last one",
         {"needed = -(-length // self.block_size) - len(table)": "needed = -(-n_tokens // self.block_size)"}),
    Edit("partial_allocation", "takes blocks one by one and fails half way, leaving them taken",
         {"        if needed > len(self.free_ids):\n            raise RuntimeError(f\"out of KV-cache blocks: need {needed}, {len(self.free_ids)} free\")\n"
          "        table = table + [heapq.heappop(self.free_ids) for _ in range(max(needed, 0))]":
          "        for _ in range(max(needed, 0)):\n            if not self.free_ids:\n                self.tables[seq_id] = table\n"
          "                self.lengths.setdefault(seq_id, 0)\n                raise RuntimeError(\"out of KV-cache blocks\")\n            table = table + [heapq.heappop(self.free_ids)]"}),
    Edit("blocks_never_return", "free forgets the sequence but never returns its blocks",
         {"            heapq.heappush(self.free_ids, block)": "            pass"}),
    Edit("lifo_reuse", "reuses the most recently freed block first (a stack)",
         {"heapq.heappop(self.free_ids)": "self.free_ids.pop()",
          "heapq.heappush(self.free_ids, block)": "self.free_ids.append(block)",
          "self.free_ids = list(range(num_blocks))": "self.free_ids = list(range(num_blocks))[::-1]"}),
    Edit("one_extra_block", "allocates a new block as soon as the last one is exactly full",
         {"needed = -(-length // self.block_size) - len(table)": "needed = length // self.block_size + 1 - len(table)"}),
    Edit("keeps_length_after_free", "free releases the blocks but remembers the token count",
         {"        del self.lengths[seq_id]\n": ""}),
]
