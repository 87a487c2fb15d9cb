"""Honest variants of pack_sequences."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("python_lists", "builds every field with Python loops, then converts", source='''
        import torch


        def pack_sequences(sequences):
            if len(sequences) == 0 or min(len(s) for s in sequences) == 0:
                raise ValueError("empty input")
            ids, labels, pos, owner, cu = [], [], [], [], [0]
            for k, seq in enumerate(sequences):
                for i, tok in enumerate(seq):
                    ids.append(tok)
                    labels.append(-100 if i == 0 else tok)
                    pos.append(i)
                    owner.append(k)
                cu.append(cu[-1] + len(seq))
            n = len(ids)
            mask = torch.zeros(n, n, dtype=torch.bool)
            for i in range(n):
                for j in range(i + 1):
                    mask[i, j] = owner[i] == owner[j]
            as_row = lambda xs: torch.tensor([xs], dtype=torch.long)
            return {"input_ids": as_row(ids), "labels": as_row(labels), "position_ids": as_row(pos),
                    "cu_seq_lens": torch.tensor(cu, dtype=torch.int32), "attention_mask": mask[None, None]}
        '''),
    Edit("block_diag", "torch.block_diag of per-sequence lower triangles", source='''
        import torch


        def pack_sequences(sequences):
            if not sequences or not all(sequences):
                raise ValueError("need non-empty sequences")
            blocks = [torch.tril(torch.ones(len(s), len(s), dtype=torch.int64)) for s in sequences]
            mask = torch.block_diag(*blocks).bool()
            ids = torch.cat([torch.tensor(s) for s in sequences])
            labels = torch.cat([torch.tensor([-100] + list(s[1:])) for s in sequences])
            pos = torch.cat([torch.arange(len(s)) for s in sequences])
            cu = torch.tensor([0] + [len(s) for s in sequences]).cumsum(0)
            return {"input_ids": ids.unsqueeze(0), "labels": labels.unsqueeze(0), "position_ids": pos.unsqueeze(0),
                    "cu_seq_lens": cu, "attention_mask": mask.view(1, 1, *mask.shape)}
        '''),
]
