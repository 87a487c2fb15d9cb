"""Attacks on the test cells themselves: delete them and rebind the helpers; probe hidden values."""

from __future__ import annotations

from harness import ZEROS_GAE, grade, submission

from grading_helpers import reference_answer


def test_deleted_test_cells_run_their_trusted_source_in_the_grader(tmp_path, env):
    # Every test cell deleted, then the helpers the tests call rebound to no-ops in the kernel's namespace.
    # nbgrader restores the deleted cells with a "This cell was missing" header; they must still run the
    # gradebook's source in the grader, not the restored text in the learner's kernel.
    rebind = """
check = assert_close = assert_shape = assert_float_array = lambda *a, **k: None
expect_tuple = lambda result, n, prop: tuple(result)
"""
    graded = grade(submission(tmp_path, ZEROS_GAE + rebind, drop_tests=True), env)
    assert graded.score == 0, graded.report
    assert graded.report["max_score"] == 10


def test_hidden_failures_name_the_property_not_the_size_of_the_error(tmp_path, env):
    # An answer off by 0.001 everywhere: if a hidden check printed "max abs error 0.001", a learner could bisect
    # the hidden expected values one run at a time.
    off = reference_answer().replace("    return advantages, returns", "    return advantages + 1e-3, returns + 1e-3")
    assert off != reference_answer()
    messages = grade(submission(tmp_path, off), env).messages()
    hidden_only = ["test_gae_bootstrap", "test_gae_lambda_limits", "test_gae_gamma_lambda"]
    for gid in hidden_only:
        assert messages[gid].startswith("PropertyFailed: "), messages
        assert "error" not in messages[gid].removeprefix("PropertyFailed: "), messages[gid]
    # the visible part of a test may still say how far off it is (episode_end opens with a worked time-limit example)
    assert "max abs error" in messages["test_gae_by_hand"]
    assert "worked by hand" in messages["test_gae_episode_end"] and "max abs error" in messages["test_gae_episode_end"]
