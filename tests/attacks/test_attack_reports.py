"""Attacks on what a grade reports: a learner function that puts a hidden test's inputs into its exception (message or
type name) or prints them, so that the report or the feedback shows them."""

from __future__ import annotations

from lab_grading import error, graded_cells, passed, plain_reference, shown

HIDDEN_ONLY = ("test_gae_bootstrap", "test_gae_lambda_limits", "test_gae_gamma_lambda")

RAISE_INPUTS = '''
def compute_gae(*a, **k):
    print("PRINTED-" + repr(a) + repr(k))
    digits = "_".join(str(int(abs(x) * 1000)) for x in list(a[0])[:6])
    raise type("Leak_" + digits, (ValueError,), {})("LEAKED-" + repr(a) + repr(k))
'''


def test_hidden_parts_name_the_exception_type_but_never_the_learners_message(tmp_path):
    cells = graded_cells("lab01_gae", {"compute_gae": RAISE_INPUTS})
    for gid in HIDDEN_ONLY:
        text = shown(cells[gid])
        assert not passed(cells[gid])
        assert "LEAKED" not in text and "Leak_" not in text and "PRINTED" not in text, (gid, text)
        assert "ValueError" in error(cells[gid]), error(cells[gid])  # the type it derives from, named by the grader
    # a visible part may show the learner's own message: its inputs are in the released notebook anyway
    assert "LEAKED-" in error(cells["test_gae_by_hand"])


def test_what_a_function_prints_during_a_hidden_call_is_not_forwarded(tmp_path):
    src = plain_reference("rlprep.algos.gae:compute_gae")
    head = "def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):\n"
    assert src.startswith(head)
    doc_end = src.index('"""', src.index('"""') + 3) + 3  # print after the docstring
    src = src[:doc_end] + "\n    print('PRINTED', [float(r) for r in rewards])" + src[doc_end:]
    cells = graded_cells("lab01_gae", {"compute_gae": src})
    assert all(passed(c) for c in cells.values()), {gid: error(c) for gid, c in cells.items()}
    for gid in HIDDEN_ONLY:
        assert "PRINTED" not in shown(cells[gid]), shown(cells[gid])
    # the visible part's call prints the released inputs; its hidden part's call prints nothing that reaches us
    assert shown(cells["test_gae_by_hand"]).count("PRINTED") == 1
    assert "PRINTED [1.0, 0.0, 2.0]" in shown(cells["test_gae_by_hand"])
