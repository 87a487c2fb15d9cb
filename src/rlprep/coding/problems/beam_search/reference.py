"""Beam search over a bigram table: extend every beam by every token, keep the k best candidates overall.

O(length * k V log(k V)) with a sort per step; scores are sums of log-probabilities (no underflow).
"""


def beam_search(log_probs, start_token, length, beam_width):
    """Find a high-scoring sequence of `length` tokens under a bigram model. log_probs: [V, V] tensor,
    log_probs[a, b] = log p(next = b | previous = a). Returns (tokens: list of ints, score: float)."""
    if length < 1 or beam_width < 1:
        raise ValueError(f"length and beam_width must be >= 1, got {length} and {beam_width}")
    table = log_probs.tolist()
    V = len(table)
    beams = [([], 0.0, start_token)]  # (tokens, score, last token)
    for _ in range(length):
        candidates = [(tokens + [v], score + table[last][v], v) for tokens, score, last in beams for v in range(V)]
        candidates.sort(key=lambda c: -c[1])  # stable: ties keep (beam, token) order
        beams = candidates[:beam_width]  # the k best over all beams
    tokens, score, _ = beams[0]
    return tokens, score
