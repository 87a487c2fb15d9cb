"""Hidden properties of beam_search: exhaustive search, greedy decoding, and the reference's step-by-step beam."""

import itertools

import torch

from rlprep.coding.testkit import Properties, close, expect, raises, randn

P = Properties()


def _table(size, salt, V=None):
    V = V or size["V"]
    return torch.log_softmax(randn(size, V, V, salt=salt, scale=2.0), dim=-1)


def _path_score(table, start, tokens):
    prev, total = start, 0.0
    for t in tokens:
        total += float(table[prev, t])
        prev = t
    return total


def _exhaustive(table, start, length):
    V = table.shape[0]
    best = max(itertools.product(range(V), repeat=length), key=lambda seq: _path_score(table, start, seq))
    return list(best), _path_score(table, start, best)


def _run(f, table, start, length, width):
    out = f(log_probs=table, start_token=start, length=length, beam_width=width)
    expect(isinstance(out, (tuple, list)) and len(out) == 2, "expected (tokens, score)")
    return list(out[0]), float(out[1])


def examples(size):
    table = torch.log(torch.tensor([[0.1, 0.5, 0.4], [0.9, 0.05, 0.05], [0.1, 0.1, 0.8]]))
    return [dict(log_probs=table, start_token=0, length=2, beam_width=1),
            dict(log_probs=table, start_token=0, length=2, beam_width=2)]


@P.prop("a wide enough beam finds the exhaustive optimum")
def _(f, ref, size):
    table = _table(size, 1)
    width = size["V"] ** (size["length"] - 1)
    close(_run(f, table, 1, size["length"], width), _exhaustive(table, 1, size["length"]), rtol=1e-12, atol=1e-12)


@P.prop("beam width 1 is greedy decoding")
def _(f, ref, size):
    table = _table(size, 2)
    prev, tokens = 0, []
    for _ in range(size["length"]):
        prev = int(table[prev].argmax())
        tokens.append(prev)
    close(_run(f, table, 0, size["length"], 1), (tokens, _path_score(table, 0, tokens)), rtol=1e-12, atol=1e-12)


@P.prop("width 2 finds the path greedy misses")
def _(f, ref, size):
    table = torch.log(torch.tensor([[0.05, 0.55, 0.4], [0.34, 0.33, 0.33], [0.02, 0.02, 0.96]], dtype=torch.float64))
    close(_run(f, table, 0, 2, 2), ([2, 2], _path_score(table, 0, [2, 2])), rtol=1e-12, atol=1e-12)


@P.prop("keeps the k best candidates over all beams at each step")
def _(f, ref, size):
    table = _table(size, 3, V=size["V"] + 1)
    for width in (2, size["width"], size["width"] + 1):
        close(_run(f, table, 2, size["length"] + 1, width), ref(table, 2, size["length"] + 1, width), rtol=1e-12,
              atol=1e-12)


@P.prop("the score is the path's log-probability; beam_width 0 raises ValueError")
def _(f, ref, size):
    table = _table(size, 4)
    tokens, score = _run(f, table, 1, size["length"], size["width"])
    close(score, _path_score(table, 1, tokens), rtol=1e-12, atol=1e-12)
    close((tokens, score), ref(table, 1, size["length"], size["width"]), rtol=1e-12, atol=1e-12)
    raises(ValueError, f, log_probs=table, start_token=0, length=2, beam_width=0)
