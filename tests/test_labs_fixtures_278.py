"""Labs 2, 7 and 8 as notebooks: the source's placeholders, filled from ``fixtures.py``, grade as the builders did.

The builders (``grading/build_lab02``, ``07``, ``08``) were removed when these labs became notebooks (issue 19).
What they guaranteed is checked against the notebooks they last wrote (commit ``BUILT``, read with ``git show``):
the rendered source holds the same hidden values, and every catalogued bug loses the same points per test.
Graded cells added since (``ADDED``) are not compared: the builders' cells must be unchanged, not the only ones.
"""

from __future__ import annotations

import importlib
import re

import nbformat
import numpy as np
import pytest

from grading_helpers import ROOT, hidden_block, notebook_at
from rlprep.grading import templating
from rlprep.grading.executor import score_in_process

BUILT = "373b2963629bcf7a3c2ea6f50b07c7da9d594d41"
"""The last commit whose solutions/ for these labs were written by the builders."""
LABS = {"lab02_reward_model": "rlprep.algos.reward_model", "lab07_infonce": "rlprep.algos.infonce",
        "lab08_image_diff": "rlprep.algos.image_diff"}
ADDED = {"lab08_image_diff": {"test_db_hard_inputs", "test_robust_colour_and_large"}}
"""Graded cells added after the builders (issue 24: colour-only, large-change and column-major cases)."""
NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")
pytestmark = pytest.mark.filterwarnings("ignore:Object of type")


def built_notebook(lab):
    return notebook_at(BUILT, lab)


def implementations(lab) -> tuple[dict, dict]:
    catalog = importlib.import_module(f"catalog.{lab}")
    ref = importlib.import_module(LABS[lab])
    return {name: getattr(ref, name) for name in catalog.BUGS}, catalog.BUGS


@pytest.mark.parametrize("lab", LABS)
def test_source_is_a_template_whose_placeholders_all_resolve(lab):
    raw = nbformat.read(ROOT / "solutions" / lab / f"{lab}.ipynb", as_version=4)
    assert templating.has_placeholders(raw), f"{lab}'s hidden values come from its fixtures"
    rendered = templating.rendered_solution(lab, ROOT)
    assert not templating.has_placeholders(rendered)
    assert [c.id for c in rendered.cells] == [c.id for c in raw.cells]
    assert not (ROOT / "src" / "rlprep" / "grading" / f"build_{lab[:5]}.py").exists()


@pytest.mark.parametrize("lab", LABS)
def test_rendered_hidden_values_equal_the_builders(lab):
    old = {c.id: hidden_block(c.source) for c in built_notebook(lab).cells}
    new = {c.id: hidden_block(c.source) for c in templating.rendered_solution(lab, ROOT).cells
           if c.id not in ADDED.get(lab, set())}
    assert sorted(k for k, v in old.items() if v) == sorted(k for k, v in new.items() if v)
    for cell_id, text in old.items():
        before = np.array([float(x) for x in NUMBER.findall(text)])
        after = np.array([float(x) for x in NUMBER.findall(new[cell_id])])
        assert before.shape == after.shape, f"{lab} {cell_id}: the hidden block holds other values"
        np.testing.assert_allclose(after, before, rtol=1e-13, atol=0, err_msg=f"{lab} {cell_id}")


@pytest.mark.parametrize("lab", LABS)
def test_reference_and_every_bug_score_as_with_the_builders_notebook(lab):
    old, new = built_notebook(lab), templating.rendered_solution(lab, ROOT)
    reference, bugs = implementations(lab)
    added = ADDED.get(lab, set())
    full = score_in_process(new, reference)
    assert all(p == mx for p, mx, _ in full.values()), full
    assert {g: v for g, v in full.items() if g not in added} == score_in_process(old, reference)
    for name, impls in bugs.items():
        for bug in impls:
            scores = {g: pts for g, (pts, _, _) in score_in_process(new, dict(reference, **{name: bug})).items()
                      if g not in added}
            before = {g: pts for g, (pts, _, _) in score_in_process(old, dict(reference, **{name: bug})).items()}
            assert scores == before, f"{bug.__name__}: {before} -> {scores}"


@pytest.mark.parametrize("lab", LABS)
def test_release_holds_no_fixture_value(lab):
    text = (ROOT / "labs" / lab / f"{lab}.ipynb").read_text()
    assert "{{" not in text and "HIDDEN" not in text and not (ROOT / "labs" / lab / "fixtures.py").exists()
    values = {k: v for k, v in templating.lab_values(ROOT / "solutions" / lab).items() if k != "results"}
    leaked = []
    for case, fields in values.items():
        for field, value in fields.items():
            if hasattr(value, "shape") and getattr(value, "ndim", 0) >= 1:
                literal = templating.literal(value)
                leaked += [f"{case}.{field}"] if literal[literal.index("["):literal.rindex("]")] in text else []
            elif isinstance(value, float) and len(repr(value)) > 8:
                leaked += [f"{case}.{field}"] if repr(value) in text else []
    assert not leaked, f"hidden values leaked into labs/{lab}: {leaked}"
