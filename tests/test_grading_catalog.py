"""The lab01 tests themselves: every catalogued bug loses points, every correct variant gets full marks."""

from __future__ import annotations

import numpy as np
import pytest

from catalog.lab01_gae import ALTERNATIVES, BUGS
from grading_helpers import solution
from rlprep.algos.gae import compute_gae
from rlprep.grading import asserts, wire
from rlprep.grading.executor import score_in_process


@pytest.fixture(scope="module")
def lab():
    return solution()


def test_catalog_has_at_least_five_bugs():
    assert len(BUGS) >= 5


@pytest.mark.parametrize("name", sorted(BUGS))
def test_each_bug_loses_points(lab, name):
    results = score_in_process(lab, {"compute_gae": BUGS[name]})
    lost = {gid: msg for gid, (pts, mx, msg) in results.items() if pts < mx}
    assert lost, f"bug {name} got full marks"
    # failures name a property and never print the expected arrays
    for msg in lost.values():
        assert "np.array" not in msg and "[" not in msg.split(":", 1)[-1]


@pytest.mark.parametrize("name", sorted(ALTERNATIVES) + ["reference"])
def test_correct_variants_get_full_marks(lab, name):
    fn = compute_gae if name == "reference" else ALTERNATIVES[name]
    results = score_in_process(lab, {"compute_gae": fn})
    assert all(pts == mx for pts, mx, _ in results.values()), results


def test_episode_end_bug_gets_the_property_message(lab):
    results = score_in_process(lab, {"compute_gae": BUGS["no_reset_at_episode_end"]})
    # the visible time-limit example catches it first; the hidden three-episode rollout names the same property
    assert "nothing may be carried across an episode end" in results["test_gae_episode_end"][2]


def test_wire_round_trip_and_refusals(tmp_path):
    torch = pytest.importorskip("torch")
    value = {"a": np.arange(3.0), "b": (1, 2.5, "x", None, True), "t": torch.tensor([1.0, 2.0]),
             "s": np.float32(1.5)}
    wire.write(tmp_path, "v", value)
    back = wire.read(tmp_path, "v")
    assert np.array_equal(back["a"], value["a"]) and back["b"] == value["b"]
    assert torch.equal(back["t"], value["t"]) and back["s"] == np.float32(1.5)

    class Rigged:
        def __eq__(self, other):
            return True

    class RiggedArray(np.ndarray):
        def __eq__(self, other):
            return True

    for bad in (Rigged(), np.zeros(3).view(RiggedArray), np.array([object()]), [1, {2: 3}]):
        with pytest.raises(wire.WireError):
            wire.encode(bad)


def test_assert_close_messages_hide_expected_values():
    with pytest.raises(asserts.PropertyFailed) as err:
        asserts.assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.123456]), "returns wrong")
    assert "2.123456" not in str(err.value) and str(err.value).startswith("returns wrong")
    with pytest.raises(asserts.PropertyFailed, match="wrong shape"):
        asserts.assert_close(np.zeros(3), np.zeros(2), "x")
    with pytest.raises(asserts.PropertyFailed, match="NaN"):
        asserts.assert_close(np.array([np.nan]), np.zeros(1), "x")
    asserts.assert_close(np.array([1.0, 2.0]), [1.0, 2.0], "ok")


def test_value_and_grad_locally():
    torch = pytest.importorskip("torch")

    def loss(x, w):
        return ((x * w) ** 2).sum()

    value, grads = asserts.value_and_grad(loss, wrt=("w",), x=torch.tensor([1.0, 2.0]), w=torch.tensor([3.0, 4.0]))
    assert float(value) == 73.0
    assert torch.allclose(grads["w"], torch.tensor([6.0, 32.0]))  # d/dw (xw)^2 = 2 x^2 w


@pytest.mark.parametrize("name, only", [
    ("no_reset_at_episode_end", {"test_gae_episode_end"}),
    ("dones_shifted", {"test_gae_episode_end", "test_gae_bootstrap"}),
    ("missing_lambda", {"test_gae_by_hand", "test_gae_episode_end", "test_gae_bootstrap", "test_gae_lambda_limits",
                        "test_gae_gamma_lambda", "test_gae_shape_dtype"}),  # the float32 shape case runs the defaults
])
def test_a_bug_fails_the_tests_that_name_it(lab, name, only):
    """A done-mask bug must not also fail the lambda and gamma tests (their hints would mislead)."""
    results = score_in_process(lab, {"compute_gae": BUGS[name]})
    failed = {gid for gid, (pts, mx, _) in results.items() if pts < mx}
    assert failed and failed <= only, failed


def test_wire_keeps_a_transposed_tensor_transposed_and_refuses_a_forged_layout():
    """A learner's function must meet x.T as a non-contiguous view (where .view(-1) raises), as in its own kernel."""
    torch = pytest.importorskip("torch")
    x = torch.arange(24.0).reshape(2, 3, 4)
    for view in (x.transpose(0, 1), x.permute(2, 0, 1), torch.ones(3, 5).T.requires_grad_(True)):
        tree, arrays = wire.encode(view)
        back = wire.decode(tree, arrays)
        assert back.shape == view.shape and back.stride() == view.stride() and not back.is_contiguous()
        assert torch.equal(back.detach(), view.detach()) and back.requires_grad == view.requires_grad
    tree, arrays = wire.encode(x[:, ::2])  # a strided slice is no permutation: it crosses as a contiguous copy
    assert wire.decode(tree, arrays).is_contiguous()
    tree, arrays = wire.encode(x.transpose(0, 1))
    for forged in ([0, 0, 1], [0, 1], "012", [0, 1, 2.0], ["a", 0, 1]):  # mixed types must not raise TypeError
        with pytest.raises(wire.WireError, match="layout"):
            wire.decode(dict(tree, perm=forged), arrays)


def test_no_error_turns_an_exception_into_the_named_property():
    assert asserts.no_error("p", lambda a, b: a + b, 1, b=2) == 3

    def view_flat(x):
        raise RuntimeError("view size is not compatible with input tensor's size and stride")

    with pytest.raises(asserts.PropertyFailed, match="^must accept x.T: it raised RuntimeError$"):
        asserts.no_error("must accept x.T", view_flat, None)
