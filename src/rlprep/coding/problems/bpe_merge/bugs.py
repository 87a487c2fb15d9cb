"""Catalogued bugs of bpe_merge_step."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("unweighted_counts", "counts each distinct word once, ignoring its count",
         {"pairs[a, b] += count  # weighted by the word's count": "pairs[a, b] += 1"}),
    Edit("largest_on_ties", "breaks ties toward the largest pair",
         {"best = min(pairs, key=lambda p: (-pairs[p], p))": "best = max(pairs, key=lambda p: (pairs[p], p))"}),
    Edit("overlapping_merges", "steps one symbol after a merge: 'a a a' becomes 'aa aa'",
         {"                i += 2  # no overlaps": "                i += 1  # overlaps"}),
    Edit("string_replace", "str.replace on the word: matches across symbol boundaries ('a bc' -> 'abc')",
         {"        key = \" \".join(out)\n": "        key = word.replace(best[0] + \" \" + best[1], best[0] + best[1])\n"}),
    Edit("counts_overwritten", "overwrites the count when two words become equal",
         {"merged[key] = merged.get(key, 0) + count": "merged[key] = count"}),
    Edit("only_first_occurrence", "merges only the first occurrence in each word",
         {"            if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:":
          "            if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best and len(out) == i:"}),
]
