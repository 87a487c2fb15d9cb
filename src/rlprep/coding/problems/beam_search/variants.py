"""Honest variants of beam_search."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("torch_topk", "scores as a [k, V] tensor, flattened, torch.topk, then back-pointers", source='''
        import torch


        def beam_search(log_probs, start_token, length, beam_width):
            if length < 1 or beam_width < 1:
                raise ValueError("length and beam_width must be positive")
            V = log_probs.shape[0]
            scores = torch.zeros(1, dtype=log_probs.dtype)
            seqs = torch.full((1, 1), start_token, dtype=torch.long)
            for _ in range(length):
                cand = scores[:, None] + log_probs[seqs[:, -1]]  # (k, V)
                top = torch.topk(cand.flatten(), min(beam_width, cand.numel()))
                beam, tok = top.indices // V, top.indices % V
                seqs = torch.cat([seqs[beam], tok[:, None]], dim=1)
                scores = top.values
            return seqs[0, 1:].tolist(), float(scores[0])
        '''),
    Edit("heapq", "heapq.nlargest over the candidates", source='''
        import heapq


        def beam_search(log_probs, start_token, length, beam_width):
            if beam_width <= 0 or length <= 0:
                raise ValueError("need positive length and beam width")
            lp = log_probs.tolist()
            beams = [(0.0, (start_token,))]
            for _ in range(length):
                cands = ((s + lp[seq[-1]][v], seq + (v,)) for s, seq in beams for v in range(len(lp)))
                beams = heapq.nlargest(beam_width, cands, key=lambda c: c[0])
            score, seq = beams[0]
            return list(seq[1:]), score
        '''),
]
