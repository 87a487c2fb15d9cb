"""Hidden properties of kl_estimators: exact expectations by enumeration, TRL's GRPO KL term, numerics."""

import torch

from rlprep.coding import trl_reference
from rlprep.coding.testkit import Properties, close, expect, raises, randn

P = Properties()


def _pair(size, salt, spread=None):
    logp = -randn(size, *size["shape"], salt=salt).abs() - 0.5
    return logp, logp + (spread or size["spread"]) * randn(size, *size["shape"], salt=salt + 1)


def _three(f, logp, ref_logp):
    out = f(logp=logp, ref_logp=ref_logp)
    expect(isinstance(out, (tuple, list)) and len(out) == 3, "expected (k1, k2, k3)")
    return [torch.as_tensor(o, dtype=torch.float64) for o in out]


def examples(size):
    return [dict(logp=torch.tensor([-1.0, -2.0]), ref_logp=torch.tensor([-1.0, -1.0])),
            dict(logp=torch.tensor([[-0.5, -3.0]]), ref_logp=torch.tensor([[-1.5, -2.0]]))]


@P.prop("k1, k2 and k3 equal their formulas on random log-probs")
def _(f, ref, size):
    logp, ref_logp = _pair(size, 1)
    log_r = ref_logp - logp
    close(_three(f, logp, ref_logp), [-log_r, 0.5 * log_r ** 2, torch.exp(log_r) - log_r - 1], rtol=1e-9, atol=1e-15)


@P.prop("k1 and k3 are unbiased for the exact KL over a full distribution")
def _(f, ref, size):
    logits_p, logits_q = randn(size, 7, salt=2, scale=size["spread"] + 1), randn(size, 7, salt=3)
    logp, logq = torch.log_softmax(logits_p, -1), torch.log_softmax(logits_q, -1)
    p = logp.exp()
    kl = float((p * (logp - logq)).sum())
    k1, k2, k3 = _three(f, logp, logq)
    close([float((p * k1).sum()), float((p * k3).sum())], [kl, kl], rtol=1e-9, atol=1e-12)
    expect(bool((k3 >= -1e-15).all()) and bool((k2 >= 0).all()), "k2 and k3 are never negative")


@P.prop("the batch mean of k3 matches TRL's GRPO KL term", library="trl.GRPOTrainer")
def _(f, ref, size):
    logp, ref_logp = _pair(size, 4)
    logp2d, ref2d = logp.reshape(logp.shape[0], -1), ref_logp.reshape(logp.shape[0], -1)
    mask = torch.ones_like(logp2d)
    adv = torch.zeros(logp2d.shape[0], dtype=torch.float64)
    trl_kl = trl_reference.grpo_loss("bnpo", logp2d, logp2d, adv, mask, 0.2, 0.2, beta=1.0, ref_logp=ref2d)
    close(_three(f, logp, ref_logp)[2].mean(), trl_kl, rtol=1e-6, atol=1e-9)


@P.prop("k3 stays accurate for tiny log-ratios and large ones")
def _(f, ref, size):
    logp = torch.full((4,), -2.0, dtype=torch.float64)
    ref_logp = logp + torch.tensor([1e-6, -1e-4, 20.0, -30.0], dtype=torch.float64)
    log_r = ref_logp - logp
    close(_three(f, logp, ref_logp)[2], torch.expm1(log_r) - log_r, rtol=1e-5, atol=1e-15)


@P.prop("raises ValueError for mismatched shapes; the gradients of k2 and k3 are right")
def _(f, ref, size):
    logp, ref_logp = _pair(size, 5)
    raises(ValueError, f, logp=logp, ref_logp=ref_logp[..., :-1])
    close(_three(f, logp, ref_logp), [torch.as_tensor(t) for t in ref(logp, ref_logp)], rtol=1e-9, atol=1e-15)
