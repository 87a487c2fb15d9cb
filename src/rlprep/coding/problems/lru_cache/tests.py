"""Hidden properties of LRUCache, driven through run_lru; hits and misses compared with functools.lru_cache."""

import functools

from rlprep.coding.testkit import Properties, close, expect, raises, randint

P = Properties()

DRIVER = '''
def run_lru(capacity, ops):
    """Run ops (["get", key] or ["put", key, value]) on LRUCache(capacity); each get's value, None for a put."""
    cache = LRUCache(capacity)
    out = []
    for op in ops:
        if op[0] == "get":
            out.append(cache.get(op[1]))
        else:
            out.append(cache.put(op[1], op[2]))
    return out
'''


def _trace(size, salt, n=None):
    n = n or size["n_ops"]
    kinds = randint(size, 0, 2, n, salt=salt).tolist()
    keys = randint(size, 0, size["keys"], n, salt=salt + 1).tolist()
    vals = randint(size, 0, 100, n, salt=salt + 2).tolist()
    return [["get", k] if kind == 0 else ["put", k, v] for kind, k, v in zip(kinds, keys, vals)]


def examples(size):
    return [dict(capacity=2, ops=[["put", 1, 10], ["put", 2, 20], ["get", 1], ["put", 3, 30], ["get", 2], ["get", 3],
                                  ["get", 1]]),
            dict(capacity=size["capacity"], ops=_trace(size, 0, n=8))]


@P.prop("answers a random trace of gets and puts like the reference")
def _(f, ref, size):
    ops = _trace(size, 1)
    close(f(capacity=size["capacity"], ops=ops), ref(size["capacity"], ops))


@P.prop("hits and misses match functools.lru_cache on an access trace", library="functools.lru_cache")
def _(f, ref, size):
    keys = randint(size, 0, size["keys"] + 2, size["n_ops"], salt=2).tolist()
    ops = []
    for k in keys:  # an access: look up; on a miss, insert (what a memoising cache does)
        ops += [["get", k], ["put", k, 1000 + k]]
    out = f(capacity=size["capacity"], ops=ops)
    expect(isinstance(out, list) and len(out) == len(ops), "run_lru must return one item per op")
    hits = [out[2 * i] != -1 for i in range(len(keys))]
    seen = []

    @functools.lru_cache(maxsize=size["capacity"])
    def load(key):
        seen.append(key)
        return 1000 + key

    lib_hits = []
    for k in keys:
        before = len(seen)
        load(k)
        lib_hits.append(len(seen) == before)
    close(hits, lib_hits)
    close(out, ref(size["capacity"], ops))


@P.prop("a get makes its key the most recently used")
def _(f, ref, size):
    c = size["capacity"]
    ops = [["put", k, k] for k in range(c)] + [["get", 0], ["put", 99, 99]] + [["get", k] for k in range(c)] + [["get", 99]]
    close(f(capacity=c, ops=ops), ref(c, ops))


@P.prop("updating an existing key refreshes it and evicts nothing")
def _(f, ref, size):
    c = size["capacity"]
    ops = [["put", k, k] for k in range(c)] + [["put", 0, 50], ["put", 77, 7]] + [["get", k] for k in range(c)]
    ops += [["get", 77]]
    close(f(capacity=c, ops=ops), ref(c, ops))


@P.prop("a miss returns -1 and changes nothing")
def _(f, ref, size):
    c = size["capacity"]
    ops = [["get", 5], ["put", 1, 1]] + [["get", 1000 + k] for k in range(3)] + [["get", 1]]
    close(f(capacity=c, ops=ops), ref(c, ops))


@P.prop("evicts exactly at capacity; capacity < 1 raises ValueError")
def _(f, ref, size):
    c = size["capacity"]
    ops = [["put", k, 10 * k] for k in range(c + 2)] + [["get", k] for k in range(c + 2)]
    close(f(capacity=c, ops=ops), ref(c, ops))
    raises(ValueError, f, capacity=0, ops=[["get", 1]])
