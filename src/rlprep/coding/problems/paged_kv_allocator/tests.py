"""Hidden properties of BlockAllocator, driven through run_allocator."""

from rlprep.coding.testkit import Properties, close, expect, randint

P = Properties()

DRIVER = '''
def run_allocator(num_blocks, block_size, ops):
    """Run ops (["append", seq, n] or ["free", seq]) on BlockAllocator(num_blocks, block_size); each op's result,
    "OOM" for a RuntimeError and "KeyError" for a KeyError."""
    allocator = BlockAllocator(num_blocks, block_size)
    out = []
    for op in ops:
        try:
            if op[0] == "append":
                out.append([int(b) for b in allocator.append(op[1], op[2])])
            else:
                out.append(int(allocator.free(op[1])))
        except RuntimeError:
            out.append("OOM")
        except KeyError:
            out.append("KeyError")
    return out
'''


def _trace(size, salt):
    kinds = randint(size, 0, 4, size["n_ops"], salt=salt).tolist()
    seqs = randint(size, 0, size["seqs"], size["n_ops"], salt=salt + 1).tolist()
    ns = randint(size, 0, 2 * size["block_size"] + 2, size["n_ops"], salt=salt + 2).tolist()
    return [["free", s] if k == 0 else ["append", s, n] for k, s, n in zip(kinds, seqs, ns)]


def _run(f, nb, bs, ops):
    out = f(num_blocks=nb, block_size=bs, ops=ops)
    expect(isinstance(out, list) and len(out) == len(ops), "run_allocator returns one result per op")
    return out


def examples(size):
    return [dict(num_blocks=4, block_size=2, ops=[["append", 0, 3], ["append", 1, 2], ["append", 0, 1],
                                                  ["append", 0, 1], ["free", 1], ["append", 2, 4]]),
            dict(num_blocks=2, block_size=size["block_size"], ops=[["append", 0, 3 * size["block_size"]], ["free", 7]])]


@P.prop("answers a random trace of appends and frees like the reference")
def _(f, ref, size):
    ops = _trace(size, 1)
    close(_run(f, size["num_blocks"], size["block_size"], ops), ref(size["num_blocks"], size["block_size"], ops))


@P.prop("a sequence of L tokens holds ceil(L / block_size) blocks; a partly filled block is filled first")
def _(f, ref, size):
    bs = size["block_size"]
    ops = [["append", 0, 1]] + [["append", 0, 1] for _ in range(2 * bs)] + [["append", 1, bs], ["append", 1, 0]]
    close(_run(f, 64, bs, ops), ref(64, bs, ops))


@P.prop("running out raises RuntimeError and allocates nothing (the sequence is not created)")
def _(f, ref, size):
    bs, nb = size["block_size"], size["num_blocks"]
    ops = [["append", 0, bs * (nb - 1)], ["append", 1, 2 * bs], ["free", 1], ["append", 1, bs], ["append", 2, 1]]
    close(_run(f, nb, bs, ops), ref(nb, bs, ops))


@P.prop("freed blocks are reused lowest id first")
def _(f, ref, size):
    bs = size["block_size"]
    ops = [["append", s, bs] for s in range(5)] + [["free", 3], ["free", 1], ["append", 9, 2 * bs], ["append", 8, 1]]
    close(_run(f, 8, bs, ops), ref(8, bs, ops))


@P.prop("free forgets the sequence: a second free is a KeyError, a new append starts from zero tokens")
def _(f, ref, size):
    bs = size["block_size"]
    ops = [["append", 0, bs + 1], ["free", 0], ["free", 0], ["append", 0, 1], ["append", 0, bs - 1], ["free", 5]]
    close(_run(f, 6, bs, ops), ref(6, bs, ops))
