"""Catalogued bugs of sample_with_temperature."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("multiplies_by_temperature", "scales the logits by T instead of 1 / T",
         {"torch.softmax(logits / temperature, dim=-1)": "torch.softmax(logits * temperature, dim=-1)"}),
    Edit("cdf_of_logits", "takes the cumulative sum of the scaled logits, not of the probabilities",
         {"cdf = probs.cumsum(dim=-1)": "cdf = (logits / temperature).cumsum(dim=-1)"}),
    Edit("off_by_one", "returns the last index whose cumulative mass is still <= u",
         {"idx = (cdf <= u[:, None]).sum(dim=-1)": "idx = ((cdf <= u[:, None]).sum(dim=-1) - 1).clamp(min=0)"}),
    Edit("greedy_divides_by_zero", "has no greedy branch: T = 0 divides by zero",
         {"    if temperature == 0:\n        return logits.argmax(dim=-1)  # greedy: first index among ties\n": ""}),
    Edit("last_token_fallback", "when the cdf never exceeds u, falls back to token 0 instead of the last possible one",
         {"return torch.minimum(idx, last)": "return torch.where(idx > last, torch.zeros_like(idx), idx)"}),
    Edit("softmax_over_batch", "normalises over the batch axis",
         {"torch.softmax(logits / temperature, dim=-1)": "torch.softmax(logits / temperature, dim=0)"}),
]
