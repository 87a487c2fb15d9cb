"""Known bugs for lab06_importance_sampling: ``importance_weights`` and ``is_estimate``."""

import torch


# importance_weights --------------------------------------------------------------------------------------------
def iw_inverted(logp_target, logp_behavior, clip=None):
    """Ratio inverted: behavior / target."""
    w = torch.exp(logp_behavior - logp_target)
    return w if clip is None else w.clamp(max=clip)


def iw_clip_as_floor(logp_target, logp_behavior, clip=None):
    """max(w, clip) instead of min(w, clip): the truncation becomes a floor."""
    w = torch.exp(logp_target - logp_behavior)
    return w if clip is None else w.clamp(min=clip)


def iw_clip_in_log_space(logp_target, logp_behavior, clip=None):
    """Clips the log-ratio at ``clip`` (so w <= e^clip), not the weight."""
    lr = logp_target - logp_behavior
    return torch.exp(lr if clip is None else lr.clamp(max=clip))


def iw_two_sided(logp_target, logp_behavior, clip=None):
    """Two-sided PPO-style clip [1/clip, clip]: also raises small weights."""
    w = torch.exp(logp_target - logp_behavior)
    return w if clip is None else w.clamp(1.0 / clip, clip)


def iw_log_ratio(logp_target, logp_behavior, clip=None):
    """Returns the log-ratio: forgot the exp."""
    lr = logp_target - logp_behavior
    return lr if clip is None else lr.clamp(max=clip)


def iw_ignores_clip(logp_target, logp_behavior, clip=None):
    """Ignores ``clip``: no truncation."""
    return torch.exp(logp_target - logp_behavior)


# is_estimate ---------------------------------------------------------------------------------------------------
def _w(logp_target, logp_behavior, clip):
    lt, lb = torch.as_tensor(logp_target, dtype=torch.float64), torch.as_tensor(logp_behavior, dtype=torch.float64)
    w = torch.exp(lt - lb)
    return w if clip is None else w.clamp(max=clip)


def ise_always_ordinary(f_values, logp_target, logp_behavior, self_normalized=False, clip=None):
    """Ignores ``self_normalized``: always mean(w f)."""
    return float((_w(logp_target, logp_behavior, clip) * f_values).mean())


def ise_inverted_weights(f_values, logp_target, logp_behavior, self_normalized=False, clip=None):
    """Weights inverted (behavior / target)."""
    w = _w(logp_behavior, logp_target, clip)
    return float((w * f_values).sum() / (w.sum() if self_normalized else len(w)))


def ise_ignores_clip(f_values, logp_target, logp_behavior, self_normalized=False, clip=None):
    """Ignores ``clip``."""
    w = _w(logp_target, logp_behavior, None)
    return float((w * f_values).sum() / (w.sum() if self_normalized else len(w)))


def ise_no_weights(f_values, logp_target, logp_behavior, self_normalized=False, clip=None):
    """Plain mean of f: the behavior policy's expectation, no correction."""
    return float(torch.as_tensor(f_values, dtype=torch.float64).mean())


def ise_normalizes_by_f(f_values, logp_target, logp_behavior, self_normalized=False, clip=None):
    """Self-normalized version divides by sum(f) instead of sum(w)."""
    w = _w(logp_target, logp_behavior, clip)
    f = torch.as_tensor(f_values, dtype=torch.float64)
    return float((w * f).sum() / (f.sum() if self_normalized else len(w)))


def ise_normalized_by_mean_weight_squared(f_values, logp_target, logp_behavior, self_normalized=False, clip=None):
    """Self-normalized version divides by the number of samples twice: sum(w f) / (N * sum(w))."""
    w = _w(logp_target, logp_behavior, clip)
    f = torch.as_tensor(f_values, dtype=torch.float64)
    return float((w * f).sum() / (len(w) * w.sum() if self_normalized else len(w)))


def iw_ratio_of_exps(logp_target, logp_behavior, clip=None):
    """exp(lt) / exp(lb) instead of exp(lt - lb): right for moderate log-probs, 0 / 0 = NaN once both underflow
    (log-probs of a few hundred nats, the log-probs of whole sequences)."""
    w = torch.exp(logp_target) / torch.exp(logp_behavior)
    return w if clip is None else torch.clamp(w, max=clip)


BUGS = {
    "importance_weights": [iw_inverted, iw_clip_as_floor, iw_clip_in_log_space, iw_two_sided, iw_log_ratio,
                           iw_ignores_clip, iw_ratio_of_exps],
    "is_estimate": [ise_always_ordinary, ise_inverted_weights, ise_ignores_clip, ise_no_weights, ise_normalizes_by_f,
                    ise_normalized_by_mean_weight_squared],
}


# Correct alternatives ------------------------------------------------------------------------------------------
def alt_iw_minimum(logp_target, logp_behavior, clip=None):
    """torch.minimum against a constant tensor."""
    w = (logp_target - logp_behavior).exp()
    return w if clip is None else torch.minimum(w, torch.full_like(w, clip))


def alt_ise_numpy(f_values, logp_target, logp_behavior, self_normalized=False, clip=None):
    """numpy version."""
    import numpy as np

    w = np.exp(np.asarray(logp_target, dtype=np.float64) - np.asarray(logp_behavior, dtype=np.float64))
    if clip is not None:
        w = np.minimum(w, clip)
    f = np.asarray(f_values, dtype=np.float64)
    return float(np.sum(w * f) / np.sum(w)) if self_normalized else float(np.mean(w * f))


ALTERNATIVES = {"importance_weights": [alt_iw_minimum], "is_estimate": [alt_ise_numpy]}
