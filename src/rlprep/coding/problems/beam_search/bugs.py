"""Catalogued bugs of beam_search."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("best_per_beam", "each beam keeps its own best extension: the beams never compete",
         {"        candidates = [(tokens + [v], score + table[last][v], v) for tokens, score, last in beams for v in range(V)]\n"
          "        candidates.sort(key=lambda c: -c[1])  # stable: ties keep (beam, token) order\n"
          "        beams = candidates[:beam_width]  # the k best over all beams":
          "        if len(beams) < beam_width:\n"
          "            candidates = [(tokens + [v], score + table[last][v], v) for tokens, score, last in beams for v in range(V)]\n"
          "            candidates.sort(key=lambda c: -c[1])\n"
          "            beams = candidates[:beam_width]\n"
          "        else:\n"
          "            beams = [max(((tokens + [v], score + table[last][v], v) for v in range(V)), key=lambda c: c[1])\n"
          "                     for tokens, score, last in beams]"}),
    Edit("keeps_the_worst", "sorts ascending and keeps the lowest scores",
         {"candidates.sort(key=lambda c: -c[1])": "candidates.sort(key=lambda c: c[1])"}),
    Edit("last_step_only", "scores a candidate by its last transition only",
         {"score + table[last][v]": "table[last][v]"}),
    Edit("returns_last_beam", "returns the last kept beam instead of the best",
         {"tokens, score, _ = beams[0]": "tokens, score, _ = beams[-1]"}),
    Edit("one_step_short", "runs length - 1 steps",
         {"for _ in range(length):": "for _ in range(length - 1):"}),
    Edit("ignores_start_token", "starts every path from token 0",
         {"beams = [([], 0.0, start_token)]": "beams = [([], 0.0, 0)]"}),
]
