"""Catalogued bugs of repetition_penalty."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("divides_every_logit", "divides negative logits too: they move toward 0 and become more likely",
         {"torch.where(seen < 0, seen * penalty, seen / penalty)": "seen / penalty"}),
    Edit("per_occurrence", "penalises a token once per occurrence",
         {"    return logits.scatter(1, input_ids, seen)  # (B, V)":
          "    out = logits.clone()\n    for b in range(input_ids.shape[0]):\n        for t in input_ids[b].tolist():\n"
          "            v = out[b, t]\n            out[b, t] = v * penalty if v < 0 else v / penalty\n    return out"}),
    Edit("signs_swapped", "multiplies positive logits and divides negative ones",
         {"torch.where(seen < 0, seen * penalty, seen / penalty)": "torch.where(seen < 0, seen / penalty, seen * penalty)"}),
    Edit("union_over_batch", "penalises in every row the tokens seen in any row",
         {"    seen = torch.gather(logits, 1, input_ids)": "    input_ids = input_ids.reshape(1, -1).expand(logits.shape[0], -1)\n    seen = torch.gather(logits, 1, input_ids)"}),
    Edit("subtracts", "subtracts the penalty (an additive penalty, not CTRL's)",
         {"torch.where(seen < 0, seen * penalty, seen / penalty)": "seen - penalty"}),
    Edit("accepts_zero", "lets penalty 0 through",
         {"if not penalty > 0:": "if penalty < 0:"}),
]
