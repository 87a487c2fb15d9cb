"""Attacks that carry a hidden test's inputs out through what the learner's code shows *after* a hidden call.

The learner's ``compute_gae`` computes honestly (so every test passes) but remembers the inputs of every call: in a
global, or in a file of the kernel's scratch space. Later, something the grader shows prints them: a learner cell
placed after a test (labs interleave answer cells and test cells), a trailing cell, or a later test's visible call
(its print is forwarded, its exception message and the shape it returns are quoted). Whatever reaches a cell's
outputs reaches the feedback HTML and formgrader. No key of a hidden-only input may appear anywhere in the graded
notebook, and what a learner cell prints of its own still shows.
"""

from __future__ import annotations

import copy

import nbformat
import numpy as np
import pytest
from lab_grading import ROOT, plain_reference

from rlprep.algos.gae import compute_gae as reference_gae
from rlprep.grading.asserts import begin_test
from rlprep.grading.executor import IsolatedRunner, split_hidden
from rlprep.grading.templating import rendered_solution


def key(rewards) -> str:
    """How the attacks spell a call's input: its first four rewards."""
    return "KEY[" + ",".join(f"{float(x):.3f}" for x in np.ravel(np.asarray(rewards, dtype=float))[:4]) + "]"


KEY_SOURCE = '''
import numpy as _np
def _key(rewards):
    return "KEY[" + ",".join(f"{float(x):.3f}" for x in _np.ravel(_np.asarray(rewards, dtype=float))[:4]) + "]"
SEEN = []
'''


def hidden_only_keys() -> set[str]:
    """Keys of the rewards lab01's hidden parts pass and no visible part does (the tests run here, on the
    reference)."""
    solution = rendered_solution("lab01_gae", ROOT)
    seen = {True: set(), False: set()}
    phase = {"hidden": False}

    def recorder(rewards, *args, **kwargs):
        seen[phase["hidden"]].add(key(rewards))
        return reference_gae(rewards, *args, **kwargs)

    setup: dict = {}
    for cell in solution.cells:
        nbg = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not nbg.get("locked"):
            continue
        if not nbg.get("grade"):
            exec(cell.source, setup)  # the instructor's setup cell
            continue
        ns = dict(setup, compute_gae=recorder)
        begin_test()
        for part, hidden in split_hidden(cell.source):
            phase["hidden"] = hidden
            exec(part, ns)  # the instructor's test cell
    found = seen[True] - seen[False]
    assert len(found) >= 4, found
    return found


def honest_recorder(channel: str) -> str:
    """An answer cell: the reference ``compute_gae`` under another name, and a ``compute_gae`` that records each
    call's key, runs ``channel`` (which may show what it recorded), and returns the honest result."""
    body = plain_reference("rlprep.algos.gae:compute_gae").replace("def compute_gae(", "def _honest(", 1)
    return (KEY_SOURCE + body + "\n\ndef compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):\n"
            "    SEEN.append(_key(rewards))\n" + "".join(f"    {line}\n" for line in channel.splitlines())
            + "    return _honest(rewards, values, dones, last_value, gamma=gamma, lam=lam)\n")


def graded(answer: str, after_each_test: str = "", trailing: str = ""):
    """lab01's notebook (demo cells dropped) with ``answer`` in its answer cell, the learner cell ``after_each_test``
    after every test cell and ``trailing`` at the end, graded by the runner: the notebook nbgrader writes."""
    solution = rendered_solution("lab01_gae", ROOT)
    nb = copy.deepcopy(solution)
    cells = []
    for cell in nb.cells:
        meta = cell.get("metadata", {})
        if meta.get("rlprep", {}).get("role") == "demo":
            continue
        if meta.get("rlprep", {}).get("role") == "answer":
            cell.source = answer
        cells.append(cell)
        if after_each_test and meta.get("nbgrader", {}).get("grade"):
            cells.append(nbformat.v4.new_code_cell(after_each_test))
    if trailing:
        cells.append(nbformat.v4.new_code_cell(trailing))
    nb.cells = cells
    IsolatedRunner.trusting(solution, call_timeout=20, cell_timeout=30, deadline=120).run(nb)
    return nb


def everything_shown(nb) -> str:
    parts = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            parts += [str(o.get("text", "")), str(o.get("ename", "")), str(o.get("evalue", "")),
                      "\n".join(o.get("traceback", [])), str(o.get("data", ""))]
    return "\n".join(parts)


def score(nb) -> tuple[int, int]:
    tests = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    return sum(not any(o.output_type == "error" for o in c.outputs) for c in tests), len(tests)


@pytest.fixture(scope="module")
def hidden_keys():
    return hidden_only_keys()


def leaked(nb, hidden_keys) -> set[str]:
    shown = everything_shown(nb)
    return {k for k in hidden_keys if k in shown}


def test_a_learner_cell_after_each_test_cannot_print_what_a_hidden_call_passed(hidden_keys):
    nb = graded(honest_recorder(""), after_each_test="print('MINE', SEEN)", trailing="print('MINE-END', SEEN)")
    assert leaked(nb, hidden_keys) == set()
    passed, total = score(nb)
    assert passed == total, everything_shown(nb)[-3000:]  # the hidden parts still ran on the learner's function
    shown = everything_shown(nb)
    assert shown.count("MINE ") >= 6 and "MINE-END" in shown  # the learner's own output still shows


def test_a_file_in_the_kernels_scratch_space_does_not_carry_hidden_inputs_out(hidden_keys):
    channel = "open('/tmp/seen.txt', 'a').write(_key(rewards) + '\\n')"
    nb = graded(honest_recorder(channel), trailing="import os\nprint(open('/tmp/seen.txt').read() "
                                                   "if os.path.exists('/tmp/seen.txt') else 'none')")
    assert leaked(nb, hidden_keys) == set()


@pytest.mark.parametrize("channel", [
    "print('SEEN', SEEN)",  # a later visible call's output is forwarded
    "if len(SEEN) > 3:\n    raise ValueError(str(SEEN))",  # a later visible part quotes the learner's message
], ids=["forwarded-print", "exception-message"])
def test_a_later_visible_call_cannot_show_what_an_earlier_hidden_call_passed(hidden_keys, channel):
    nb = graded(honest_recorder(channel))
    assert leaked(nb, hidden_keys) == set()


def first_reward_as_length(k: str) -> int:
    return int(round(abs(float(k[4:-1].split(",")[0])) * 1000))


def test_a_later_visible_check_cannot_quote_a_hidden_input_as_the_shape_it_got(hidden_keys):
    # From the third call on, return arrays as long as 1000 x |first reward| of the second call: in one kernel
    # that is the first hidden call, and the next visible assert_shape says "shape (333,), expected (5,)".
    channel = ("if len(SEEN) >= 3:\n"
               "    n = int(round(abs(float(SEEN[1][4:-1].split(',')[0])) * 1000))\n"
               "    return _np.zeros(n), _np.zeros(n)")
    nb = graded(honest_recorder(channel))
    shown = everything_shown(nb)
    lengths = {first_reward_as_length(k) for k in hidden_keys} - {0}
    assert "shape (" in shown  # the channel is open: the visible checks do quote the shape
    assert {n for n in lengths if f"shape ({n},)" in shown} == set()
