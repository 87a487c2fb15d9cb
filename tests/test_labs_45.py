"""lab04_dpo and lab05_grpo: the tests grade what they should, the releases are clean, the demos run in smoke.

- every catalogued bug loses points and every correct alternative gets full marks, run in-process against the
  lab's own test cells (``score_in_process``: milliseconds);
- the reference answers get full marks and the untouched release gets 0 in every graded cell, each through one
  real ``rlprep grade --json`` run (nbgrader + the isolated learner kernel);
- answer cells equal their references, hidden tests (the sources rendered with their fixtures) hold values
  only and never leak into labs/ (tests/test_labs_sources.py compares them with the builders' last output) (labs/ in sync with solutions/ is ``test_grading_release``'s generic check);
- the demo cells execute in the smoke profile with the reference answers injected, and show what they claim.
"""

from __future__ import annotations

import ast
import copy
import json
import math
import re

import nbformat
import pytest

from catalog import lab04_dpo as catalog04
from catalog import lab05_grpo as catalog05
from grading_helpers import ROOT
from rlprep.grading import authoring
from rlprep.grading.executor import hidden_code, score_in_process

LABS = {
    "lab04_dpo": {"catalog": catalog04, "module": "rlprep.algos.dpo", "points": 15, "graded_cells": 10,
                  "functions": ("sequence_logprobs", "dpo_loss")},
    "lab05_grpo": {"catalog": catalog05, "module": "rlprep.algos.grpo", "points": 20, "graded_cells": 11,
                   "functions": ("group_advantages", "kl_k3", "grpo_loss", "diagnose_zero_loss")},
}


def solution_path(lab):
    return ROOT / "solutions" / lab / f"{lab}.ipynb"


def release_path(lab):
    return ROOT / "labs" / lab / f"{lab}.ipynb"


_SOLUTIONS: dict = {}


def solution(lab):
    """The source notebook with its placeholders filled (what the gradebook holds)."""
    from rlprep.grading.templating import rendered_solution

    if lab not in _SOLUTIONS:
        _SOLUTIONS[lab] = rendered_solution(lab, ROOT)
    return _SOLUTIONS[lab]


def references(lab) -> dict:
    import importlib

    module = importlib.import_module(LABS[lab]["module"])
    return {name: getattr(module, name) for name in LABS[lab]["functions"]}


def role(cell):
    return cell.get("metadata", {}).get("rlprep", {}).get("role")


def reference_submission(lab):
    """The released notebook with every answer cell filled in with its reference (what a strong learner saves)."""
    nb = nbformat.read(release_path(lab), as_version=4)
    for cell in nb.cells:
        if role(cell) == "answer":
            src = authoring.reference_source(cell.metadata["rlprep"]["reference"])
            cell.source = src.replace("    ### BEGIN SOLUTION\n", "").replace("\n    ### END SOLUTION", "")
    return nb


# ----------------------------------------------------------------------------------------------- catalogs
CATALOG_CASES = [(lab, name, fn.__name__) for lab, spec in LABS.items()
                 for name, fns in spec["catalog"].BUGS.items() for fn in fns]
ALT_CASES = [(lab, name, fn.__name__) for lab, spec in LABS.items()
             for name, fns in spec["catalog"].ALTERNATIVES.items() for fn in fns]


def _catalog_fn(lab, kind, name, fn_name):
    return next(fn for fn in getattr(LABS[lab]["catalog"], kind)[name] if fn.__name__ == fn_name)


@pytest.mark.parametrize("lab", sorted(LABS))
def test_every_graded_function_has_five_catalogued_bugs(lab):
    bugs = LABS[lab]["catalog"].BUGS
    assert set(bugs) == set(LABS[lab]["functions"])
    assert all(len(fns) >= 5 for fns in bugs.values())


@pytest.mark.parametrize("lab, name, fn_name", CATALOG_CASES)
def test_each_catalogued_bug_loses_points(lab, name, fn_name):
    functions = dict(references(lab), **{name: _catalog_fn(lab, "BUGS", name, fn_name)})
    results = score_in_process(solution(lab), functions)
    lost = {gid: msg for gid, (pts, mx, msg) in results.items() if pts < mx}
    assert lost, f"{fn_name} got full marks"
    for msg in lost.values():  # a property, never the expected values
        assert "torch.tensor" not in msg and "np.array" not in msg and "[" not in msg.split(":", 1)[-1], msg


@pytest.mark.parametrize("lab, name, fn_name", ALT_CASES + [(lab, "reference", "") for lab in sorted(LABS)])
def test_correct_variants_get_full_marks(lab, name, fn_name):
    functions = references(lab)
    if name != "reference":
        functions[name] = _catalog_fn(lab, "ALTERNATIVES", name, fn_name)
    results = score_in_process(solution(lab), functions)
    assert all(pts == mx for pts, mx, _ in results.values()), results
    assert sum(mx for _, mx, _ in results.values()) == LABS[lab]["points"]


def test_failure_messages_name_the_property():
    bug = _catalog_fn("lab05_grpo", "BUGS", "grpo_loss", "grpo_no_stop_gradient")
    results = score_in_process(solution("lab05_grpo"), dict(references("lab05_grpo"), grpo_loss=bug))
    assert "no gradient may flow into logp_old (stop-gradient)" in results["test_grpo_gradient"][2]
    bug = _catalog_fn("lab04_dpo", "BUGS", "dpo_loss", "dpo_reference_added")
    results = score_in_process(solution("lab04_dpo"), dict(references("lab04_dpo"), dpo_loss=bug))
    msg = results["test_dpo_by_hand"][2]
    assert "reference log-probs of chosen and rejected differ" in msg and "max abs error" in msg


# ----------------------------------------------------------------------------------------------- sources
@pytest.mark.parametrize("lab", sorted(LABS))
def test_answer_cells_are_the_references_one_function_each(lab):
    nb = solution(lab)
    answers = [c for c in nb.cells if role(c) == "answer"]
    assert [c.id for c in answers] == list(LABS[lab]["functions"])
    for cell in answers:
        assert cell.source == authoring.reference_source(cell.metadata["rlprep"]["reference"])
        defs = [n for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)]
        assert [d.name for d in defs] == [cell.id]
    assert nb.cells[-1].id == "grade-self" and "grade_here()" in nb.cells[-1].source


@pytest.mark.parametrize("lab", sorted(LABS))
def test_hidden_tests_hold_values_only_and_never_reach_the_release(lab):
    from nbgrader.nbgraderformat import MetadataValidator

    nb = solution(lab)
    MetadataValidator().validate_nb(nb)
    text = release_path(lab).read_text()
    assert "HIDDEN" not in text and "BEGIN SOLUTION" not in text
    banned = (ast.For, ast.While, ast.FunctionDef, ast.Lambda, ast.Import, ast.ImportFrom, ast.ListComp)
    for cell in nb.cells:
        hidden = hidden_code(cell.source)
        if not hidden:
            continue
        assert not [n for n in ast.walk(ast.parse(hidden)) if isinstance(n, banned)], cell.id
        for line in hidden.splitlines():
            assert line.strip() not in text, f"hidden line of {cell.id} leaked into the release"
    released = nbformat.read(release_path(lab), as_version=4)
    assert [c.id for c in released.cells] == [c.id for c in nb.cells]
    assert all(c.get("outputs", []) == [] for c in released.cells if c.cell_type == "code")
    for cell in released.cells:
        if role(cell) == "answer":
            assert cell.source.startswith(f"def {cell.id}(")
            assert cell.source.endswith("    # YOUR CODE HERE\n    raise NotImplementedError()")


# ----------------------------------------------------------------------------------------------- grading end to end
def _grade(path, capsys):
    from rlprep.cli import main

    rc = main(["grade", str(path), "--json"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.filterwarnings("ignore:Object of type")
@pytest.mark.parametrize("lab", sorted(LABS))
def test_reference_gets_full_marks_through_rlprep_grade(lab, tmp_path, capsys, monkeypatch):
    import sys
    import types

    fake = types.ModuleType("rlprep.interview.history")  # do not record into the learner's history
    fake.record_lab_grade = lambda *a, **k: None
    monkeypatch.setitem(sys.modules, "rlprep.interview.history", fake)
    path = tmp_path / f"{lab}.ipynb"
    nbformat.write(reference_submission(lab), path)
    rc, report = _grade(path, capsys)
    assert rc == 0, report
    assert report["lab"] == lab and report["score"] == report["max_score"] == LABS[lab]["points"]
    assert len(report["cells"]) == LABS[lab]["graded_cells"] and all(c["passed"] for c in report["cells"])


@pytest.mark.filterwarnings("ignore:Object of type")
@pytest.mark.parametrize("lab", sorted(LABS))
def test_untouched_release_scores_zero_in_every_cell(lab, tmp_path, capsys):
    path = tmp_path / f"{lab}.ipynb"
    path.write_bytes(release_path(lab).read_bytes())
    rc, report = _grade(path, capsys)
    assert rc == 1 and report["score"] == 0 and len(report["cells"]) == LABS[lab]["graded_cells"]
    assert all(c["points"] == 0 and "NotImplementedError" in c["message"] for c in report["cells"])


# ----------------------------------------------------------------------------------------------- demos (smoke)
def _run_demos(lab, monkeypatch, skip=("grade-self",)):
    """Execute setup, answer (reference) and demo cells in order, as a learner would, with plots off-screen."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.setenv("RLPREP_PROFILE", "smoke")
    monkeypatch.setenv("RLPREP_NO_BAR", "1")
    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    ns: dict = {"__name__": "__main__"}
    figures = []
    for cell in solution(lab).cells:
        if cell.cell_type != "code" or role(cell) not in ("setup", "answer", "demo") or cell.id in skip:
            continue
        exec(compile(cell.source, f"<{lab}:{cell.id}>", "exec"), ns)  # our own notebook
        figures += [plt.figure(n) for n in plt.get_fignums()]
        plt.close("all")
    return ns, figures


def _labelled(fig):
    return all(ax.get_xlabel() and ax.get_ylabel() and ax.get_title() for ax in fig.axes)


def test_lab04_demos_run_in_smoke(monkeypatch, capsys):
    ns, figures = _run_demos("lab04_dpo", monkeypatch)
    rows = ns["rows"]
    assert [r["beta"] for r in rows] == [0.01, 0.05, 0.1, 0.5, 1.0]
    assert all(math.isfinite(r["kl"]) and math.isfinite(r["gold"]) for r in rows)
    out = capsys.readouterr().out
    assert re.search(r"loss at step 0 = 0\.693\d+ +ln 2 = 0\.693147 +ok", out), out  # the step-0 check ran
    assert "smoke profile" in out and "too small to learn" in out
    assert figures and all(_labelled(f) for f in figures)
    # The learner's loss trains the policy: on pairs it has trained on, the implicit-reward margin grows at every
    # step. (The demo's own 4 steps see 4 fresh batches, where the margin after 3 updates is noise around 0:
    # -0.015 to +0.11 on four smoke starts.) One batch of 16 pairs, 4 steps at β = 0.1: the margin, read before each
    # update, rose 0 → 0.28-0.66 on those starts; a sign-flipped loss drives it below 0.
    from rlprep.demos.dpo_beta_sweep import lab_config
    from rlprep.trainers.dpo import train_dpo

    config = lab_config("smoke", beta=0.1, n_train_pairs=16, batch_size=16, steps=4, eval_every=4)
    history = train_dpo(config, sequence_logprobs=ns["sequence_logprobs"], dpo_loss=ns["dpo_loss"], live=False)
    _, margins = history.series("reward/implicit_margin")
    assert margins[0] == pytest.approx(0.0, abs=1e-6) and margins[-1] > 0.1, margins
    assert all(b > a for a, b in zip(margins, margins[1:])), margins


def test_lab05_demos_run_in_smoke(monkeypatch):
    from rlprep.demos.grpo_arithmetic import EXPECTED

    ns, figures = _run_demos("lab05_grpo", monkeypatch)
    verdicts = {cause: verdict for cause, (_, verdict) in ns["zero_loss"].items()}
    assert set(verdicts) == set(EXPECTED)
    wrong = {c: (verdicts[c], EXPECTED[c]) for c in verdicts if verdicts[c] not in EXPECTED[c]}
    assert not wrong, f"diagnosis (got, expected) per cause: {wrong}"
    assert verdicts["all_truncated"] == "no_valid_tokens"  # the full smoke SFT always answers: nothing survives
    stats = {cause: s for cause, (s, _) in ns["zero_loss"].items()}
    assert abs(stats["on_policy"]["loss"]) < 1e-6 and stats["on_policy"]["grad_norm"] > 0  # zero loss, live gradient
    assert stats["too_easy"]["frac_zero_std_groups"] == 1 and stats["mask_bug"]["frac_valid_tokens"] == 0
    assert set(ns["runs"]) >= {"baseline (symmetric, token, no KL)", "clip-higher (eps_high = 0.28, mu = 2)"}
    assert len(ns["runs"]) == 6 and all(not r.interrupted for r in ns["runs"].values())
    token, seq = ns["token_ratios"], ns["seq_ratios"]
    assert token.numel() > seq.numel() > 0 and bool((token > 0).all())
    assert figures and all(_labelled(f) for f in figures)


# ----------------------------------------------------------------------------------------------- demo helpers
def test_ratio_spread_sequence_ratio_is_the_geometric_mean_of_token_ratios():
    """On the smoke policy: GSPO's s_i is exp(mean log ρ_t) of its row, so it lies within the row's token ratios."""
    from dataclasses import replace

    import torch

    from rlprep.demos.grpo import ratio_spread
    from rlprep.tinyworld import get_task, load_policy
    from rlprep.trainers.grpo import GRPOConfig

    policy, tokenizer = load_policy("arithmetic", "smoke")
    config = replace(GRPOConfig.for_profile("smoke"), prompts_per_step=4, lr=1e-3)
    token, seq = ratio_spread(copy.deepcopy(policy), tokenizer, get_task("arithmetic"), config, n_updates=2)
    assert token.ndim == seq.ndim == 1 and token.numel() >= seq.numel() > 0
    assert float(token.log().std()) > 0  # the updates moved the policy off the sampling one
    assert float(seq.log().min()) >= float(token.log().min()) - 1e-5
    assert float(seq.log().max()) <= float(token.log().max()) + 1e-5
    assert torch.isfinite(seq).all()
