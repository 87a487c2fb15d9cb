"""Hidden properties of top_k, compared with heapq.nlargest."""

import heapq

from rlprep.coding.testkit import Properties, close, raises, randint, randn

P = Properties()


def _stream(size, salt, ints=False, n=None):
    n = n or size["n"]
    return randint(size, 0, 10, n, salt=salt).tolist() if ints else randn(size, n, salt=salt).tolist()


def examples(size):
    return [dict(stream=[5, 1, 9, 3, 7], k=2), dict(stream=[2, 2, 1, 2], k=size["k"])]


@P.prop("matches heapq.nlargest on a random stream", library="heapq.nlargest")
def _(f, ref, size):
    s = _stream(size, 1)
    close(list(f(stream=s, k=size["k"])), heapq.nlargest(size["k"], s), rtol=0, atol=0)


@P.prop("keeps duplicates")
def _(f, ref, size):
    s = _stream(size, 2, ints=True)
    close(list(f(stream=s, k=size["k"])), heapq.nlargest(size["k"], s))


@P.prop("k larger than the stream returns everything, sorted; k = 0 returns []")
def _(f, ref, size):
    s = _stream(size, 3, n=min(size["n"], 7))
    close(list(f(stream=s, k=len(s) + 5)), sorted(s, reverse=True), rtol=0, atol=0)
    close(list(f(stream=s, k=0)), [])
    close(list(f(stream=[], k=3)), [])


@P.prop("order of arrival does not matter: sorted ascending, descending, shuffled")
def _(f, ref, size):
    s = _stream(size, 4)
    for order in (sorted(s), sorted(s, reverse=True), s[::-1]):
        close(list(f(stream=order, k=size["k"])), heapq.nlargest(size["k"], s), rtol=0, atol=0)


@P.prop("raises ValueError for a negative k, and answers a valid call")
def _(f, ref, size):
    s = _stream(size, 5)
    raises(ValueError, f, stream=s, k=-1)
    close(list(f(stream=s, k=1)), [max(s)], rtol=0, atol=0)
