"""Attacks on the value format (``rlprep.grading.wire``): one stored array referenced many times, declared in a wider
dtype, so that decoding it in the grader multiplies its size; and the limits that stop it.

The kernel writes whatever tree and arrays it likes (the answer cell rebinds ``wire.encode``), so each check here
is on the grader's side: decoding, never encoding.
"""

from __future__ import annotations

import numpy as np
import pytest
from harness import ZEROS_GAE, grade, submission

from rlprep.grading import wire

LIMIT_MB = 600  # a lab01 grade peaks near 250 MB; today's decoder reaches ~1 GB on the attack below


def test_one_array_referenced_many_times_as_complex128_is_refused_without_a_copy_each(tmp_path, env):
    # 16 MiB of float32 stored once, referenced 12 times as a complex128 tensor: decoding each reference as a
    # fresh up-cast copy costs 12 x 64 MiB in the grader (the 8 MB x 8 references reached 1.43 GB).
    answer = ZEROS_GAE + '''
import numpy as np
import rlprep.grading.wire as wire

_big = np.zeros(4 * 2**20, dtype=np.float32)

def encode(obj):
    node = {"t": "tensor", "dtype": "complex128", "k": "a0", "requires_grad": False}
    return {"t": "list", "items": [node] * 12}, {"a0": _big}

wire.encode = encode
'''
    graded = grade(submission(tmp_path, answer), env)
    assert graded.score == 0, graded.report
    assert graded.peak_rss_mb < LIMIT_MB, f"grader peak RSS {graded.peak_rss_mb:.0f} MB"
    assert "complex128" in graded.messages()["test_gae_by_hand"], graded.messages()


# -- the decoder's rules, one each (milliseconds) ----------------------------------------------------------------
def test_each_array_key_is_decoded_once_per_message():
    torch = pytest.importorskip("torch")
    arrays = {"a0": np.arange(6, dtype=np.float32).reshape(2, 3)}
    tensor = {"t": "tensor", "dtype": "float32", "k": "a0"}
    array = {"t": "ndarray", "k": "a0"}
    back = wire.decode({"t": "list", "items": [tensor, tensor, array, array]}, arrays)
    assert back[0] is back[1] and back[2] is back[3]  # one object per key and kind, not a copy per reference
    assert isinstance(back[0], torch.Tensor) and back[0].dtype == torch.float32
    # the same key with another layout or requires_grad is another value (decoded once too)
    grad = dict(tensor, requires_grad=True)
    back = wire.decode({"t": "list", "items": [tensor, grad, grad]}, arrays)
    assert back[1] is back[2] and back[0] is not back[1] and back[1].requires_grad and not back[0].requires_grad


@pytest.mark.parametrize("declared, stored", [
    ("complex128", np.float32), ("float64", np.float32), ("float32", np.float64), ("int64", np.int32),
    ("complex64", np.float32), ("float64", np.int64), ("bool", np.uint8), ("bfloat16", np.float64),
])
def test_a_tensor_is_never_converted_to_another_dtype_than_the_one_stored(declared, stored):
    pytest.importorskip("torch")
    arrays = {"a0": np.zeros(3, dtype=stored)}
    with pytest.raises(wire.WireError, match="dtype"):
        wire.decode({"t": "tensor", "dtype": declared, "k": "a0"}, arrays)


def test_16_bit_tensors_still_cross_stored_as_float32():
    """numpy has no bfloat16: encode stores 16-bit floats as float32 and decode narrows them back (never wider)."""
    torch = pytest.importorskip("torch")
    for dtype in (torch.bfloat16, torch.float16):
        x = torch.tensor([1.5, -2.0], dtype=dtype)
        back = wire.decode(*wire.encode(x))
        assert back.dtype == dtype and torch.equal(back, x)


def test_the_total_decoded_size_is_capped_after_conversion(monkeypatch):
    """Distinct views of one key (layouts, requires_grad) each cost a copy; their sum is capped."""
    pytest.importorskip("torch")
    arrays = {"a0": np.zeros((64, 64), dtype=np.float32)}  # 16 KiB
    monkeypatch.setattr(wire, "MAX_DECODED_BYTES", 40 * 1024)
    views = [{"t": "tensor", "dtype": "float32", "k": "a0", "perm": perm, "requires_grad": grad}
             for perm in ([0, 1], [1, 0]) for grad in (False, True)]  # four copies: 64 KiB
    assert len(wire.decode({"t": "list", "items": views[:2]}, arrays)) == 2  # 32 KiB: within the cap
    with pytest.raises(wire.WireError, match="decoded"):
        wire.decode({"t": "list", "items": views}, arrays)


def test_a_numpy_scalar_node_must_hold_a_0_d_array():
    arrays = {"a0": np.zeros(1000)}
    with pytest.raises(wire.WireError):
        wire.decode({"t": "npscalar", "k": "a0"}, arrays)
    assert wire.decode({"t": "npscalar", "k": "a0"}, {"a0": np.array(2.5)}) == 2.5


# -- namedtuples: honest values, sent as plain tuples ------------------------------------------------------------
def test_a_namedtuple_crosses_as_a_plain_tuple():
    from collections import namedtuple
    from typing import NamedTuple

    GAE = namedtuple("GAE", "advantages returns")

    class Typed(NamedTuple):
        advantages: np.ndarray
        returns: np.ndarray

        def total(self):  # an ordinary method: harmless, never called
            return self.advantages.sum()

    for value in (GAE(np.ones(2), np.zeros(2)), Typed(np.ones(2), np.zeros(2))):
        back = wire.decode(*wire.encode(value))
        assert type(back) is tuple and len(back) == 2
        assert np.array_equal(back[0], np.ones(2)) and np.array_equal(back[1], np.zeros(2))


def test_tuple_subclasses_with_rigged_behaviour_are_still_refused():
    from collections import namedtuple

    class Rigged(tuple):
        def __eq__(self, other):
            return True

    class RiggedNamed(namedtuple("P", "a b")):  # a subclass of a namedtuple
        def __eq__(self, other):
            return True

    class IterLies(tuple):
        _fields = ("a", "b")

        def __iter__(self):
            return iter((1, 2))

    Overridden = type("Overridden", (tuple,), {"_fields": ("a", "b"), "__len__": lambda self: 0})
    for bad in (Rigged((1, 2)), RiggedNamed(1, 2), IterLies((1, 2)), Overridden((1, 2))):
        with pytest.raises(wire.WireError):
            wire.encode(bad)
