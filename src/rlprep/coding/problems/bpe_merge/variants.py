"""Honest variants of bpe_merge_step."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("regex_with_boundaries", "a regex anchored on symbol boundaries, as Sennrich's learn_bpe.py does", source='''
        import re
        from collections import defaultdict


        def bpe_merge_step(word_counts):
            stats = defaultdict(int)
            for word, freq in word_counts.items():
                sym = word.split(" ")
                for i in range(len(sym) - 1):
                    stats[sym[i], sym[i + 1]] += freq
            if not stats:
                return None, dict(word_counts)
            top = max(stats.values())
            best = sorted(p for p, c in stats.items() if c == top)[0]
            pattern = re.compile(r"(?<!\\S)" + re.escape(best[0] + " " + best[1]) + r"(?!\\S)")
            out = {}
            for word, freq in word_counts.items():
                new = pattern.sub(best[0] + best[1], word)
                out[new] = out.get(new, 0) + freq
            return [best[0], best[1]], out
        '''),
    Edit("tuples", "words as tuples of symbols throughout", source='''
        from collections import Counter


        def bpe_merge_step(word_counts):
            words = {tuple(w.split(" ")): c for w, c in word_counts.items()}
            counts = Counter()
            for sym, c in words.items():
                for pair in zip(sym, sym[1:]):
                    counts[pair] += c
            if not counts:
                return None, dict(word_counts)
            best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            result = Counter()
            for sym, c in words.items():
                new, skip = [], False
                for i, s in enumerate(sym):
                    if skip:
                        skip = False
                        continue
                    if i + 1 < len(sym) and (s, sym[i + 1]) == best:
                        new.append(s + sym[i + 1])
                        skip = True
                    else:
                        new.append(s)
                result[" ".join(new)] += c
            return list(best), dict(result)
        '''),
]
