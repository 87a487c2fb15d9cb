"""The isolated executor: sabotage, exits, loops and warnings in learner code, one small run per variant.

Each variant is the released lab without its demo cells, with the answer cell replaced, run by
``IsolatedRunner`` (learner code in a kernel, tests here) and scored by nbgrader's own ``determine_grade``.
"""

from __future__ import annotations

import time

import nbformat
import pytest
from nbgrader.utils import determine_grade, is_grade

from grading_helpers import WRONG_GAE, reference_answer, solution, variant
from rlprep.grading import authoring as A
from rlprep.grading.executor import IsolatedRunner


def grade(nb, **kwargs):
    """{grade_id: (score, max, message)} after running ``nb`` with the solution's trusted cells."""
    runner = IsolatedRunner.trusting(solution(), **{"call_timeout": 5, "cell_timeout": 10, "deadline": 60, **kwargs})
    runner.run(nb)
    out = {}
    for cell in nb.cells:
        if is_grade(cell):
            score, max_score = determine_grade(cell)
            errors = [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"]
            out[cell.metadata.nbgrader.grade_id] = (score, max_score, " ".join(errors), cell.outputs)
    return out


def solved():
    """The learner's notebook with the hidden tests restored (what nbgrader hands the executor)."""
    return variant(reference_answer(), base=solution())


SABOTAGE = {
    "numpy_testing": "import numpy.testing\nnp.testing.assert_allclose = lambda *a, **k: None\n"
                     "numpy.testing.assert_array_equal = lambda *a, **k: None\n",
    "np_allclose": "np.allclose = lambda *a, **k: True\nnp.isclose = lambda *a, **k: True\n"
                   "np.all = lambda *a, **k: True\nnp.abs = lambda x: 0 * x\n",
    "torch_allclose": "import torch\ntorch.allclose = lambda *a, **k: True\n",
    "builtins": "import builtins\nbuiltins.abs = lambda x: 0\nbuiltins.all = lambda *a: True\nbuiltins.AssertionError = Warning\n",
    "assert_helpers": "import rlprep.grading.asserts as A\nA.assert_close = lambda *a, **k: None\n"
                      "A.check = A.assert_shape = A.assert_float_array = lambda *a, **k: None\n"
                      "assert_close = A.assert_close\n",
    "rigged_eq": "class Anything(np.ndarray):\n    def __eq__(self, other):\n        return True\n"
                 "    __ne__ = lambda self, other: False\n"
                 "def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):\n"
                 "    z = np.zeros(len(rewards)).view(Anything)\n    return z, z\n",
    "rigged_object": "class Anything:\n    def __eq__(self, other):\n        return True\n"
                     "    def __array__(self, *a, **k):\n        return np.zeros(3)\n"
                     "def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):\n"
                     "    return Anything(), Anything()\n",
    "sys_exit_in_call": "import sys\ndef compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):\n"
                        "    sys.exit(0)\n",
}


@pytest.mark.parametrize("name", sorted(SABOTAGE))
def test_sabotage_earns_nothing(name):
    src = SABOTAGE[name] if "def compute_gae" in SABOTAGE[name] else SABOTAGE[name] + WRONG_GAE
    results = grade(variant(src, base=solution()))
    assert results and all(score == 0 for score, *_ in results.values()), \
        {k: v[:3] for k, v in results.items()}


def test_os_exit_in_the_answer_cell_earns_nothing_and_grading_finishes():
    # a correct function, then os._exit: the cell killed the kernel, so it is not replayed
    src = reference_answer() + "\nimport os\nos._exit(0)\n"
    results = grade(variant(src, base=solution()))
    assert all(score == 0 for score, *_ in results.values())
    assert "compute_gae" in results["test_gae_by_hand"][2]


def test_kernel_death_in_one_call_is_contained():
    # correct except when T == 5 (the visible shape test), where it ends the kernel process
    src = reference_answer().replace('    """\n    rewards = np.asarray',
                                     '    """\n    if len(rewards) == 5:\n        import os\n        os._exit(1)\n'
                                     '    rewards = np.asarray', 1)
    assert "os._exit" in src
    results = grade(variant(src, base=solution()))
    assert results["test_gae_shape_dtype"][0] == 0
    assert "ended the kernel" in results["test_gae_shape_dtype"][2]
    others = {k: v for k, v in results.items() if k != "test_gae_shape_dtype"}
    assert all(score == mx for score, mx, *_ in others.values()), {k: v[:3] for k, v in others.items()}


def test_reference_gets_full_marks_and_a_warning_costs_nothing():
    src = reference_answer().replace('    """\n    rewards = np.asarray',
                                     '    """\n    import sys, warnings\n    warnings.warn("careful")\n'
                                     '    print("stderr noise", file=sys.stderr)\n    print("hello from the learner")\n'
                                     '    rewards = np.asarray', 1)
    results = grade(variant(src, base=solution()))
    assert all(score == mx for score, mx, *_ in results.values()), {k: v[:3] for k, v in results.items()}
    outputs = results["test_gae_by_hand"][3]
    assert not [o for o in outputs if o.get("name") == "stderr"]
    assert any("hello from the learner" in o.get("text", "") for o in outputs)  # stdout is forwarded


def test_infinite_loop_in_the_function_is_bounded():
    src = "def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):\n    while True:\n        pass\n"
    t0 = time.monotonic()
    # Six test cells each lose >= 1 s to the call timeout, so a 4 s deadline (counted from a ready kernel)
    # always cuts the last ones short, whatever the machine's speed.
    results = grade(variant(src, base=solution()), call_timeout=1, deadline=4)
    elapsed = time.monotonic() - t0
    assert all(score == 0 for score, *_ in results.values())
    assert "did not return within 1 s" in results["test_gae_by_hand"][2]
    assert any("4 s limit" in v[2] for v in results.values())  # the overall deadline cut the rest short
    assert elapsed < 4 + 15  # deadline + kernel start/stop and one interrupt, on a shared 2-core machine


def test_infinite_loop_in_a_learner_cell_times_out_and_grading_continues():
    loop = nbformat.v4.new_code_cell("while True:\n    pass", id="my-loop")
    nb = variant(reference_answer(), base=solution(), extra_cells=[loop])
    results = grade(nb, cell_timeout=1)
    assert all(score == mx for score, mx, *_ in results.values())
    loop_cell = next(c for c in nb.cells if c.id == "my-loop")
    assert [o.ename for o in loop_cell.outputs if o.output_type == "error"][-1] == "CellTimeout"


def test_value_and_grad_through_the_proxy():
    pytest.importorskip("torch")
    nb = A.notebook([
        A.setup("setup", "import torch\nfrom rlprep.grading.asserts import assert_close, value_and_grad"),
        A.answer("ans", "rlprep.algos.gae:compute_gae"),  # replaced below: any answer cell works
        A.test("grad", 1, """
            value, grads = value_and_grad(sq_loss, wrt=("w",), x=torch.tensor([1.0, 2.0]), w=torch.tensor([3.0, 4.0]))
            assert_close(value, 73.0, "loss value")
            assert_close(grads["w"], [6.0, 32.0], "gradient wrt w")
            """),
    ])
    nb.cells[1].source = "def sq_loss(x, w):\n    torch.allclose = lambda *a, **k: True\n    return ((x * w) ** 2).sum()"
    runner = IsolatedRunner.trusting(nb, call_timeout=10, deadline=60)
    runner.run(nb)
    assert determine_grade(nb.cells[2]) == (1.0, 1.0), nb.cells[2].outputs


def test_demo_cells_are_skipped():
    nb = variant(reference_answer(), base=solution(), drop_demo=False)
    IsolatedRunner.trusting(solution(), deadline=60).run(nb)
    demos = [c for c in nb.cells if c.get("metadata", {}).get("rlprep", {}).get("role") == "demo"]
    assert demos and all("skipped during grading" in c.outputs[0].text for c in demos)


def test_a_second_kernel_that_fails_to_start_in_its_thread_is_started_again(monkeypatch):
    """On a loaded machine K2 (the kernel that runs the hidden parts) can miss its start-up answer in the thread that
    prepares it; grading then starts it again in the grader's thread and every test still runs: full marks."""
    import threading

    from rlprep.grading.kernel import LearnerKernel

    start, failed = LearnerKernel.start, []

    def flaky_start(self):
        if threading.current_thread().name == "rlprep-second-kernel" and not failed:
            failed.append(True)
            raise RuntimeError("Kernel didn't respond in 60 seconds")
        return start(self)

    monkeypatch.setattr(LearnerKernel, "start", flaky_start)
    out = grade(solved())
    assert failed, "the second kernel never started in its thread: this test no longer exercises the fallback"
    assert out and all(score == max_score for score, max_score, *_ in out.values()), out
