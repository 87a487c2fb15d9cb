"""Labs whose source is the notebook itself: what the conversion from the ``build_labNN.py`` builders had to keep,
and what every lab source must hold.

- Against the notebook a builder last wrote (``BUILT``, read with ``git show``): the rendered source
  (``rendered_solution``) holds the same hidden expected values, number for number, with the same points and the
  same visible code; the reference still gets full marks and every catalogued bug (and correct alternative)
  gets the same points in the same cells as it did there; the test cells added since (``ADDED``) fail exactly the
  bugs listed for them, and every alternative and the reference pass them. A cell whose hidden part grew since
  (``EXTENDED``, issue 33: a hidden check per contract sentence, an absolute value beside each self-consistency
  check) starts with the builder's hidden values, unchanged, and still fails every bug it failed there.
- labs/ holds no hidden value and no fixture.
- Every lab: demo cells are 1-5 lines into ``rlprep.demos``; markdown quotes measured figures only through
  ``{{ results.* }}`` placeholders, and a lab whose demo module records a run quotes that record.
"""

from __future__ import annotations

import importlib
import re

import nbformat
import numpy as np
import pytest

from grading_helpers import ROOT, notebook_at
from rlprep.grading import templating
from rlprep.grading.executor import hidden_code, score_in_process

BUILT_278 = "373b2963629bcf7a3c2ea6f50b07c7da9d594d41"  # solutions/ as build_lab02, 07, 08 last wrote them
BUILT_3456 = "83c03562a4cc9cc398bb05a7db06c14c721731e5"  # solutions/ as build_lab03..06 last wrote them
BUILT = {  # lab -> (reference module of its graded functions, the last commit a builder wrote its notebook)
    "lab02_reward_model": ("rlprep.algos.reward_model", BUILT_278),
    "lab03_ppo_rlhf": ("rlprep.algos.ppo", BUILT_3456),
    "lab04_dpo": ("rlprep.algos.dpo", BUILT_3456),
    "lab05_grpo": ("rlprep.algos.grpo", BUILT_3456),
    "lab06_importance_sampling": ("rlprep.algos.importance_sampling", BUILT_3456),
    "lab07_infonce": ("rlprep.algos.infonce", BUILT_278),
    "lab08_image_diff": ("rlprep.algos.image_diff", BUILT_278),
}
# lab08's hard inputs (colour-only, large-change, column-major) also catch older bugs: each reads a box or a
# threshold that the new cases make visible.
LAB08_DB_HARD = {"db_bands_no_offset", "db_border_off_by_one", "db_channel_ignored", "db_channel_mean",
                 "db_exclusive_bounds", "db_grayscale_first", "db_greater_equal", "db_signed_channel_sum",
                 "db_uint64_rows", "db_xy_swapped"}
LAB08_ROBUST_HARD = {"dbr_drift_by_mean_no_smoothing", "dbr_exact_diff", "dbr_fixed_threshold_no_drift",
                     "dbr_relative_to_max", "dbr_signed_channel_mean", "dbr_threshold_too_high",
                     "dbr_whole_frame_median"}
ADDED = {  # test cells added after the builders (issue 24): grade id -> the catalogued bugs it fails, by design
    "lab03_ppo_rlhf": {
        # padding holding inf/NaN, and x.T: every masked_mean bug that reads padding or multiplies it by the mask
        "test_masked_mean_edge_inputs": {"mm_ignores_mask", "mm_divides_by_numel", "mm_mean_of_row_means",
                                         "mm_no_division", "mm_inverted_mask", "mm_product_with_mask",
                                         "mm_view_flatten"},
        # -inf log-probs in padding: 0 * NaN in the gradient; and (issue 33) the clean batch's loss and gradient
        # are the reference's, and validate=True raises
        "test_ppo_clip_loss_padding": {"ppo_exp_before_mask"} | {"ppo_inverted_ratio", "ppo_max_not_min",
                                                                 "ppo_mean_over_padding", "ppo_no_clipping",
                                                                 "ppo_not_negated", "ppo_no_validation"},
    },
    "lab04_dpo": {
        # logits of 1e3; a transposed view; and (issue 33) the reference's values, bfloat16 logits summed in float32
        "test_slp_edge_inputs": {"slp_log_of_softmax", "slp_view_cross_entropy"} | {
            "slp_double_shift", "slp_ignores_mask", "slp_keeps_low_precision", "slp_mean_not_sum", "slp_raw_logits",
            "slp_softmax_over_time"},
        # a margin of -200 in float32; and (issue 33) the reference's loss and gradient there
        "test_dpo_large_margin": {"dpo_log_of_sigmoid"} | {"dpo_chosen_rejected_swapped", "dpo_sum_not_mean"},
    },
    "lab08_image_diff": {  # colour-only, large-change and column-major cases
        "test_db_hard_inputs": LAB08_DB_HARD,
        "test_robust_colour_and_large": LAB08_ROBUST_HARD,
    },
}
EXTENDED = {  # builder cells whose hidden part grew (issue 33): the contract sentences each checks, in its hidden part
    "lab03_ppo_rlhf": {"test_masked_mean", "test_kl_penalized_rewards", "test_compute_gae_tokens", "test_ppo_clip_loss",
                       "test_value_loss"},
    "lab04_dpo": {"test_slp_gradient", "test_dpo_ln2_at_start", "test_dpo_batch_mean", "test_dpo_gradients"},
    "lab05_grpo": {"test_ga_by_hand", "test_ga_equal_group", "test_k3_shape_nonnegative", "test_grpo_on_policy",
                   "test_grpo_clip", "test_grpo_kl", "test_grpo_gradient", "test_diagnose_zero_loss"},
    "lab06_importance_sampling": {"test_iw_by_hand"},
    "lab08_image_diff": {"test_db_validation", "test_robust_noise_only", "test_robust_drift"},
}
DEMO_RECORDS = {  # lab -> the demo module whose --record writes the figures its text quotes
    "lab01_gae": "rlprep.demos.ppo_lambda",
    "lab02_reward_model": "rlprep.demos.reward_model",
    "lab03_ppo_rlhf": "rlprep.demos.ppo_rlhf",
    "lab05_grpo": "rlprep.demos.grpo_arithmetic",
    "lab06_importance_sampling": "rlprep.demos.stale_rollouts",
    "lab07_infonce": "rlprep.demos.infonce",
    "lab08_image_diff": "rlprep.demos.image_diff",
}
ALL_LABS = sorted(p.name for p in (ROOT / "solutions").iterdir() if (p / f"{p.name}.ipynb").is_file())
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")
pytestmark = pytest.mark.filterwarnings("ignore:Object of type")


def role(cell):
    return cell.get("metadata", {}).get("rlprep", {}).get("role")


def source(lab):
    return nbformat.read(ROOT / "solutions" / lab / f"{lab}.ipynb", as_version=4)


def functions(lab, **override):
    ref = importlib.import_module(BUILT[lab][0])
    catalog = importlib.import_module(f"catalog.{lab}")
    return dict({name: getattr(ref, name) for name in catalog.BUGS}, **override)


@pytest.fixture(scope="module", params=sorted(BUILT))
def lab(request):
    return request.param


@pytest.fixture(scope="module")
def rendered(lab):
    return templating.rendered_solution(lab, ROOT)


@pytest.fixture(scope="module")
def built(lab):
    return notebook_at(BUILT[lab][1], lab)


def test_source_is_a_template_whose_placeholders_all_resolve(lab, rendered):
    raw = source(lab)
    assert templating.has_placeholders(raw), f"{lab}'s hidden values come from its fixtures"
    assert not templating.has_placeholders(rendered)
    assert [c.id for c in rendered.cells] == [c.id for c in raw.cells]
    assert not (ROOT / "src" / "rlprep" / "grading" / f"build_{lab[:5]}.py").exists()


def test_hidden_values_equal_the_builders(lab, rendered, built):
    before = {c.id: c for c in built.cells}
    added, extended = ADDED.get(lab, {}), EXTENDED.get(lab, set())
    hidden_now = {c.id for c in rendered.cells if hidden_code(c.source) and c.id not in added}
    hidden_then = {c.id for c in built.cells if hidden_code(c.source)}
    assert hidden_then <= hidden_now and hidden_now - hidden_then <= extended, hidden_now ^ hidden_then
    tests = [c for c in rendered.cells if role(c) == "test" and c.id not in added]
    assert [c.id for c in tests] == [c.id for c in built.cells if role(c) == "test"]
    for cell in tests:
        old = before[cell.id]
        assert cell.metadata["nbgrader"]["points"] == old.metadata["nbgrader"]["points"], cell.id
        now_values = np.array([float(x) for x in NUMBER.findall(hidden_code(cell.source))])
        old_values = np.array([float(x) for x in NUMBER.findall(hidden_code(old.source))])
        if cell.id in extended:  # the builder's values first, then the new checks'
            assert now_values.size > old_values.size, f"{cell.id} is listed as extended but holds no new value"
            now_values = now_values[:old_values.size]
        assert now_values.shape == old_values.shape, f"{cell.id}: the hidden block holds other values"
        np.testing.assert_allclose(now_values, old_values, rtol=1e-13, atol=0, err_msg=f"{lab} {cell.id}")
        visible_now, visible_then = (c.source.split("### BEGIN HIDDEN TESTS")[0].rstrip("\n") for c in (cell, old))
        assert visible_now == visible_then, f"{cell.id}: the visible code changed"


def test_reference_and_every_bug_score_as_with_the_builders_notebook(lab, rendered, built):
    full = score_in_process(rendered, functions(lab))
    assert full and all(pts == mx for pts, mx, _ in full.values()), full
    catalog = importlib.import_module(f"catalog.{lab}")
    cases = [(name, impl) for name, impls in catalog.BUGS.items() for impl in impls]
    cases += [(name, impl) for name, impls in getattr(catalog, "ALTERNATIVES", {}).items() for impl in impls]
    assert cases
    for name, impl in [(None, None), *cases]:
        fns = functions(lab) if name is None else functions(lab, **{name: impl})
        now = {gid: pts for gid, (pts, _, _) in score_in_process(rendered, fns).items()}
        old = {gid: pts for gid, (pts, _, _) in score_in_process(built, fns).items()}
        added = {gid: now.pop(gid) for gid in ADDED.get(lab, {})}
        grown = {gid: (now.pop(gid), old.pop(gid)) for gid in EXTENDED.get(lab, set())}
        assert now == old, f"{getattr(impl, '__name__', 'the reference')}: {old} before, {now} now"
        if name is None or impl in getattr(catalog, "ALTERNATIVES", {}).get(name, []):
            assert all(pts_now == pts_then for pts_now, pts_then in grown.values()), grown  # still full marks
        assert all(pts_now <= pts_then for pts_now, pts_then in grown.values()), grown  # a grown cell only adds checks
        failed = {gid for gid, pts in added.items() if pts == 0}
        expected = {gid for gid, bugs in ADDED.get(lab, {}).items() if getattr(impl, "__name__", None) in bugs}
        assert failed == expected, f"{getattr(impl, '__name__', 'the reference')} fails the added cells {failed}"


def test_release_holds_no_hidden_value(lab, rendered):
    text = (ROOT / "labs" / lab / f"{lab}.ipynb").read_text()
    assert "{{" not in text and "HIDDEN" not in text and not (ROOT / "labs" / lab / "fixtures.py").exists()
    for cell in rendered.cells:
        for value in re.findall(r"-?\d+\.\d{5,}", hidden_code(cell.source)):
            assert value not in text, f"hidden value {value} of {cell.id} leaked into labs/"
    values = {k: v for k, v in templating.lab_values(ROOT / "solutions" / lab).items() if k != "results"}
    leaked = []
    for case, fields in values.items():
        for field, value in (fields.items() if isinstance(fields, dict) else [("", fields)]):
            if hasattr(value, "shape") and getattr(value, "ndim", 0) >= 1:
                literal = templating.literal(value)
                leaked += [f"{case}.{field}"] if literal[literal.index("["):literal.rindex("]")] in text else []
            elif isinstance(value, float) and len(repr(value)) > 8:
                leaked += [f"{case}.{field}"] if repr(value) in text else []
    assert not leaked, f"hidden values leaked into labs/{lab}: {leaked}"


@pytest.mark.parametrize("name", ALL_LABS)
def test_demo_cells_are_short_calls_into_rlprep_demos(name):
    demos = [c for c in source(name).cells if role(c) == "demo" and c.id != "grade-self"]
    assert demos
    imported: set[str] = set()
    for cell in demos:
        lines = [line for line in cell.source.splitlines() if line.strip()]
        assert 1 <= len(lines) <= 5, f"{cell.id}: {len(lines)} lines"
        for names in re.findall(r"^from rlprep\.demos(?:\.\w+)? import ([\w, ]+)$", cell.source, re.M):
            imported |= {n.split(" as ")[-1].strip() for n in names.split(",")}  # the name it is bound to
        calls = set(re.findall(r"\b(\w+)[.(]", cell.source))
        assert calls & imported, f"{cell.id} calls nothing from rlprep.demos"
        assert not re.search(r"^\s*(for|while|def|class) ", cell.source, re.M), f"{cell.id}: logic belongs in rlprep.demos"


@pytest.mark.parametrize("name", ALL_LABS)
def test_markdown_quotes_measured_figures_from_records(name):
    nb = source(name)
    assert [c.id for c in nb.cells if c.cell_type == "markdown" and "prints nothing passed" in c.source], \
        "the tests intro must say that a visible test that prints nothing passed"
    paragraphs = [p for c in nb.cells if c.cell_type == "markdown" for p in c.source.split("\n\n")]
    for paragraph in paragraphs:
        if "arXiv" not in paragraph:  # a paper's figure is quoted with its arXiv id
            for figure in re.findall(r"\d+\.\d+ ?(?:±|→|->)", paragraph):
                pytest.fail(f"measured figure {figure!r} typed by hand in {paragraph[:60]!r}; use {{{{ results.<record>.<key> }}}}")


@pytest.mark.parametrize("name", sorted(DEMO_RECORDS))
def test_text_quotes_the_record_its_demo_writes(name):
    record = importlib.import_module(DEMO_RECORDS[name]).RECORD
    assert (ROOT / "records" / f"{record}.json").is_file(), f"run python -m {DEMO_RECORDS[name]} --record"
    markdown = "\n".join(c.source for c in source(name).cells if c.cell_type == "markdown")
    assert f"{{{{ results.{record}." in markdown, f"{name}'s text quotes no figure of records/{record}.json"


def test_a_placeholder_indexes_a_recorded_per_seed_list():
    """Per-seed figures (lab 4's KL per seed) are quoted by index; an index past the list is an unknown name."""
    values = {"results": {"sweep": {"kl_seeds": [17.456, 0.506, 0.424]}}}
    text = "KL {{ results.sweep.kl_seeds.0:.2f }}, {{ results.sweep.kl_seeds.2:.2f }}"
    assert templating.render_text(text, values, code=False, where="cell x") == "KL 17.46, 0.42"
    with pytest.raises(Exception, match="kl_seeds.3"):
        templating.render_text("{{ results.sweep.kl_seeds.3 }}", values, code=False, where="cell x")


def test_grading_doc_lists_every_graded_cell_of_every_lab():
    """docs/grading.md's per-lab table of contract sentences names each lab's graded cells, and no other."""
    text = (ROOT / "docs" / "grading.md").read_text()
    section = text.split("### Each lab's graded properties", 1)[1].split("\n## ", 1)[0]
    for name in ALL_LABS:
        number = int(name[3:5])
        block = section.split(f"**Lab {number}, ", 1)[1].split("\n**Lab ", 1)[0]
        graded = {c.metadata["nbgrader"]["grade_id"] for c in source(name).cells
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade")}
        named = set(re.findall(r"`(test_\w+)`", block)) | {gid for gid in graded if re.search(
            rf"`{re.escape(gid.rsplit('_', 1)[0])}_\*`", block)}
        assert named == graded, f"{name}: not in the table {graded - named}, not a graded cell {named - graded}"
