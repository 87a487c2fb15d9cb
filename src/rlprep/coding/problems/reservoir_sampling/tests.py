"""Hidden properties of reservoir_sample: the reference on random streams, and the exact k / n inclusion
probability by enumerating every equally likely choice of j."""

import itertools

from rlprep.coding.testkit import Properties, close, expect, raises, rand

P = Properties()


def _uniforms(size, salt, n=None):
    return rand(size, n or size["n"], salt=salt).tolist()


def examples(size):
    return [dict(stream=[10, 20, 30, 40], k=2, uniforms=[0.0, 0.0, 0.5, 0.9]),
            dict(stream=["a", "b"], k=size["k"] + 1, uniforms=[0.3, 0.3])]


@P.prop("matches Algorithm R on a random stream (slot order included)")
def _(f, ref, size):
    stream = list(range(100, 100 + size["n"]))
    u = _uniforms(size, 1)
    close(list(f(stream=stream, k=size["k"], uniforms=u)), ref(stream, size["k"], u))


@P.prop("every item is kept with probability exactly k / n")
def _(f, ref, size):
    n, k = 4, 2  # 3 x 4 = 12 equally likely draws (j_2, j_3): each item is kept in exactly 6
    counts = [0] * n
    combos = list(itertools.product(*[range(i + 1) for i in range(k, n)]))  # each j_i uniform on 0..i
    for js in combos:
        u = [0.0] * k + [(j + 0.5) / (i + 1) for i, j in zip(range(k, n), js)]
        for item in f(stream=list(range(n)), k=k, uniforms=u):
            counts[int(item)] += 1
    close([c / len(combos) for c in counts], [k / n] * n, rtol=1e-12, atol=1e-12)


@P.prop("a stream shorter than k is returned whole; an empty stream gives []")
def _(f, ref, size):
    stream = ["x", "y"]
    expect(list(f(stream=stream, k=size["k"] + 2, uniforms=[0.9, 0.9])) == stream, "all items expected")
    expect(list(f(stream=[], k=size["k"], uniforms=[])) == [], "an empty stream gives []")
    longer, u = list(range(size["k"] + 4)), _uniforms(size, 9, n=size["k"] + 4)
    close(list(f(stream=longer, k=size["k"], uniforms=u)), ref(longer, size["k"], u))


@P.prop("k = 1 keeps the item whose draw lands on slot 0 last; k < 1 raises ValueError")
def _(f, ref, size):
    stream = list(range(10))
    u = [0.0] + [0.99] * 9
    u[6] = 0.0  # item 6 replaces slot 0; later draws miss it
    close(list(f(stream=stream, k=1, uniforms=u)), [6])
    raises(ValueError, f, stream=stream, k=0, uniforms=u)
