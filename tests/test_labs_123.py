"""Labs 2 and 3 (reward model, PPO-RLHF) and lab01's PPO demo: grading, bug catalogs, builders, demo cells.

Lab01's whole-notebook grading and catalog live in test_grading_*.py; here only its new λ demo runs.
"""

from __future__ import annotations

import importlib
import json
import shutil

import nbformat
import pytest

from grading_helpers import ROOT
from rlprep.grading import authoring
from rlprep.grading.executor import hidden_code, score_in_process

pytestmark = pytest.mark.filterwarnings("ignore:Object of type")  # SQLAlchemy session notes inside nbgrader

LABS = {  # lab -> (builder module, or None once the lab's source is its notebook; catalog; reference module)
    "lab02_reward_model": (None, "catalog.lab02_reward_model", "rlprep.algos.reward_model"),
    "lab03_ppo_rlhf": (None, "catalog.lab03_ppo_rlhf", "rlprep.algos.ppo"),
}
POINTS = {"lab02_reward_model": 6, "lab03_ppo_rlhf": 16}  # lab03: 13 + 3 for the edge-input cells (issue 24)


def solution_path(lab):
    return ROOT / "solutions" / lab / f"{lab}.ipynb"


def solution(lab):
    """The source notebook with its placeholders filled (what the gradebook holds)."""
    from rlprep.grading.templating import has_placeholders, rendered_solution

    nb = nbformat.read(solution_path(lab), as_version=4)
    return rendered_solution(lab, ROOT) if has_placeholders(nb) else nb


def release_path(lab):
    return ROOT / "labs" / lab / f"{lab}.ipynb"


def role(cell):
    return cell.get("metadata", {}).get("rlprep", {}).get("role")


@pytest.fixture(scope="module", params=sorted(LABS))
def lab(request):
    return request.param


def reference_functions(lab):
    _, catalog, module = LABS[lab]
    bugs = importlib.import_module(catalog).BUGS
    ref = importlib.import_module(module)
    return {name: getattr(ref, name) for name in bugs}


# --- builders and release ---------------------------------------------------------------------------------------
def test_each_graded_function_is_alone_in_its_answer_cell_with_its_reference(lab):
    nb = nbformat.read(solution_path(lab), as_version=4)
    answers = [c for c in nb.cells if role(c) == "answer"]
    assert sorted(c.id for c in answers) == sorted(reference_functions(lab))
    for cell in answers:
        assert cell.source == authoring.reference_source(cell.metadata["rlprep"]["reference"])
        assert cell.source.startswith(f"def {cell.id}(")
    assert role(nb.cells[-1]) == "demo" and "grade_here()" in nb.cells[-1].source


def test_release_hides_hidden_tests_and_keeps_signatures(lab):
    from rlprep.grading.templating import lab_values, literal

    text = release_path(lab).read_text()
    assert "HIDDEN" not in text and "BEGIN SOLUTION" not in text
    cases = [v for k, v in lab_values(solution_path(lab).parent).items() if k != "results"]
    values = [literal(x) for case in cases for x in (case.values() if isinstance(case, dict) else [case])]
    literals = [v for v in values if isinstance(v, str) and len(v) > 40]  # tensor literals, not short scalars
    assert literals and not [v for v in literals if v in text], "hidden expected values leaked into the release"
    nb = nbformat.read(release_path(lab), as_version=4)
    assert all(c.get("outputs", []) == [] for c in nb.cells if c.cell_type == "code")
    for cell in (c for c in nb.cells if role(c) == "answer"):
        assert cell.source.startswith(f"def {cell.id}(")
        assert cell.source.endswith("    # YOUR CODE HERE\n    raise NotImplementedError()")


def test_hidden_blocks_hold_values_not_code(lab):
    import ast

    for cell in solution(lab).cells:
        if hidden := hidden_code(cell.source):
            banned = (ast.For, ast.While, ast.FunctionDef, ast.Lambda, ast.Import, ast.ImportFrom, ast.ListComp)
            assert not [n for n in ast.walk(ast.parse(hidden)) if isinstance(n, banned)], cell.id


# --- the test cells themselves, in process (no kernel) ----------------------------------------------------------
def catalog_cases(kind):
    for lab, (_, catalog, _) in sorted(LABS.items()):
        entries = getattr(importlib.import_module(catalog), kind)
        for name, fns in entries.items():
            for fn in fns:
                yield pytest.param(lab, name, fn, id=f"{lab}-{fn.__name__}")


@pytest.mark.parametrize("lab_name, name, fn", list(catalog_cases("BUGS")))
def test_each_catalogued_bug_loses_points_with_a_named_property(lab_name, name, fn):
    nb = solution(lab_name)
    results = score_in_process(nb, dict(reference_functions(lab_name), **{name: fn}))
    lost = {gid: msg for gid, (pts, mx, msg) in results.items() if pts < mx}
    assert lost, f"bug {fn.__name__} got full marks"
    for msg in lost.values():
        assert msg.startswith("PropertyFailed: ") and "tensor(" not in msg, msg


@pytest.mark.parametrize("lab_name, name, fn", list(catalog_cases("ALTERNATIVES")))
def test_each_correct_alternative_gets_full_marks(lab_name, name, fn):
    nb = solution(lab_name)
    results = score_in_process(nb, dict(reference_functions(lab_name), **{name: fn}))
    assert all(pts == mx for pts, mx, _ in results.values()), results


def test_reference_gets_full_marks_in_process(lab):
    results = score_in_process(solution(lab), reference_functions(lab))
    assert all(pts == mx for pts, mx, _ in results.values()), results
    assert sum(mx for _, mx, _ in results.values()) == POINTS[lab]


# --- whole-notebook grading through nbgrader: one run per notebook ----------------------------------------------
def grade_json(path, capsys):
    from rlprep.cli import main

    rc = main(["grade", str(path), "--json"])
    return rc, json.loads(capsys.readouterr().out)


def test_reference_answers_get_full_marks_through_rlprep_grade(lab, tmp_path, capsys):
    nb = nbformat.read(release_path(lab), as_version=4)
    for cell in nb.cells:
        if role(cell) == "answer":
            cell.source = authoring.reference_source(cell.metadata["rlprep"]["reference"]).replace(
                "    ### BEGIN SOLUTION\n", "").replace("\n    ### END SOLUTION", "")
    path = tmp_path / f"{lab}.ipynb"
    nbformat.write(nb, path)  # demo cells included: grading must skip them
    rc, report = grade_json(path, capsys)
    assert rc == 0 and report["lab"] == lab and report["score"] == report["max_score"] == POINTS[lab], report
    assert all(c["passed"] for c in report["cells"])


def test_untouched_release_scores_zero_in_every_graded_cell(lab, tmp_path, capsys):
    path = tmp_path / f"{lab}.ipynb"
    shutil.copy(release_path(lab), path)
    rc, report = grade_json(path, capsys)
    assert rc == 1 and report["score"] == 0 and report["cells"], report
    assert all(c["points"] == 0 and "NotImplementedError" in c["message"] for c in report["cells"])


# --- demo cells run in the smoke profile with the reference answers ---------------------------------------------
def run_cells(lab, stop_before="grade-intro", monkeypatch=None):
    """exec setup, answer and demo cells in order (reference answers, plt.show silenced); returns the namespace."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if monkeypatch is not None:
        monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    ns: dict = {}
    for cell in nbformat.read(solution_path(lab), as_version=4).cells:
        if cell.id == stop_before:
            break
        if cell.cell_type == "code" and role(cell) in ("setup", "answer", "demo"):
            exec(compile(cell.source, f"<{lab}:{cell.id}>", "exec"), ns)  # our own notebook
    return ns


def assert_labelled(fig):
    for ax in fig.axes:
        if ax.get_visible() and ax.has_data():
            assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel(), ax


def test_lab01_ppo_lambda_demo_runs_with_the_learners_gae(monkeypatch):
    import matplotlib.pyplot as plt
    import numpy as np

    from rlprep.demos.ppo_lambda import STEPS

    calls = []
    nb = nbformat.read(solution_path("lab01_gae"), as_version=4)
    ns: dict = {}
    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    for cid in ("setup", "compute_gae"):
        exec(next(c.source for c in nb.cells if c.id == cid), ns)
    gae = ns["compute_gae"]
    ns["compute_gae"] = lambda *a, **k: calls.append(k.get("lam")) or gae(*a, **k)  # spy: the demo uses it
    exec(next(c.source for c in nb.cells if c.id == "ppo-lambda"), ns)
    assert sorted(ns["runs"]) == [0.0, 0.95, 1.0] and set(calls) == {0.0, 0.95, 1.0}
    for h in ns["runs"].values():
        assert len(h.series("reward/rm")[1]) == STEPS["smoke"] and np.isfinite(h.meta["gold_end"])
    assert_labelled(plt.gcf())
    plt.close("all")
    from rlprep.demos.ppo_lambda import summary  # the record the lab's text quotes, from these real runs

    values = summary(ns["runs"], STEPS["smoke"])
    assert values["lam095_gold_end"] == ns["runs"][0.95].meta["gold_end"] and np.isfinite(values["gap_095_vs_0_ci95"])
    assert np.isfinite(values["gap_1_vs_095_ci95"]) and values["lam1_wall_s"] > 0
    assert values["n_seeds"] == 1 and values["interval"] == "evaluation samples"  # the cell trains one seed


def test_lab02_demo_cells_train_the_rm_with_the_learners_loss(monkeypatch, capsys):
    import matplotlib.pyplot as plt

    from rlprep.algos.reward_model import bradley_terry_loss

    calls = []
    monkeypatch.setattr("rlprep.algos.reward_model.bradley_terry_loss",
                        lambda *a: pytest.fail("the demo must use the notebook's loss, not the package's"))
    ns = run_cells("lab02_reward_model", stop_before="train", monkeypatch=monkeypatch)
    ns["bradley_terry_loss"] = lambda c, r: calls.append(1) or bradley_terry_loss(c, r)
    nb = nbformat.read(solution_path("lab02_reward_model"), as_version=4)
    for cid in ("train", "scatter", "best-of-n"):
        cell = next(c for c in nb.cells if c.id == cid)
        assert len(cell.source.strip().splitlines()) <= 5, f"demo cell {cid} is longer than 5 lines"
        exec(cell.source, ns)
        assert_labelled(plt.gcf())
    meta = ns["run"].history.meta
    assert len(calls) == meta["config"]["steps"]
    assert meta["accuracy"] > max(0.6, meta["accuracy_start"]) and meta["pearson_gold"] > 0.3, meta
    bon = ns["bon"]
    assert bon["n"] == [1, 2, 4, 8] and bon["reward/rm"][-1] >= bon["reward/rm"][0]  # max over a superset
    assert "smoke profile" in capsys.readouterr().out
    plt.close("all")


def test_lab03_demo_cells_run_the_learners_functions(monkeypatch, capsys):
    import matplotlib.pyplot as plt

    ns = run_cells("lab03_ppo_rlhf", stop_before="train", monkeypatch=monkeypatch)
    calls: dict = {}

    def spy(name, fn):
        return lambda *a, **k: calls.__setitem__(name, calls.get(name, 0) + 1) or fn(*a, **k)

    for name in reference_functions("lab03_ppo_rlhf"):
        ns[name] = spy(name, ns[name])
    clip_eps, clip = [], ns["ppo_clip_loss"]

    def clip_spy(*a, **k):
        clip_eps.append(k.get("clip_eps", a[4] if len(a) > 4 else None))
        return clip(*a, **k)

    ns["ppo_clip_loss"] = clip_spy
    nb = nbformat.read(solution_path("lab03_ppo_rlhf"), as_version=4)
    for cid in ("train", "clip-sweep", "kl-sweep"):
        exec(next(c.source for c in nb.cells if c.id == cid), ns)
        assert_labelled(plt.gcf())
    assert set(calls) == set(reference_functions("lab03_ppo_rlhf")), calls
    assert {0.1, 0.2, 0.3} <= set(clip_eps)  # the clip sweep ran the learner's loss at each ε
    h = ns["history"]
    assert not h.interrupted and len(h.series("stats/clipfrac_two_sided")[1]) == h.meta["config"]["steps"]
    assert sorted(ns["clip_runs"]) == [0.1, 0.2, 0.3] and [r["kl_coef"] for r in ns["rows"]] == [0.0, 0.05]
    out = capsys.readouterr().out
    assert out.count("too small to learn") == 3 and "run ε = 0.3:" in out
    plt.close("all")
    # The record the lab's text quotes (`python -m rlprep.demos.ppo_rlhf --record`), from these real runs.
    from rlprep.demos.ppo_rlhf import summary

    values = summary(h, ns["clip_runs"], ns["rows"])
    hack = ns["rows"][0]["history"]
    _, gold = hack.series("reward/gold")
    _, parse = hack.series("text/parse_rate")
    assert values["main_gold_end"] == h.meta["gold_end"] and values["kl_0_gold_end"] == ns["rows"][0]["gold_end"]
    assert values["kl_steps"] == len(gold) == hack.meta["config"]["steps"] and 0 < values["proxy_accuracy"] <= 1
    assert values["kl_0_batch_gold_peak"] == max(gold) and values["kl_0_parse_min"] == min(parse)
    assert {"eps_0p1_clipfrac", "eps_0p2_clipfrac", "eps_0p3_clipfrac"} <= set(values)
    assert values["kl_0p05_parse_min"] <= values["kl_0p05_parse_last10"] <= 1
