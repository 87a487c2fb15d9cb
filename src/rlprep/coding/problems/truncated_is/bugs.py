"""Catalogued bugs of importance_weights."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("ratio_reversed", "mu / pi instead of pi / mu",
         {"weights = torch.exp(logp_target - logp_behavior)": "weights = torch.exp(logp_behavior - logp_target)"}),
    Edit("probability_space", "exp(target) / exp(behavior): 0 / 0 for long sequences",
         {"weights = torch.exp(logp_target - logp_behavior)": "weights = torch.exp(logp_target) / torch.exp(logp_behavior)"}),
    Edit("clamps_from_below", "raises small weights to clip instead of capping large ones",
         {"torch.clamp(weights, max=clip)": "torch.clamp(weights, min=clip)"}),
    Edit("clips_the_log_ratio", "caps the log-ratio at clip instead of the weight",
         {"return weights if clip is None else torch.clamp(weights, max=clip)":
          "return weights if clip is None else torch.exp(torch.clamp(logp_target - logp_behavior, max=clip))"}),
    Edit("accepts_zero_clip", "lets clip = 0 through (every weight becomes 0)",
         {"if clip is not None and not clip > 0:": "if clip is not None and clip < 0:"}),
]
