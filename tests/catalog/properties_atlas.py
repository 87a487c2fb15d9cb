"""Property checks for lab09's graded functions (the algorithm atlas), as ``properties.py`` writes them.

Seeded fixtures, plain-loop oracles and values worked by hand; none calls the reference implementation.
``ATLAS_CHECKS[name](fn)`` raises if ``fn`` is wrong.
"""

from __future__ import annotations

import math

import torch

from catalog.properties import _close, ragged_mask, randn


def check_leave_one_out_advantages(fn):
    r = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.5, 2.0, -1.0, 3.0], dtype=torch.float64)
    for G in (2, 4):
        want = []
        for start in range(0, 8, G):
            group = r[start:start + G].tolist()
            want += [x - (sum(group) - x) / (G - 1) for x in group]
        _close(fn(r, G), want, what=f"leave-one-out advantages, G={G}")
    out = fn(r.clone().requires_grad_(True), 4)
    assert not getattr(out, "requires_grad", False), "the advantages must be detached"


def _pg_batch():
    mask = ragged_mask(B=4, T=5, seed=2)
    old = randn(4, 5, seed=20) - 1.5
    new = old + 0.4 * randn(4, 5, seed=21)
    new[0, 1] = old[0, 1] + 2.0  # a ratio of e^2, far outside every clip range
    return new, old, randn(4, 5, seed=22) + old, torch.tensor([1.2, -0.8, 0.5, -1.5], dtype=torch.float64), mask


def check_dr_grpo_loss(fn):
    new, old, _, adv, mask = _pg_batch()
    for max_length, eps_low, eps_high in ((None, 0.2, 0.2), (9, 0.2, 0.2), (None, 0.2, 0.28)):
        total = 0.0
        for b in range(4):
            for t in range(5):
                if mask[b, t] == 1:
                    rho, a = math.exp(new[b, t].item() - old[b, t].item()), adv[b].item()
                    total += -min(rho * a, min(max(rho, 1 - eps_low), 1 + eps_high) * a)
        got = fn(new, old, adv, mask, max_length=max_length, eps_low=eps_low, eps_high=eps_high)
        _close(got, total / (4 * (max_length or 5)), what=f"Dr. GRPO, max_length={max_length}, eps={eps_low}, {eps_high}")
    new_g, old_g = new.clone().requires_grad_(True), old.clone().requires_grad_(True)
    fn(new_g, old_g, adv, mask).backward()
    assert old_g.grad is None or torch.all(old_g.grad == 0), "gradient must not flow into logp_old (stop-gradient)"


def check_cispo_loss(fn):
    new, old, _, adv, mask = _pg_batch()
    for eps_high, eps_low in ((4.0, None), (0.28, 0.2), (0.28, None)):  # None: no lower bound, even below 1
        want = torch.zeros(4, 5, dtype=torch.float64)
        for b in range(4):
            for t in range(5):
                if mask[b, t] == 1:
                    w = min(math.exp(new[b, t].item() - old[b, t].item()), 1 + eps_high)
                    w = w if eps_low is None else max(w, 1 - eps_low)
                    want[b, t] = -w * adv[b].item() / mask.sum().item()  # d loss / d logp_new
        new_g = new.clone().requires_grad_(True)
        loss = fn(new_g, old, adv, mask, eps_high=eps_high, eps_low=eps_low)
        loss.backward()
        _close(loss, float((want * new).sum()), what=f"CISPO loss, eps_high={eps_high}, eps_low={eps_low}")
        _close(new_g.grad, want, what=f"CISPO gradient (detached clipped weight), eps_high={eps_high}")


def _pairs():
    pc, pr, rc, rr = (torch.tensor(v, dtype=torch.float64) for v in (
        [-12.0, -30.5, -7.25], [-14.0, -29.0, -9.5], [-13.0, -30.0, -8.0], [-13.5, -28.0, -9.0]))
    return pc, pr, rc, rr, torch.tensor([4, 10, 3]), torch.tensor([6, 9, 5])


def check_ipo_loss(fn):
    pc, pr, rc, rr, lc, lr = _pairs()
    for beta in (0.1, 0.5):
        want = sum(((pc[i] - rc[i]).item() / lc[i].item() - (pr[i] - rr[i]).item() / lr[i].item() - 1 / (2 * beta)) ** 2
                   for i in range(3)) / 3
        _close(fn(pc, pr, rc, rr, lc, lr, beta=beta), want, what=f"IPO loss at beta={beta}")
    pcg, rcg = pc.clone().requires_grad_(True), rc.clone().requires_grad_(True)
    fn(pcg, pr, rcg, rr, lc, lr).backward()
    assert pcg.grad is not None and bool((pcg.grad != 0).all()), "the gradient must reach the policy log-probs"
    assert rcg.grad is None or torch.all(rcg.grad == 0), "no gradient may flow into the reference log-probs"


def check_simpo_loss(fn):
    pc, pr, _, _, lc, lr = _pairs()
    for beta, gamma in ((2.0, 0.5), (2.5, 1.0)):
        want = sum(math.log1p(math.exp(-(beta * (pc[i].item() / lc[i].item() - pr[i].item() / lr[i].item()) - gamma)))
                   for i in range(3)) / 3
        _close(fn(pc, pr, lc, lr, beta=beta, gamma=gamma), want, what=f"SimPO loss, beta={beta}, gamma={gamma}")
    # float32, z = 2 * (-200 - 0) - 0.5 = -400.5: -log sigma(z) = 400.5 (log(sigmoid(z)) is log 0 = -inf here)
    big = fn(torch.tensor([-200.0]), torch.tensor([0.0]), torch.tensor([1]), torch.tensor([1]))
    assert torch.isfinite(big) and abs(float(big) - 400.5) < 1e-3, "a margin of -400 in float32 gives 400.5, not inf"


ATLAS_CHECKS = {
    "leave_one_out_advantages": check_leave_one_out_advantages,
    "dr_grpo_loss": check_dr_grpo_loss,
    "cispo_loss": check_cispo_loss,
    "ipo_loss": check_ipo_loss,
    "simpo_loss": check_simpo_loss,
}
