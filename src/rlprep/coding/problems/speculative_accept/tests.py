"""Hidden properties of speculative_accept: transformers' _speculative_sampling (accepted prefix under the same
uniforms), the exact output distribution, and the reference."""

import torch
from transformers.generation.utils import _speculative_sampling

from rlprep.coding.testkit import Properties, close, expect, rand, randn

P = Properties()


def _case(size, salt, K=None, sharp=1.0):
    K, V = K or size["K"], size["V"]
    draft = randn(size, K, V, salt=salt, scale=2.0 * sharp)
    target = randn(size, K + 1, V, salt=salt + 1, scale=2.0)
    tokens = torch.stack([torch.multinomial(torch.softmax(draft[i], -1), 1, generator=torch.Generator().manual_seed(
        salt * 31 + i))[0] for i in range(K)])
    return draft, target, tokens


def _emit(f, draft, target, tokens, u, r):
    out = f(draft_logits=draft, target_logits=target, draft_tokens=tokens, u=u, r=r)
    expect(isinstance(out, (list, tuple)), "expected a list of token ids")
    return [int(t) for t in out]


def examples(size):
    draft = torch.log(torch.tensor([[0.7, 0.2, 0.1], [0.3, 0.4, 0.3]]))
    target = torch.log(torch.tensor([[0.5, 0.4, 0.1], [0.1, 0.1, 0.8], [0.2, 0.3, 0.5]]))
    tokens = torch.tensor([0, 1])
    return [dict(draft_logits=draft, target_logits=target, draft_tokens=tokens, u=torch.tensor([0.5, 0.1]), r=0.5),
            dict(draft_logits=draft, target_logits=target, draft_tokens=tokens, u=torch.tensor([0.9, 0.1]), r=0.3)]


@P.prop("accepts the same prefix as transformers' _speculative_sampling under the same uniforms",
        library="transformers _speculative_sampling")
def _(f, ref, size):
    for trial in range(4):
        draft, target, tokens = _case(size, 10 + 3 * trial)
        draft, target = draft.float(), target.float()
        torch.manual_seed(trial)
        u = torch.rand(size["K"])  # the uniforms transformers' rand_like draws after this seed
        torch.manual_seed(trial)
        _, n = _speculative_sampling(torch.cat([torch.zeros(1, 2, dtype=torch.long), tokens[None]], 1), draft[None],
                                     size["K"], target[None])
        out = _emit(f, draft, target, tokens, u, 0.5)
        close(len(out) - 1, int(n))
        close(out[:-1], tokens[:int(n)].tolist())


@P.prop("matches the reference on random drafts and uniforms")
def _(f, ref, size):
    for trial in range(5):
        draft, target, tokens = _case(size, 30 + 3 * trial, sharp=2.0)
        u = 0.5 + 0.5 * rand(size, size["K"], salt=50 + trial)  # high uniforms: rejections happen
        r = float(rand(size, 1, salt=60 + trial))
        close(_emit(f, draft, target, tokens, u, r), ref(draft, target, tokens, u, r))


@P.prop("accepts exactly when u < p/q, and resamples from max(0, p - q) normalised")
def _(f, ref, size):
    draft, target, _ = _case(size, 70, K=1)
    q, p = torch.softmax(draft[0], -1), torch.softmax(target[0], -1)
    x = int(torch.argmax(q / p))  # the token the draft over-covers most: p/q < 1
    ratio = float(p[x] / q[x])
    tokens = torch.tensor([x])
    close(_emit(f, draft, target, tokens, torch.tensor([ratio * 0.999]), 0.5)[0], x)
    residual = torch.clamp(p - q, min=0)
    cdf = (residual / residual.sum()).cumsum(-1)
    for r in [(k + 0.5) / 12 for k in range(12)]:
        want = min(int((cdf <= r).sum()), int(torch.nonzero(residual > 0).max()))
        close(_emit(f, draft, target, tokens, torch.tensor([min(ratio * 1.001, 0.999999)]), r)[0], want)


@P.prop("when every draft is accepted, a bonus token is sampled from p_K")
def _(f, ref, size):
    draft, target, tokens = _case(size, 80)
    u = torch.zeros(size["K"], dtype=torch.float64)  # u = 0 accepts any draft the target allows
    target[: size["K"]] = draft  # p = q on the drafted positions: nothing is rejected
    for r in (0.1, 0.6, 0.95):
        out = _emit(f, draft, target, tokens, u, r)
        close(out, ref(draft, target, tokens, u, r))


@P.prop("never accepts a token the target gives probability 0")
def _(f, ref, size):
    draft, target, tokens = _case(size, 90)
    target[0, int(tokens[0])] = float("-inf")
    u = torch.zeros(size["K"], dtype=torch.float64)
    out = _emit(f, draft, target, tokens, u, 0.4)
    close(out, ref(draft, target, tokens, u, 0.4))
    expect(len(out) == 1 and out[0] != int(tokens[0]), "the draft must be rejected at once")
