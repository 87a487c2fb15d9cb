"""Property checks for every graded function: ``CHECKS[name](fn)`` raises if ``fn`` is wrong.

Each check uses seeded fixtures, plain-loop oracles (Python floats, one element at a time) and values
worked by hand; none calls the reference implementation. The reference passes every check, and every
bug in the catalogs fails at least one (``tests/test_algos_catalogs.py``). Lab08's checks are in
``properties_image_diff.py``, lab09's in ``properties_atlas.py``.
"""

from __future__ import annotations

import math

import torch

from catalog.properties_image_diff import check_diff_bbox, check_diff_bbox_robust


def _close(got, want, tol=1e-6, what="value"):
    got_t, want_t = torch.as_tensor(got, dtype=torch.float64), torch.as_tensor(want, dtype=torch.float64)
    assert got_t.shape == want_t.shape, f"{what}: shape {tuple(got_t.shape)} != {tuple(want_t.shape)}"
    assert torch.allclose(got_t, want_t, atol=tol, rtol=tol), f"{what}: {got_t} != {want_t}"


def ragged_mask(B=4, T=7, seed=0):
    """[B, T] float mask with rows of different lengths (1..T), right-padded; row 0 is full."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    lengths[0] = T
    return (torch.arange(T)[None, :] < lengths[:, None]).double()


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


# lab02 ---------------------------------------------------------------------------------------------------------
def check_bradley_terry_loss(fn):
    c = torch.tensor([0.0, 1.0, -2.0, 3.0], dtype=torch.float64)
    r = torch.tensor([0.0, 0.0, 1.0, 5.0], dtype=torch.float64)
    want = sum(math.log1p(math.exp(-(ci - ri))) for ci, ri in zip(c.tolist(), r.tolist())) / 4
    _close(fn(c, r), want, what="mean of -log sigma(r_c - r_r)")
    _close(fn(torch.zeros(1), torch.zeros(1)), math.log(2), what="equal rewards give ln 2")
    big = fn(torch.tensor([-200.0]), torch.tensor([0.0]))
    assert torch.isfinite(big) and abs(float(big) - 200.0) < 1e-3, "large negative margin must give ~200, not inf"
    cg = c.clone().requires_grad_(True)
    fn(cg, r).backward()
    assert (cg.grad < 0).all(), "the gradient must push every chosen reward up"


# lab03 ---------------------------------------------------------------------------------------------------------
def check_masked_mean(fn):
    x, mask = randn(4, 7), ragged_mask()
    vals = [x[b, t].item() for b in range(4) for t in range(7) if mask[b, t] == 1]
    _close(fn(x, mask), sum(vals) / len(vals), what="token-level masked mean")
    _close(fn(torch.tensor([[1.0, 2.0, 3.0], [10.0, 0.0, 0.0]]), torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])),
           4.0, what="(1 + 2 + 3 + 10) / 4")
    # inf / NaN in padding change neither the value nor the gradient; a transposed view gives the same mean
    junk = torch.tensor([float("inf"), float("nan"), float("-inf")], dtype=torch.float64)
    junk = junk[torch.arange(28).reshape(4, 7) % 3]  # (4, 7) inf, NaN, -inf in turn
    xg = torch.where(mask > 0, x, junk).requires_grad_(True)
    value = fn(xg, mask)
    value.backward()
    _close(value.detach(), sum(vals) / len(vals), what="masked mean with inf/NaN in padding")
    assert torch.isfinite(xg.grad).all() and torch.all(xg.grad[mask == 0] == 0), "gradient must be 0 on padding"
    transposed = x.T.contiguous().T, mask.T.contiguous().T  # (4, 7) views of (7, 4) tensors: not contiguous
    _close(fn(*transposed), sum(vals) / len(vals), what="masked mean of a transposed view")
    _close(fn(x, mask.bool()), sum(vals) / len(vals), what="masked mean with a bool mask")


def check_kl_penalized_rewards(fn):
    mask, logp, ref = ragged_mask(), randn(4, 7, seed=1), randn(4, 7, seed=2)
    score = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)
    got = fn(score, logp, ref, mask, 0.1)
    want = torch.zeros(4, 7, dtype=torch.float64)
    for b in range(4):
        last = max(t for t in range(7) if mask[b, t] == 1)
        for t in range(last + 1):
            want[b, t] = -0.1 * (logp[b, t].item() - ref[b, t].item()) + (score[b].item() if t == last else 0.0)
    _close(got, want, what="per-token KL-penalized rewards")
    assert not fn(score, logp.clone().requires_grad_(True), ref, mask, 0.1).requires_grad, "rewards must be detached"


def _gae_oracle(rewards, values, mask, gamma, lam):
    B, T = rewards.shape
    adv = torch.zeros(B, T, dtype=torch.float64)
    for b in range(B):
        n = int(mask[b].sum())  # contiguous valid prefix
        for t in range(n):
            total = 0.0
            for k in range(t, n):
                nxt = values[b, k + 1].item() if k + 1 < n else 0.0
                delta = rewards[b, k].item() + gamma * nxt - values[b, k].item()
                total += (gamma * lam) ** (k - t) * delta
            adv[b, t] = total
    return adv


def check_compute_gae_tokens(fn):
    mask, rewards, values = ragged_mask(), randn(4, 7, seed=3), randn(4, 7, seed=4)
    junk = torch.tensor([float("nan"), float("inf")], dtype=torch.float64)[torch.arange(28).reshape(4, 7) % 2]
    adv, ret = fn(rewards, torch.where(mask > 0, values, junk).requires_grad_(True), mask, gamma=0.9, lam=0.8)
    assert not adv.requires_grad and not ret.requires_grad, "advantages and returns must be detached"
    ret = torch.where(mask > 0, ret, values)  # padding values are never read; returns there are adv + junk
    want = _gae_oracle(rewards, values, mask, 0.9, 0.8)
    _close(adv, want, what="advantages (sum of discounted TD residuals, stopping at the last valid token)")
    _close(ret, want + values, what="returns = advantages + values")
    adv1, _ = fn(rewards, values, mask, gamma=1.0, lam=1.0)
    for b in range(4):  # lambda = 1: Monte-Carlo return minus V
        n = int(mask[b].sum())
        for t in range(n):
            _close(adv1[b, t], rewards[b, t:n].sum() - values[b, t], what="lam=1 advantage")


def _ppo_oracle(new, old, adv, mask, eps):
    total, count = 0.0, 0
    for b in range(new.shape[0]):
        for t in range(new.shape[1]):
            if mask[b, t] == 1:
                rho = math.exp(new[b, t].item() - old[b, t].item())
                a = adv[b, t].item()
                total += -min(rho * a, min(max(rho, 1 - eps), 1 + eps) * a)
                count += 1
    return total / count


def check_ppo_clip_loss(fn):
    mask = ragged_mask()
    old = randn(4, 7, seed=5) - 1.0
    new = old + 0.4 * randn(4, 7, seed=6)
    adv = randn(4, 7, seed=7)
    _close(fn(new, old, adv, mask, 0.2), _ppo_oracle(new, old, adv, mask, 0.2), what="clipped surrogate")
    _close(fn(old, old, adv, mask, 0.2), -sum(adv[b, t].item() for b in range(4) for t in range(7) if mask[b, t])
           / mask.sum().item(), what="ratio 1: loss = -mean(A)")
    new_g, old_g, adv_g = (t.clone().requires_grad_(True) for t in (new, old, adv))
    fn(new_g, old_g, adv_g, mask, 0.2).backward()
    assert old_g.grad is None or torch.all(old_g.grad == 0), "gradient must not flow into logp_old (stop-gradient)"
    assert adv_g.grad is None or torch.all(adv_g.grad == 0), "gradient must not flow into the advantages"
    _check_validation(fn, (new, old, adv, mask, 0.2), nan_at=0)
    assert new_g.grad is not None and new_g.grad.abs().sum() > 0, "gradient must flow into logp_new"
    # -inf log-probs in padding (a pad token's): the loss and the gradient are those of the clean batch
    pad_new = torch.where(mask > 0, new, torch.tensor(float("-inf"), dtype=torch.float64)).requires_grad_(True)
    pad_old = torch.where(mask > 0, old, torch.tensor(float("-inf"), dtype=torch.float64))
    loss = fn(pad_new, pad_old, adv, mask, 0.2)
    loss.backward()
    _close(loss.detach(), _ppo_oracle(new, old, adv, mask, 0.2), what="clipped surrogate with -inf in padding")
    assert torch.isfinite(pad_new.grad).all() and torch.all(pad_new.grad[mask == 0] == 0), "gradient 0 on padding"


def _check_validation(fn, args, nan_at):
    """validate=True (the default) raises on a NaN at a valid token and on an empty mask; validate=False does not."""
    args = list(args)
    clean = fn(*args)
    bad = list(args)
    bad[nan_at] = args[nan_at].clone()
    bad[nan_at][0, 0] = float("nan")  # row 0 is full: a valid token
    for inputs in (bad, args[:3] + [args[3] * 0] + args[4:]):
        try:
            fn(*inputs)
        except Exception:  # any clear error will do
            continue
        raise AssertionError("validate=True must raise on a NaN at a valid token and on an empty mask")
    _close(fn(*args, validate=False), float(clean), what="validate=False gives the same loss")


def check_value_loss(fn):
    mask = ragged_mask()
    old, ret = randn(4, 7, seed=8), randn(4, 7, seed=9)
    values = old + 0.5 * randn(4, 7, seed=10)
    total, count = 0.0, 0
    for b in range(4):
        for t in range(7):
            if mask[b, t] == 1:
                v, vo, r = values[b, t].item(), old[b, t].item(), ret[b, t].item()
                vc = vo + min(max(v - vo, -0.2), 0.2)
                total += max((v - r) ** 2, (vc - r) ** 2)
                count += 1
    _close(fn(values, old, ret, mask, 0.2), 0.5 * total / count, what="clipped value loss")
    junk = torch.tensor([float("nan"), float("inf")], dtype=torch.float64)[torch.arange(28).reshape(4, 7) % 2]
    vg, og, rg = (torch.where(mask > 0, t, junk).requires_grad_(True) for t in (values, old, ret))
    loss = fn(vg, og, rg, mask, 0.2)
    loss.backward()
    _close(loss.detach(), 0.5 * total / count, what="clipped value loss with inf/NaN in padding")
    assert torch.isfinite(vg.grad).all(), "padding must never be read (NaN in the gradient)"
    assert all(g.grad is None or torch.all(g.grad == 0) for g in (og, rg)), "old_values and returns are constants"
    _check_validation(fn, (values, old, ret, mask, 0.2), nan_at=0)


# lab04 ---------------------------------------------------------------------------------------------------------
def check_sequence_logprobs(fn):
    logits = randn(3, 5, 6, seed=11)
    labels = torch.randint(0, 6, (3, 5), generator=torch.Generator().manual_seed(0))
    mask = torch.tensor([[0, 1, 1, 1, 1], [0, 0, 1, 1, 0], [1, 1, 1, 0, 0]], dtype=torch.float64)
    labels = torch.where(mask.bool(), labels, torch.full_like(labels, -100))
    want = torch.zeros(3, dtype=torch.float64)
    for b in range(3):
        for t in range(5):
            if mask[b, t] == 1:
                row = logits[b, t].tolist()
                want[b] += row[labels[b, t]] - math.log(sum(math.exp(v) for v in row))
    _close(fn(logits, labels, mask), want, what="sum of masked token log-probs")
    # float32 logits of size 1e3 (log of an underflowed softmax is -inf) and a non-contiguous (transposed) view
    big = (logits * 1000).float()
    want_big = torch.zeros(3, dtype=torch.float64)
    for b in range(3):
        for t in range(5):
            if mask[b, t] == 1:
                row = [float(v) for v in big[b, t].tolist()]
                top = max(row)
                want_big[b] += row[labels[b, t]] - top - math.log(sum(math.exp(v - top) for v in row))
    _close(fn(big, labels, mask), want_big, tol=1e-5, what="float32 logits of size 1e3")
    _close(fn(logits.transpose(0, 1).contiguous().transpose(0, 1), labels, mask), want, what="transposed logits")
    half = fn(logits.to(torch.bfloat16), labels, mask)
    assert half.dtype in (torch.float32, torch.float64), "bfloat16 logits: the sum must be computed in float32 at least"


def check_dpo_loss(fn):
    pc, pr = torch.tensor([-3.0, -5.0], dtype=torch.float64), torch.tensor([-4.0, -2.0], dtype=torch.float64)
    _close(fn(pc, pr, pc.clone(), pr.clone(), 0.1), math.log(2), what="policy = reference gives ln 2")
    rc, rr = torch.tensor([-3.5, -4.0], dtype=torch.float64), torch.tensor([-3.0, -2.5], dtype=torch.float64)
    margins = [(pc[i] - rc[i] - (pr[i] - rr[i])).item() for i in range(2)]
    for beta in (0.1, 0.5):
        want = sum(math.log1p(math.exp(-beta * m)) for m in margins) / 2
        _close(fn(pc, pr, rc, rr, beta), want, what=f"DPO loss at beta={beta}")
    pcg, prg = pc.clone().requires_grad_(True), pr.clone().requires_grad_(True)
    rcg, rrg = rc.clone().requires_grad_(True), rr.clone().requires_grad_(True)
    fn(pcg, prg, rcg, rrg, 0.1).backward()
    assert (pcg.grad < 0).all() and (prg.grad > 0).all(), "gradient descent must raise pi_c and lower pi_r"
    assert rcg.grad is None or torch.all(rcg.grad == 0), "no gradient may flow into the reference log-probs"
    # a margin of -200 in float32: the loss is 200, the gradient -beta (log(sigmoid) gives inf and NaN)
    big = fn(torch.tensor([-300.0]), torch.tensor([-100.0]), torch.tensor([-200.0]), torch.tensor([-200.0]), 1.0)
    assert torch.isfinite(big) and abs(float(big) - 200.0) < 1e-3, "a margin of -200 in float32 must give 200, not inf"


# lab05 ---------------------------------------------------------------------------------------------------------
def _std(xs):
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def check_group_advantages(fn):
    r = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.0, 2.0, 0.0], dtype=torch.float64)
    G, eps = 4, 1e-4
    groups = [r[i:i + G].tolist() for i in range(0, len(r), G)]
    for scale in ("group", "batch", "none"):
        want = []
        for g in groups:
            m = sum(g) / G
            std = _std(g) if scale == "group" else _std(r.tolist())
            want += [(x - m) / (std + eps) if scale != "none" else (x - m) for x in g]
        got = fn(r, G, scale=scale, eps=eps)
        assert torch.isfinite(got).all(), f"scale={scale}: a group with equal rewards must give 0, not NaN"
        _close(got, want, what=f"advantages, scale={scale}")
    assert not fn(r.clone().requires_grad_(True), G).requires_grad, "the advantages must be detached"
    tied = fn(torch.cat([torch.full((6,), 0.3), torch.arange(6.0)]), 6, eps=1e-8)  # float32
    assert torch.all(tied[:6].abs() < 1e-6), "a tied group gets exactly 0 whatever eps (float32 rounding noise)"


def check_kl_k3(fn):
    logp = torch.tensor([-1.0, -2.0, -0.5, -3.0], dtype=torch.float64)
    ref = torch.tensor([-1.0, -1.0, -2.0, -0.1], dtype=torch.float64)
    want = [math.exp(b - a) - (b - a) - 1 for a, b in zip(logp.tolist(), ref.tolist())]
    _close(fn(logp, ref), want, what="k3 = exp(ref - logp) - (ref - logp) - 1")
    mask = torch.tensor([1.0, 1.0, 0.0, 0.0], dtype=torch.float64)
    padded = torch.where(mask > 0, logp, torch.tensor(float("-inf"), dtype=torch.float64))
    _close(fn(padded, ref, mask), want[:2] + [0.0, 0.0], what="masked positions give exactly 0, -inf log-probs there")


def _grpo_oracle(new, old, adv, mask, el, eh, beta, ref, aggregation, sequence_ratio=False):
    B, T = new.shape
    per = [[0.0] * T for _ in range(B)]
    for b in range(B):
        valid = [t for t in range(T) if mask[b, t] == 1]
        row = sum(new[b, t].item() - old[b, t].item() for t in valid) / len(valid)  # GSPO's log-ratio
        for t in range(T):
            rho = math.exp(row if sequence_ratio else new[b, t].item() - old[b, t].item())
            a = adv[b].item() if adv.ndim == 1 else adv[b, t].item()
            per[b][t] = -min(rho * a, min(max(rho, 1 - el), 1 + eh) * a)
            if beta > 0:
                d = ref[b, t].item() - new[b, t].item()
                per[b][t] += beta * (math.exp(d) - d - 1)
    if aggregation == "token":
        vals = [per[b][t] for b in range(B) for t in range(T) if mask[b, t] == 1]
        return sum(vals) / len(vals)
    rows = [[per[b][t] for t in range(T) if mask[b, t] == 1] for b in range(B)]
    return sum(sum(r) / len(r) for r in rows) / B


def check_grpo_loss(fn):
    mask = ragged_mask(B=6, T=5, seed=1)
    old = randn(6, 5, seed=12) - 1.0
    new = old + 0.5 * randn(6, 5, seed=13)
    ref = old + 0.3 * randn(6, 5, seed=14)
    adv = torch.tensor([1.0, -1.0, 0.5, -0.5, 2.0, -2.0], dtype=torch.float64)
    for aggregation in ("token", "sequence"):
        for beta in (0.0, 0.04):
            got = fn(new, old, adv, mask, eps_low=0.2, eps_high=0.28, beta=beta, ref_logp=ref, aggregation=aggregation)
            want = _grpo_oracle(new, old, adv, mask, 0.2, 0.28, beta, ref, aggregation)
            _close(got, want, what=f"GRPO loss, aggregation={aggregation}, beta={beta}")
    got = fn(new, old, adv, mask, beta=0.04, ref_logp=ref, aggregation="sequence", importance_level="sequence")
    want = _grpo_oracle(new, old, adv, mask, 0.2, 0.2, 0.04, ref, "sequence", sequence_ratio=True)
    _close(got, want, what="GSPO: the row's ratio for every token, k3 on the per-token log-probs")
    per_token = randn(6, 5, seed=15)
    _close(fn(new, old, per_token, mask), _grpo_oracle(new, old, per_token, mask, 0.2, 0.2, 0.0, ref, "token"),
           what="[B, T] advantages, one per token")
    for aggregation in ("token", "sequence"):
        _close(fn(new, old, adv, mask * 0, aggregation=aggregation), 0.0, what="no valid token gives 0")
    new_g, old_g, adv_g = (t.clone().requires_grad_(True) for t in (new, old, adv))
    fn(new_g, old_g, adv_g, mask, aggregation="token").backward()
    assert old_g.grad is None or torch.all(old_g.grad == 0), "gradient must not flow into logp_old (stop-gradient)"
    assert adv_g.grad is None or torch.all(adv_g.grad == 0), "gradient must not flow into the advantages"


ZERO_LOSS_CASES = [  # (stats, expected diagnosis), one per signature plus ambiguous ones that test the order
    (dict(loss=0.0, grad_norm=0.8, frac_zero_std_groups=0.25, frac_valid_tokens=0.9, clip_frac=0.0, beta=0.0,
          num_iterations=1), "expected"),
    (dict(loss=0.0, grad_norm=0.0, frac_zero_std_groups=1.0, frac_valid_tokens=0.9, clip_frac=0.0, beta=0.0,
          num_iterations=1), "zero_advantage"),
    (dict(loss=0.0, grad_norm=0.0, frac_zero_std_groups=0.5, frac_valid_tokens=0.0, clip_frac=0.0, beta=0.0,
          num_iterations=1), "no_valid_tokens"),
    (dict(loss=0.0, grad_norm=0.0, frac_zero_std_groups=1.0, frac_valid_tokens=0.0, clip_frac=0.0, beta=0.0,
          num_iterations=1), "no_valid_tokens"),
    (dict(loss=0.3, grad_norm=0.0, frac_zero_std_groups=0.0, frac_valid_tokens=0.7, clip_frac=1.0, beta=0.0,
          num_iterations=4), "all_clipped"),
    (dict(loss=0.0, grad_norm=0.5, frac_zero_std_groups=0.0, frac_valid_tokens=0.6, clip_frac=0.7, beta=0.04,
          num_iterations=2), "expected"),
]


def check_diagnose_zero_loss(fn):
    for stats, want in ZERO_LOSS_CASES:
        got = fn(dict(stats))
        assert got == want, f"stats {stats}: expected {want!r}, got {got!r}"
    unexplained = dict(ZERO_LOSS_CASES[0][0], grad_norm=0.0)
    try:
        fn(unexplained)
    except ValueError:
        pass
    else:
        raise AssertionError("a zero gradient that none of the three causes explains must raise ValueError")
    for key in ("beta", "num_iterations"):
        try:
            fn({k: v for k, v in ZERO_LOSS_CASES[0][0].items() if k != key})
        except Exception:  # any error says the key is required
            continue
        raise AssertionError(f"{key} is required: stats without it must raise")


# lab06 ---------------------------------------------------------------------------------------------------------
IS_SAMPLES = dict(
    f=torch.tensor([1.0, 2.0, -1.0, 0.5, 3.0], dtype=torch.float64),
    lt=torch.tensor([-1.0, -0.5, -2.0, -1.5, -0.2], dtype=torch.float64),
    lb=torch.tensor([-1.2, -2.0, -1.0, -1.5, -1.0], dtype=torch.float64),
)


def check_importance_weights(fn):
    lt, lb = IS_SAMPLES["lt"], IS_SAMPLES["lb"]
    w = [math.exp(a - b) for a, b in zip(lt.tolist(), lb.tolist())]
    _close(fn(lt, lb), w, what="w = exp(logp_target - logp_behavior)")
    _close(fn(lt, lb, clip=1.5), [min(x, 1.5) for x in w], what="truncated w = min(w, clip)")
    _close(fn(lt - 800, lb - 800), w, what="log-probs near -800: the weight computed in log space")


def check_is_estimate(fn):
    f, lt, lb = IS_SAMPLES["f"], IS_SAMPLES["lt"], IS_SAMPLES["lb"]
    for clip in (None, 1.5):
        w = [math.exp(a - b) for a, b in zip(lt.tolist(), lb.tolist())]
        w = w if clip is None else [min(x, clip) for x in w]
        wf = [wi * fi for wi, fi in zip(w, f.tolist())]
        for sn, want in ((False, sum(wf) / len(wf)), (True, sum(wf) / sum(w))):
            got = fn(f, lt, lb, self_normalized=sn, clip=clip)
            assert isinstance(got, float), f"is_estimate must return a Python float, got {type(got).__name__}"
            _close(got, want, what=f"IS estimate, self_normalized={sn}, clip={clip}")


# lab07 ---------------------------------------------------------------------------------------------------------
def check_infonce_loss(fn):
    img, txt = randn(4, 3, seed=15) * 3.0, randn(4, 3, seed=16) * 0.5
    for tau in (0.07, 0.5):
        ni = [[v / math.sqrt(sum(u * u for u in row)) for v in row] for row in img.tolist()]
        nt = [[v / math.sqrt(sum(u * u for u in row)) for v in row] for row in txt.tolist()]
        s = [[sum(a * b for a, b in zip(ni[i], nt[j])) / tau for j in range(4)] for i in range(4)]
        i2t = sum(-s[i][i] + math.log(sum(math.exp(v) for v in s[i])) for i in range(4)) / 4
        t2i = sum(-s[j][j] + math.log(sum(math.exp(s[i][j]) for i in range(4))) for j in range(4)) / 4
        _close(fn(img, txt, tau), (i2t + t2i) / 2, tol=1e-5, what=f"symmetric InfoNCE at tau={tau}")


CHECKS = {
    "bradley_terry_loss": check_bradley_terry_loss,
    "masked_mean": check_masked_mean,
    "kl_penalized_rewards": check_kl_penalized_rewards,
    "compute_gae_tokens": check_compute_gae_tokens,
    "ppo_clip_loss": check_ppo_clip_loss,
    "value_loss": check_value_loss,
    "sequence_logprobs": check_sequence_logprobs,
    "dpo_loss": check_dpo_loss,
    "group_advantages": check_group_advantages,
    "kl_k3": check_kl_k3,
    "grpo_loss": check_grpo_loss,
    "diagnose_zero_loss": check_diagnose_zero_loss,
    "importance_weights": check_importance_weights,
    "is_estimate": check_is_estimate,
    "infonce_loss": check_infonce_loss,
    "diff_bbox": check_diff_bbox,
    "diff_bbox_robust": check_diff_bbox_robust,
}
