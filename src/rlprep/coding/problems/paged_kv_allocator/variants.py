"""Honest variants of BlockAllocator."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("sorted_free_list", "a sorted list of free ids instead of a heap", source='''
        import bisect


        class BlockAllocator:
            def __init__(self, num_blocks, block_size):
                if num_blocks <= 0 or block_size <= 0:
                    raise ValueError("positive sizes required")
                self.bs = block_size
                self.free_list = list(range(num_blocks))
                self.seqs = {}  # seq -> (blocks, tokens)

            def append(self, seq_id, n_tokens):
                blocks, tokens = self.seqs.get(seq_id, ([], 0))
                tokens += n_tokens
                want = (tokens + self.bs - 1) // self.bs
                extra = want - len(blocks)
                if extra > len(self.free_list):
                    raise RuntimeError("no free blocks")
                if extra > 0:
                    blocks = blocks + self.free_list[:extra]
                    del self.free_list[:extra]
                self.seqs[seq_id] = (blocks, tokens)
                return list(blocks)

            def free(self, seq_id):
                blocks, _ = self.seqs.pop(seq_id)
                for b in blocks:
                    bisect.insort(self.free_list, b)
                return len(self.free_list)
        '''),
    Edit("bitmap", "a free bitmap scanned from block 0", source='''
        class BlockAllocator:
            def __init__(self, num_blocks, block_size):
                if num_blocks < 1 or block_size < 1:
                    raise ValueError("bad sizes")
                self.block_size = block_size
                self.is_free = [True] * num_blocks
                self.table = {}
                self.tokens = {}

            def append(self, seq_id, n_tokens):
                blocks = self.table.get(seq_id, [])
                total = self.tokens.get(seq_id, 0) + n_tokens
                need = -(-total // self.block_size) - len(blocks)
                chosen = [i for i, f in enumerate(self.is_free) if f][:max(need, 0)]
                if len(chosen) < need:
                    raise RuntimeError("out of blocks")
                for i in chosen:
                    self.is_free[i] = False
                self.table[seq_id] = blocks + chosen
                self.tokens[seq_id] = total
                return list(self.table[seq_id])

            def free(self, seq_id):
                if seq_id not in self.table:
                    raise KeyError(seq_id)
                for i in self.table.pop(seq_id):
                    self.is_free[i] = True
                self.tokens.pop(seq_id)
                return sum(self.is_free)
        '''),
]
