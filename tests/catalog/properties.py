"""Property checks for every graded function: ``CHECKS[name](fn)`` raises if ``fn`` is wrong.

Each check uses seeded fixtures, plain-loop oracles (Python floats, one element at a time) and values
worked by hand; none calls the reference implementation. The reference passes every check, and every
bug in the catalogs fails at least one (``tests/test_algos_catalogs.py``). Lab09's checks are in
``properties_atlas.py``.
"""

from __future__ import annotations

import math

import numpy as np
import torch


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
    adv, ret = fn(rewards, values, mask, gamma=0.9, lam=0.8)
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
    new_g, old_g = new.clone().requires_grad_(True), old.clone().requires_grad_(True)
    fn(new_g, old_g, adv, mask, 0.2).backward()
    assert old_g.grad is None or torch.all(old_g.grad == 0), "gradient must not flow into logp_old (stop-gradient)"
    assert new_g.grad is not None and new_g.grad.abs().sum() > 0, "gradient must flow into logp_new"
    # -inf log-probs in padding (a pad token's): the loss and the gradient are those of the clean batch
    pad_new = torch.where(mask > 0, new, torch.tensor(float("-inf"), dtype=torch.float64)).requires_grad_(True)
    pad_old = torch.where(mask > 0, old, torch.tensor(float("-inf"), dtype=torch.float64))
    loss = fn(pad_new, pad_old, adv, mask, 0.2)
    loss.backward()
    _close(loss.detach(), _ppo_oracle(new, old, adv, mask, 0.2), what="clipped surrogate with -inf in padding")
    assert torch.isfinite(pad_new.grad).all() and torch.all(pad_new.grad[mask == 0] == 0), "gradient 0 on padding"


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


def check_kl_k3(fn):
    logp = torch.tensor([-1.0, -2.0, -0.5, -3.0], dtype=torch.float64)
    ref = torch.tensor([-1.0, -1.0, -2.0, -0.1], dtype=torch.float64)
    want = [math.exp(b - a) - (b - a) - 1 for a, b in zip(logp.tolist(), ref.tolist())]
    _close(fn(logp, ref), want, what="k3 = exp(ref - logp) - (ref - logp) - 1")


def _grpo_oracle(new, old, adv, mask, el, eh, beta, ref, aggregation):
    B, T = new.shape
    per = [[0.0] * T for _ in range(B)]
    for b in range(B):
        for t in range(T):
            rho = math.exp(new[b, t].item() - old[b, t].item())
            a = adv[b].item()
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
    new_g, old_g = new.clone().requires_grad_(True), old.clone().requires_grad_(True)
    fn(new_g, old_g, adv, mask, aggregation="token").backward()
    assert old_g.grad is None or torch.all(old_g.grad == 0), "gradient must not flow into logp_old (stop-gradient)"


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


# lab08 ---------------------------------------------------------------------------------------------------------
def _bbox_oracle(a, b, threshold):
    H, W = a.shape[:2]
    hits = []
    for y in range(H):
        for x in range(W):
            pa, pb = np.atleast_1d(a[y, x]).astype(int), np.atleast_1d(b[y, x]).astype(int)
            if max(abs(int(u) - int(v)) for u, v in zip(pa, pb)) > threshold:
                hits.append((x, y))
    if not hits:
        return None
    xs, ys = [h[0] for h in hits], [h[1] for h in hits]
    return min(xs), min(ys), max(xs), max(ys)


def image_diff_cases(seed=0):
    """Small seeded (img_a, img_b, threshold) cases: borders, one channel, small differences, no change."""
    rng = np.random.default_rng(seed)
    cases = []
    a = rng.integers(0, 256, (9, 13, 3), dtype=np.uint8)
    b = a.copy(); b[0, 12, 2] ^= 0xFF; cases.append((a, b, 0))  # top-right corner, last channel only
    b = a.copy(); b[8, 0, 1] ^= 0x10; b[3, 5, 0] ^= 0x10; cases.append((a, b, 0))  # bottom-left border
    b = a.copy(); b[2:6, 3:4] ^= 1; cases.append((a, b, 0))  # a one-level change, non-square box
    b = a.copy(); b[4, 7, 0] ^= 0x40; cases.append((a, b, 8))
    b = a.copy(); b[6, 2, 1] ^= 0x10; b[1, 1, 0] ^= 0x04; cases.append((a, b, 8))  # one channel by 16: max, not mean
    c = np.full((6, 8, 3), 5, np.uint8); d = c.copy(); d[2, 3] = 3; d[4, 6] = 200; cases.append((c, d, 8))  # 5-3
    c = np.full((6, 8), 100, np.uint8); d = c.copy(); d[1, 2] = 108; d[5, 7] = 109  # gray; > not >=
    cases.append((c, d, 8))
    cases.append((a, a.copy(), 0))  # nothing differs
    m = rng.integers(60, 190, (9, 13, 3), dtype=np.uint8)
    n = m.copy(); n[2:5, 4:9, 0] += 40; n[2:5, 4:9, 2] -= 40; cases.append((m, n, 30))  # colour only: R +40, B -40
    n = m.copy(); n[6:8, 1:3, 2] += 40; cases.append((m, n, 30))  # the blue channel alone
    b = a.copy(); b[:, 3:] ^= 0x08; cases.append((a, b, 0))  # more than half the frame
    g = rng.integers(0, 256, (16, 8), dtype=np.uint8); h = g.copy(); h[3, 5] ^= 0x20; h[12, 1] ^= 1
    cases.append((g.T, h.T, 0))  # transposed views: rows of 16 bytes, not C-contiguous
    cases.append((np.asfortranarray(a), np.asfortranarray(b), 0))  # column-major colour images
    return cases


def check_diff_bbox(fn):
    for a, b, threshold in image_diff_cases():
        got = fn(a, b, threshold)
        want = _bbox_oracle(a, b, threshold)
        assert got == want, f"shape {a.shape}, threshold {threshold}: expected {want}, got {got}"
    for bad in [(np.zeros((4, 4, 3), np.uint8), np.zeros((4, 5, 3), np.uint8)),
                (np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32)),
                (np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.uint8))]:
        try:
            fn(*bad)
        except ValueError:
            continue
        raise AssertionError(f"expected ValueError for shapes {bad[0].shape}/{bad[1].shape} dtypes {bad[0].dtype}")


ROBUST_TOLERANCE = 3  # pixels: each edge of the found box within this distance of the blob's >= 25% box


def robust_cases(seed=0, H=120, W=160):
    """(img_a, img_b, expected) cases: noise only, global drift, soft-edged blobs with noise and drift."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:H, 0:W]
    base = (60 + 80 * (xx / W) + 40 * np.sin(yy / 9.0))[..., None].repeat(3, axis=2)  # (H, W, 3) smooth scene

    def shot(offset=0.0, blob=None):
        img = base + offset + rng.normal(0, 3.0, base.shape)
        if blob is not None:
            img = img + blob[..., None]
        return np.clip(np.rint(img), 0, 255).astype(np.uint8)

    def soft_blob(cy, cx, radius, amp):  # raised cosine: soft edges, support of the given radius
        r = np.hypot(yy - cy, xx - cx) / radius
        return amp * np.where(r < 1, 0.5 * (1 + np.cos(np.pi * r)), 0.0)

    def box(blob, level):
        ys, xs = np.nonzero(blob >= level * blob.max())
        return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())

    b1, b2 = soft_blob(50, 90, 18, 40.0), soft_blob(30, 30, 12, -35.0)
    colour = shot().astype(np.float64)
    colour[..., 0] += b1
    colour[..., 2] -= b1  # R +40, B -40: the grey level barely moves
    step = np.zeros((H, W))
    step[:, 60:] = 40.0  # the right 62% of the frame
    return [
        (shot(), np.clip(np.rint(colour), 0, 255).astype(np.uint8), box(b1, 0.25)),
        (shot(), shot(offset=6.0, blob=step), (60, 0, W - 1, H - 1)),
        (shot(), shot(), None),
        (shot(), shot(offset=12.0), None),
        (shot(), shot(offset=-8.0, blob=b1), box(b1, 0.25)),
        (shot(), shot(blob=np.abs(b2)), box(np.abs(b2), 0.25)),
        (shot(), shot(offset=6.0, blob=b2), box(np.abs(b2), 0.25)),
    ]


def check_diff_bbox_robust(fn):
    for i, (a, b, want) in enumerate(robust_cases()):
        got = fn(a, b)
        if want is None:
            assert got is None, f"case {i}: noise/drift only must give None, got {got}"
        else:
            assert got is not None, f"case {i}: the soft blob at {want} was missed"
            err = max(abs(g - w) for g, w in zip(got, want))
            assert err <= ROBUST_TOLERANCE, f"case {i}: box {got} is {err} px from {want} (tol. {ROBUST_TOLERANCE})"


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
