"""One BPE merge (Sennrich et al. 2016, arXiv 1508.07909, Algorithm 1): count weighted pairs, merge the best.

O(total symbols) per step; ties go to the smallest pair; merges scan left to right without overlaps.
"""

from collections import Counter


def bpe_merge_step(word_counts):
    """One merge of byte-pair encoding training. word_counts: {word as space-separated symbols: count}.
    Returns (the merged pair as [a, b], the new word_counts), or (None, word_counts) when no pair is left."""
    pairs = Counter()
    for word, count in word_counts.items():
        symbols = word.split(" ")
        for a, b in zip(symbols, symbols[1:]):
            pairs[a, b] += count  # weighted by the word's count
    if not pairs:
        return None, dict(word_counts)
    best = min(pairs, key=lambda p: (-pairs[p], p))  # most frequent; ties: the smallest pair
    merged = {}
    for word, count in word_counts.items():
        symbols, out, i = word.split(" "), [], 0
        while i < len(symbols):
            if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                out.append(symbols[i] + symbols[i + 1])  # whole symbols only, never across a space
                i += 2  # no overlaps: "a a a" -> "aa a"
            else:
                out.append(symbols[i])
                i += 1
        key = " ".join(out)
        merged[key] = merged.get(key, 0) + count  # words that become equal add up
    return list(best), merged
