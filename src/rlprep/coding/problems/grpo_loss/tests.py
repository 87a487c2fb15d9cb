"""Hidden properties of grpo_loss, compared with TRL's GRPOTrainer._compute_loss ("grpo" and "bnpo")."""

import torch

from rlprep.coding import trl_reference
from rlprep.coding.testkit import Properties, close, raises, randn, vg

P = Properties()
TRL_TYPE = {"sequence": "grpo", "token": "bnpo"}


def _batch(size, salt, spread=0.4):
    B, T = size["B"], size["T"]
    old = -randn(size, B, T, salt=salt).abs() - 0.2
    new = old + spread * randn(size, B, T, salt=salt + 1)
    ref = old + 0.3 * randn(size, B, T, salt=salt + 2)
    adv = randn(size, B, salt=salt + 3)
    lengths = [(T - (b * 3) % T) or 1 for b in range(B)]
    mask = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).double()
    return new, old, ref, adv, mask


def _hyper(size):
    return dict(eps_low=size["eps_low"], eps_high=size["eps_high"], beta=size["beta"])


def examples(size):
    lp = torch.tensor([[-1.0, -2.0], [-0.5, -1.0]])
    return [dict(logp_new=lp, logp_old=lp, advantages=torch.tensor([1.0, -1.0]), mask=torch.tensor([[1, 1], [1, 0]])),
            dict(logp_new=lp + 0.5, logp_old=lp, advantages=torch.tensor([1.0, -1.0]),
                 mask=torch.tensor([[1, 1], [1, 0]]), aggregation="token")]


@P.prop("matches TRL's GRPO loss with sequence aggregation (loss_type 'grpo')", library="trl.GRPOTrainer")
def _(f, ref, size):
    new, old, r, adv, mask = _batch(size, 1)
    want = trl_reference.grpo_loss("grpo", new, old, adv, mask, size["eps_low"], size["eps_high"], size["beta"], r)
    close(f(logp_new=new, logp_old=old, advantages=adv, mask=mask, ref_logp=r, **_hyper(size)), want, rtol=1e-6,
          atol=1e-8)


@P.prop("matches TRL's token-level aggregation (loss_type 'bnpo')", library="trl.GRPOTrainer")
def _(f, ref, size):
    new, old, r, adv, mask = _batch(size, 10)
    want = trl_reference.grpo_loss("bnpo", new, old, adv, mask, size["eps_low"], size["eps_high"], size["beta"], r)
    close(f(logp_new=new, logp_old=old, advantages=adv, mask=mask, ref_logp=r, aggregation="token", **_hyper(size)),
          want, rtol=1e-6, atol=1e-8)


@P.prop("clips asymmetrically with eps_low and eps_high (far off-policy)")
def _(f, ref, size):
    new, old, r, adv, mask = _batch(size, 20, spread=1.5)
    hyper = dict(eps_low=0.1, eps_high=0.4, beta=0.0)
    close(f(logp_new=new, logp_old=old, advantages=adv, mask=mask, **hyper),
          trl_reference.grpo_loss("grpo", new, old, adv, mask, 0.1, 0.4, 0.0), rtol=1e-6, atol=1e-8)


@P.prop("the KL term is beta times k3, pulling toward the reference")
def _(f, ref, size):
    new, old, r, adv, mask = _batch(size, 30)
    adv = torch.zeros_like(adv)  # only the KL term is left
    for beta in (0.05, 0.5):
        m = mask.bool()
        log_r = r - new
        k3 = torch.where(m, torch.exp(log_r) - log_r - 1, torch.zeros_like(new))
        want = beta * (k3.sum(1) / mask.sum(1).clamp(min=1)).mean()
        close(f(logp_new=new, logp_old=old, advantages=adv, mask=mask, ref_logp=r, beta=beta), want, rtol=1e-9,
              atol=1e-12)


@P.prop("the gradient reaches logp_new only; padding with -inf changes nothing")
def _(f, ref, size):
    new, old, r, adv, mask = _batch(size, 40, spread=1.0)
    kw = dict(mask=mask, ref_logp=r, **_hyper(size))
    value, grads = vg(f, ["logp_new", "logp_old", "advantages", "ref_logp"], logp_new=new, logp_old=old,
                      advantages=adv, **kw)
    _, want = vg(ref, ["logp_new", "logp_old", "advantages", "ref_logp"], logp_new=new, logp_old=old, advantages=adv,
                 **kw)
    close(grads, want, rtol=1e-7, atol=1e-10)
    pad_new = torch.where(mask.bool(), new, torch.full_like(new, float("-inf")))
    pad_old = torch.where(mask.bool(), old, torch.full_like(old, float("-inf")))
    close(f(logp_new=pad_new, logp_old=pad_old, advantages=adv, **kw), value, rtol=1e-9, atol=1e-12)


@P.prop("takes per-token advantages; raises ValueError without ref_logp when beta > 0")
def _(f, ref, size):
    new, old, r, adv, mask = _batch(size, 50)
    adv_t = adv[:, None] + 0.1 * randn(size, size["B"], size["T"], salt=55)
    close(f(logp_new=new, logp_old=old, advantages=adv_t, mask=mask, ref_logp=r, **_hyper(size)),
          ref(new, old, adv_t, mask, ref_logp=r, **_hyper(size)), rtol=1e-9, atol=1e-12)
    raises(ValueError, f, logp_new=new, logp_old=old, advantages=adv, mask=mask, beta=0.1)
    raises(ValueError, f, logp_new=new, logp_old=old, advantages=adv, mask=mask, aggregation="median")
