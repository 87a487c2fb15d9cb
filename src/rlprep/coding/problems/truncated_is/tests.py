"""Hidden properties of importance_weights: the formula, exact unbiasedness by enumeration, truncation, log space."""

import torch

from rlprep.coding.testkit import Properties, close, expect, raises, randn

P = Properties()


def _pair(size, salt, spread=None):
    t = -randn(size, *size["shape"], salt=salt).abs() - 0.5
    return t, t + (spread or size["spread"]) * randn(size, *size["shape"], salt=salt + 1)


def examples(size):
    return [dict(logp_target=torch.tensor([-1.0, -2.0, -0.5]), logp_behavior=torch.tensor([-1.0, -1.0, -2.0])),
            dict(logp_target=torch.tensor([-1.0, -2.0, -0.5]), logp_behavior=torch.tensor([-1.0, -1.0, -2.0]),
                 clip=size["clip"])]


@P.prop("w = exp(logp_target - logp_behavior) without truncation")
def _(f, ref, size):
    t, b = _pair(size, 1)
    close(f(logp_target=t, logp_behavior=b), torch.exp(t - b), rtol=1e-12, atol=1e-15)


@P.prop("reweighting behaviour samples gives the target's exact expectation")
def _(f, ref, size):
    log_pi = torch.log_softmax(randn(size, 6, salt=2), -1)
    log_mu = torch.log_softmax(randn(size, 6, salt=3), -1)
    fx = randn(size, 6, salt=4)
    w = torch.as_tensor(f(logp_target=log_pi, logp_behavior=log_mu), dtype=torch.float64)
    close(float((log_mu.exp() * w * fx).sum()), float((log_pi.exp() * fx).sum()), rtol=1e-9, atol=1e-12)


@P.prop("truncates at clip and leaves smaller weights untouched")
def _(f, ref, size):
    t, b = _pair(size, 5, spread=2.0)
    close(f(logp_target=t, logp_behavior=b, clip=size["clip"]), torch.exp(t - b).clamp(max=size["clip"]), rtol=1e-12,
          atol=1e-15)


@P.prop("works in log space: log-probs near -1000 give finite, exact weights")
def _(f, ref, size):
    t, b = _pair(size, 6)
    close(f(logp_target=t - 1000.0, logp_behavior=b - 1000.0, clip=size["clip"]),
          torch.exp(t - b).clamp(max=size["clip"]), rtol=1e-9, atol=1e-12)


@P.prop("raises ValueError for clip <= 0, NaN or mismatched shapes; weighs a valid call")
def _(f, ref, size):
    t, b = _pair(size, 7)
    raises(ValueError, f, logp_target=t, logp_behavior=b, clip=0.0)
    raises(ValueError, f, logp_target=t, logp_behavior=b[..., :-1])
    raises(ValueError, f, logp_target=torch.full_like(t, float("nan")), logp_behavior=b)
    out = f(logp_target=t, logp_behavior=b, clip=size["clip"])
    close(out, ref(t, b, size["clip"]), rtol=1e-12, atol=1e-15)
    expect(float(torch.as_tensor(out).max()) <= size["clip"], "no weight may exceed clip")
