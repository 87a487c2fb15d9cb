"""Labs whose source is the notebook itself (03-06): what the conversion from build_labNN.py had to keep.

- the rendered source (``rendered_solution``) holds the same hidden expected values, number for number, as the
  notebook the builder wrote (``BUILT``, the last commit with the builders), and every catalogued bug loses the
  same points in the same cells as it did there; the test cells added since (``ADDED``) fail exactly the bugs listed
  for them, and every alternative and the reference pass them;
- labs/ holds no hidden value; demo cells are 1-5 lines into ``rlprep.demos``; the tests intro says that a silent
  visible test passed; markdown quotes measured figures only through ``{{ results.* }}`` placeholders.
"""

from __future__ import annotations

import importlib
import re

import nbformat
import pytest

from grading_helpers import ROOT, hidden_block, notebook_at
from rlprep.grading import templating
from rlprep.grading.executor import score_in_process

BUILT = "83c03562a4cc9cc398bb05a7db06c14c721731e5"  # solutions/ as build_lab03..06 last wrote them
LABS = {  # lab -> reference module of its graded functions
    "lab03_ppo_rlhf": "rlprep.algos.ppo",
    "lab04_dpo": "rlprep.algos.dpo",
    "lab05_grpo": "rlprep.algos.grpo",
    "lab06_importance_sampling": "rlprep.algos.importance_sampling",
}
ADDED = {  # test cells added after the builders (issue 24): grade id -> the catalogued bugs it fails, by design
    "lab03_ppo_rlhf": {
        # padding holding inf/NaN, and x.T: every masked_mean bug that reads padding or multiplies it by the mask
        "test_masked_mean_edge_inputs": {"mm_ignores_mask", "mm_divides_by_numel", "mm_mean_of_row_means",
                                         "mm_no_division", "mm_inverted_mask", "mm_product_with_mask",
                                         "mm_view_flatten"},
        "test_ppo_clip_loss_padding": {"ppo_exp_before_mask"},  # -inf log-probs in padding: 0 * NaN in the gradient
    },
    "lab04_dpo": {
        "test_slp_edge_inputs": {"slp_log_of_softmax", "slp_view_cross_entropy"},  # logits of 1e3; a transposed view
        "test_dpo_large_margin": {"dpo_log_of_sigmoid"},  # a margin of -200 in float32
    },
}
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")
pytestmark = pytest.mark.filterwarnings("ignore:Object of type")


def role(cell):
    return cell.get("metadata", {}).get("rlprep", {}).get("role")


def built_notebook(lab):
    return notebook_at(BUILT, lab)


def functions(lab, **override):
    ref = importlib.import_module(LABS[lab])
    catalog = importlib.import_module(f"catalog.{lab}")
    return dict({name: getattr(ref, name) for name in catalog.BUGS}, **override)


@pytest.fixture(scope="module", params=sorted(LABS))
def lab(request):
    return request.param


@pytest.fixture(scope="module")
def rendered(lab):
    return templating.rendered_solution(lab, ROOT)


def test_hidden_values_equal_the_builders(lab, rendered):
    raw = nbformat.read(ROOT / "solutions" / lab / f"{lab}.ipynb", as_version=4)
    assert templating.has_placeholders(raw) and not templating.has_placeholders(rendered)
    before = {c.id: c for c in built_notebook(lab).cells}
    tests = [c for c in rendered.cells if role(c) == "test" and c.id not in ADDED.get(lab, {})]
    assert [c.id for c in tests] == [c.id for c in before.values() if role(c) == "test"]
    for cell in tests:
        old = before[cell.id]
        assert cell.metadata["nbgrader"]["points"] == old.metadata["nbgrader"]["points"], cell.id
        now_values = [float(x) for x in NUMBER.findall(hidden_block(cell.source))]
        old_values = [float(x) for x in NUMBER.findall(hidden_block(old.source))]
        assert now_values == old_values, f"{cell.id}: hidden values differ from the builder's"
        assert cell.source.split("### BEGIN HIDDEN TESTS")[0] == old.source.split("### BEGIN HIDDEN TESTS")[0]


def test_every_bug_loses_the_same_points_as_before(lab, rendered):
    built = built_notebook(lab)
    catalog = importlib.import_module(f"catalog.{lab}")
    cases = [(name, impl) for name, impls in catalog.BUGS.items() for impl in impls]
    cases += [(name, impl) for name, impls in getattr(catalog, "ALTERNATIVES", {}).items() for impl in impls]
    assert cases
    for name, impl in [(None, None), *cases]:
        fns = functions(lab) if name is None else functions(lab, **{name: impl})
        now = {gid: pts for gid, (pts, _, _) in score_in_process(rendered, fns).items()}
        old = {gid: pts for gid, (pts, _, _) in score_in_process(built, fns).items()}
        added = {gid: now.pop(gid) for gid in ADDED.get(lab, {})}
        assert now == old, f"{getattr(impl, '__name__', 'the reference')}: {old} before, {now} now"
        failed = {gid for gid, pts in added.items() if pts == 0}
        expected = {gid for gid, bugs in ADDED.get(lab, {}).items() if getattr(impl, "__name__", None) in bugs}
        assert failed == expected, f"{getattr(impl, '__name__', 'the reference')} fails the added cells {failed}"


def test_release_holds_no_hidden_value(lab, rendered):
    text = (ROOT / "labs" / lab / f"{lab}.ipynb").read_text()
    assert "{{" not in text and "HIDDEN" not in text
    for cell in rendered.cells:
        for value in re.findall(r"-?\d+\.\d{5,}", hidden_block(cell.source)):
            assert value not in text, f"hidden value {value} of {cell.id} leaked into labs/"


def test_demo_cells_are_short_calls_into_rlprep_demos(lab):
    nb = nbformat.read(ROOT / "solutions" / lab / f"{lab}.ipynb", as_version=4)
    demos = [c for c in nb.cells if role(c) == "demo" and c.id != "grade-self"]
    assert demos
    imported: set[str] = set()
    for cell in demos:
        lines = [line for line in cell.source.splitlines() if line.strip()]
        assert 1 <= len(lines) <= 5, f"{cell.id}: {len(lines)} lines"
        for names in re.findall(r"^from rlprep\.demos(?:\.\w+)? import ([\w, ]+)$", cell.source, re.M):
            imported |= {n.strip() for n in names.split(",")}
        calls = set(re.findall(r"\b(\w+)[.(]", cell.source))
        assert calls & imported, f"{cell.id} calls nothing from rlprep.demos"
        assert not re.search(r"^\s*(for|while|def|class) ", cell.source, re.M), f"{cell.id}: logic belongs in rlprep.demos"


def test_markdown_quotes_measured_figures_from_records(lab):
    nb = nbformat.read(ROOT / "solutions" / lab / f"{lab}.ipynb", as_version=4)
    assert [c.id for c in nb.cells if c.cell_type == "markdown" and "prints nothing passed" in c.source], \
        "the tests intro must say that a visible test that prints nothing passed"
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for figure in re.findall(r"\d+\.\d+ ?(?:±|→|->)", cell.source):
                pytest.fail(f"{cell.id}: measured figure {figure!r} typed by hand; use {{{{ results.<record>.<key> }}}}")
