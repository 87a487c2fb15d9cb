"""Hidden properties of bpe_merge_step: a worked corpus, ties, overlaps, whole symbols, a sequence of merges."""

from rlprep.coding.testkit import Properties, close, expect, randint

P = Properties()
SENNRICH = {"l o w </w>": 5, "l o w e r </w>": 2, "n e w e s t </w>": 6, "w i d e s t </w>": 3}


def _corpus(size, salt, letters="abcd", n=None):
    n = n or size["words"]
    lens = randint(size, 1, size["max_len"] + 1, n, salt=salt).tolist()
    ids = randint(size, 0, len(letters), sum(lens), salt=salt + 1).tolist()
    counts = randint(size, 1, 6, n, salt=salt + 2).tolist()
    out, i = {}, 0
    for length, c in zip(lens, counts):
        word = " ".join(letters[j] for j in ids[i:i + length])
        i += length
        out[word] = out.get(word, 0) + c
    return out


def _step(f, wc):
    out = f(word_counts=wc)
    expect(isinstance(out, (tuple, list)) and len(out) == 2, "expected (pair, word_counts)")
    pair, new = out
    return (None if pair is None else [str(s) for s in pair]), {str(k): int(v) for k, v in dict(new).items()}


def examples(size):
    return [dict(word_counts={"l o w": 5, "l o w e r": 2, "n e w": 6}), dict(word_counts={"a a a": 1, "b": 2})]


@P.prop("counts pairs weighted by word counts and merges the best (Sennrich's corpus)")
def _(f, ref, size):
    close(_step(f, SENNRICH), ref(SENNRICH))
    close(_step(f, {"x y": 1, "y z": 4, "x y x y": 1}), (["y", "z"], {"x y": 1, "yz": 4, "x y x y": 1}))


@P.prop("breaks ties by the smallest pair")
def _(f, ref, size):
    close(_step(f, {"c d": 2, "a b": 2, "b c": 2}), (["a", "b"], {"c d": 2, "ab": 2, "b c": 2}))


@P.prop("merges left to right without overlaps")
def _(f, ref, size):
    close(_step(f, {"a a a": 4, "a a a a": 1, "b a a": 1}), (["a", "a"], {"aa a": 4, "aa aa": 1, "b aa": 1}))


@P.prop("matches whole symbols only, and adds the counts of words that become equal")
def _(f, ref, size):
    close(_step(f, {"a b c": 2, "a bc b": 1, "ab c": 1, "x a b": 1}),
          (["a", "b"], {"ab c": 3, "a bc b": 1, "x ab": 1}))


@P.prop("a sequence of merges on a random corpus matches the reference, ending with None")
def _(f, ref, size):
    wc, want = _corpus(size, 1), None
    want_wc = dict(wc)
    for _ in range(size["merges"]):
        pair, wc = _step(f, wc)
        want, want_wc = ref(want_wc)
        close(pair, want)
        close(wc, want_wc)
    close(_step(f, {"a": 3, "b": 1}), (None, {"a": 3, "b": 1}))
