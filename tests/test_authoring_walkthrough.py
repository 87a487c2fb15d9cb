"""docs/authoring-labs.md's walkthrough, run: a tenth lab written as a notebook, released and graded.

Everything happens in a temporary course checkout, the way an author adds a lab: the source notebook (with
placeholders), its fixtures beside it, ``rlprep release``, then ``rlprep grade`` of the release and of the
solution.
"""

from __future__ import annotations

import textwrap

import nbformat

from rlprep.grading import authoring as A

LAB = "lab10_kl"

FIXTURES = textwrap.dedent('''
    import torch

    from rlprep.algos.grpo import kl_k3


    def fixtures():
        gen = torch.Generator().manual_seed(9)
        logp = -torch.rand(2, 3, generator=gen, dtype=torch.float64)
        ref = -torch.rand(2, 3, generator=gen, dtype=torch.float64)
        return {"random": {"logp": logp, "ref": ref, "k3": kl_k3(logp, ref)}}
''')


def write_lab(root):
    """Steps 1-3 of the walkthrough: the source notebook and its fixtures."""
    (root / "pyproject.toml").write_text("[project]\nname = 'my-course'\n")
    cells = [
        A.md("title", "# Lab 10 · The k3 estimator\n\nWrite `kl_k3`."),
        A.setup("setup", "import torch\n\nfrom rlprep.grading.asserts import assert_close, check"),
        A.answer("kl_k3", "rlprep.algos.grpo:kl_k3"),
        A.test("test_k3", 2, code="""
            # equal log-probs: exactly 0
            assert_close(kl_k3(torch.zeros(1, 2, dtype=torch.float64), torch.zeros(1, 2, dtype=torch.float64)),
                         [[0.0, 0.0]], 'k3 is 0 when pi == pi_ref')
            """, hidden_code="assert_close(kl_k3({{ random.logp }}, {{ random.ref }}), {{ random.k3 }}, "
                             "'k3 wrong on random log-probs')"),
        *A.grade_yourself_cells(LAB),
    ]
    folder = root / "solutions" / LAB
    A.build_solution(LAB, cells, root)
    (folder / "fixtures.py").write_text(FIXTURES)
    return folder / f"{LAB}.ipynb"


def test_a_tenth_lab_is_written_released_and_graded(tmp_path, rlprep_home):
    from rlprep.grading.grade import grade_notebook
    from rlprep.grading.release import release_lab

    source = write_lab(tmp_path)
    assert "{{ random.k3 }}" in source.read_text()  # the author's source keeps the placeholder
    released = release_lab(LAB, root=tmp_path)
    text = released.read_text()
    assert "HIDDEN" not in text and "{{" not in text and "fixtures" not in text
    assert not (tmp_path / "labs" / LAB / "fixtures.py").exists()
    stub = next(c for c in nbformat.read(released, as_version=4).cells if c.id == "kl_k3")
    assert stub.source.endswith("raise NotImplementedError()")

    untouched = grade_notebook(released, solutions=tmp_path / "solutions", deadline=60)
    assert (untouched.score, untouched.max_score) == (0, 2)
    solved = grade_notebook(source, solutions=tmp_path / "solutions", deadline=60)
    assert (solved.score, solved.max_score) == (2, 2), solved.cells

    # a wrong answer fails the hidden case with its property, never its values
    nb = nbformat.read(released, as_version=4)
    answer = next(c for c in nb.cells if c.id == "kl_k3")
    answer.source = answer.source.replace("raise NotImplementedError()", "return (ref_logp - logp) ** 2 / 2")
    wrong = tmp_path / "wrong" / f"{LAB}.ipynb"
    wrong.parent.mkdir()
    nbformat.write(nb, wrong)
    report = grade_notebook(wrong, solutions=tmp_path / "solutions", deadline=60)
    assert report.score == 0 and report.cells[0].message == "PropertyFailed: k3 wrong on random log-probs"
