"""The site's page generation (rlprep.book), without node or a kernel: sections, question pages, widgets, the cache
key, the external-load check. The built site itself is checked in a browser by tests/e2e/test_book_site.py."""

from __future__ import annotations

import base64
from pathlib import Path

import nbformat
import pytest

from rlprep.book.execute import WIDGET_VIEW, cache_key, replace_widget_outputs
from rlprep.book.pages import project_pages, question_page, split_sections
from rlprep.book.site import add_question_aliases, external_loads, write_project
from rlprep.book.static_widgets import NOTE, static_interact
from rlprep.cli import main
from rlprep.course import notebook_for
from rlprep.interview.bank import load_bank

ROOT = Path(__file__).resolve().parents[1]
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()


def md(source, cid):
    return nbformat.v4.new_markdown_cell(source, id=cid)


def plot_cell(cid):
    cell = nbformat.v4.new_code_cell("plt.plot([1, 2])", id=cid)
    cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})]
    return cell


def toy_notebook():
    return nbformat.v4.new_notebook(cells=[
        md("# 06 · GRPO", "title"),
        md("### W11 · 如果同事训 GRPO 时发现 loss 变成 0，你觉得正常吗？", "w11-question"),
        md("#### Short answer\nOften normal.", "w11-short"),
        plot_cell("w11-plot"),
        md("### W24 · 熵坍塌", "w24-question"),
        md("#### Short answer\nEntropy.", "w24-short"),
        md("## Reproducibility", "repro"),
        md("Not part of W24.", "after"),
    ])


def test_sections_run_from_a_question_heading_to_the_next_heading():
    sections = split_sections(toy_notebook())
    assert [c.id for c in sections["W11"]] == ["w11-question", "w11-short", "w11-plot"]
    assert [c.id for c in sections["W24"]] == ["w24-question", "w24-short"]


def test_every_notebook_question_id_has_a_section_in_its_notebook():
    bank = load_bank()
    for qid in bank:
        try:
            unit = notebook_for(qid)
        except KeyError:
            continue
        sections = split_sections(nbformat.read(ROOT / unit.path, as_version=4))
        assert qid in sections and len(sections[qid]) > 2, (qid, unit.path)


def test_question_page_has_the_chinese_heading_links_and_the_plot():
    cells = split_sections(toy_notebook())["W11"]
    page = question_page("W11", "如果同事训 GRPO 时发现 loss 变成 0，你觉得正常吗？", "GRPO loss is 0: normal?",
                         notebook_for("W11"), cells)
    head = page.cells[0].source
    assert head.startswith("# W11 · 如果同事训 GRPO 时发现 loss 变成 0")
    assert "](../notebooks/06_grpo_dapo.ipynb#w11)" in head          # the notebook section's label
    assert "](../labs/lab05_grpo/lab05_grpo.ipynb)" in head           # the lab that grades W11
    assert "](../bank/W11.md)" in head
    assert page.cells[1].source.startswith("## Short answer")         # #### moved up under the page title
    assert page.cells[2].outputs[0]["data"]["image/png"] == PNG


def test_project_pages_cover_every_id_label_the_headings_and_use_released_labs(tmp_path):
    bank = load_bank()
    nb = toy_notebook()
    pages = {p.path: p.content for p in project_pages({"notebooks/06_grpo_dapo.ipynb": nb}, bank, ROOT / "labs", "smoke")}
    for qid in bank:
        assert f"questions/{qid}.ipynb" in pages and f"bank/{qid}.md" in pages
    assert pages["notebooks/06_grpo_dapo.ipynb"].cells[1].source.startswith("(w11)=\n### W11 ·")
    assert nb.cells[1].source.startswith("### W11")                    # the executed notebook is not modified
    page_ids = {c.id for c in pages["questions/W11.ipynb"].cells}
    assert len(page_ids) > 2 and not page_ids & {c.id for c in pages["notebooks/06_grpo_dapo.ipynb"].cells}
    assert "面试口述版" in pages["bank/W11.md"] and bank["W11"].spoken_answer_zh.splitlines()[0][:20] in pages["bank/W11.md"]
    lab = nbformat.writes(pages["labs/lab01_gae/lab01_gae.ipynb"])
    assert "BEGIN SOLUTION" not in lab and "BEGIN HIDDEN TESTS" not in lab
    sheet = pages["interview/rl-core.md"]
    assert sheet.startswith("# Interviewer's sheet: rl-core") and "--seed 1" in sheet
    assert "(questions/W11.ipynb)" in pages["index.md"]
    assert write_project(tmp_path, list(project_pages({}, bank, ROOT / "labs", "smoke")), tmp_path / "theme") > 100
    assert write_project(tmp_path, list(project_pages({}, bank, ROOT / "labs", "smoke")), tmp_path / "theme") == 0


def test_static_interact_draws_the_default_and_says_how_to_move_the_slider(monkeypatch):
    import IPython.display
    import ipywidgets as widgets

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj.data))
    seen = []
    static_interact(lambda eps, name: seen.append((eps, name)),
                    eps=widgets.FloatSlider(value=0.28, min=0.0, max=1.0, description="ε_high"),
                    name=widgets.Dropdown(options=["dapo", "cispo"], value="cispo"))
    assert seen == [(0.28, "cispo")]
    assert len(shown) == 1 and NOTE in shown[0] and "ε_high = 0.28" in shown[0], shown


def test_widget_views_become_a_note_not_an_empty_box():
    nb = toy_notebook()
    cell = nb.cells[3]
    cell.outputs.append(nbformat.v4.new_output("display_data", data={WIDGET_VIEW: {"model_id": "x"}, "text/plain": "VBox()"}))
    assert replace_widget_outputs(nb) == 1
    assert "JupyterLab" in cell.outputs[1]["data"]["text/markdown"] and WIDGET_VIEW not in cell.outputs[1]["data"]


def test_cache_key_follows_the_source_and_the_profile_not_the_outputs(tmp_path):
    path = tmp_path / "nb.ipynb"
    nb = toy_notebook()
    nbformat.write(nb, path)
    key = cache_key(path, "smoke")
    assert cache_key(path, "cpu") != key
    nb.cells[3].outputs = []
    nbformat.write(nb, path)
    assert cache_key(path, "smoke") == key
    nb.cells[2].source += " Edited."
    nbformat.write(nb, path)
    assert cache_key(path, "smoke") != key


def test_cache_key_follows_the_bank_the_notebook_renders(tmp_path, monkeypatch):
    """A notebook's 面试口述版 is rendered from the bank: a bank edit must re-run it, or the book shows old answers."""
    import shutil

    from rlprep.interview.bank import default_bank_dir

    path = tmp_path / "nb.ipynb"
    nbformat.write(toy_notebook(), path)
    bank = tmp_path / "bank"
    shutil.copytree(default_bank_dir(), bank)
    monkeypatch.setenv("RLPREP_BANK", str(bank))
    key = cache_key(path, "smoke")
    (bank / "W12.yaml").write_text((bank / "W12.yaml").read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert cache_key(path, "smoke") != key


def test_external_loads_finds_cdn_assets_but_not_links(tmp_path):
    (tmp_path / "a.html").write_text('<a href="https://arxiv.org/abs/1707.06347">PPO</a><img src="/local.png">'
                                     '<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/katex/katex.css">')
    (tmp_path / "b.css").write_text("@font-face{src:url(https://fonts.gstatic.com/x.woff2)}")
    (tmp_path / "c.js").write_text('x.innerHTML = "<script src=//plausible.io/js/p.js>"')
    found = external_loads(tmp_path)
    assert len(found) == 3 and not any("arxiv" in f for f in found), found


def test_question_aliases_redirect_the_upper_case_url(tmp_path):
    add_question_aliases(tmp_path, ["W11"])
    assert 'url=../w11/' in (tmp_path / "questions" / "W11" / "index.html").read_text()


@pytest.mark.parametrize("argv", [["book", "--notebooks", "99_nope.ipynb"], ["book", "--profile", "tpu"]])
def test_book_bad_options_are_clean_errors(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "fix:" in err


def test_theme_hash_follows_the_source_not_what_the_build_writes(tmp_path):
    from rlprep.book.theme import source_hash

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "root.tsx").write_text("export default 1;")
    (tmp_path / "package-lock.json").write_text("{}")
    key = source_hash(tmp_path)
    for built in ("node_modules/x/index.js", "public/build/a.js", "public/katex/katex.min.css", "build/index.js"):
        (tmp_path / built).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / built).write_text("built")
    assert source_hash(tmp_path) == key
    (tmp_path / "package-lock.json").write_text('{"lockfileVersion": 3}')
    assert source_hash(tmp_path) != key


def test_no_node_is_an_error_that_says_how_to_install_it(monkeypatch):
    import shutil

    from rlprep.book.theme import check_node
    from rlprep.errors import RlprepError

    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RlprepError) as err:
        check_node()
    assert "Node.js" in err.value.problem and "apt-get install nodejs npm" in err.value.fix


def test_doi_links_are_written_so_that_the_offline_build_does_not_look_them_up():
    from rlprep.book.pages import without_doi_lookups

    text = "IEEE TIP 13(4), https://doi.org/10.1109/TIP.2003.819861 (SSIM), https://doi.org/10.1038/s41586-024-07566-y."
    assert without_doi_lookups(text) == "IEEE TIP 13(4), DOI `10.1109/TIP.2003.819861` (SSIM), DOI `10.1038/s41586-024-07566-y`."
    bank = load_bank()
    pages = {p.path: p.content for p in project_pages({}, bank, ROOT / "labs", "smoke")}
    assert "doi.org" not in pages["bank/W33.md"] and "DOI `10.1109/TSMC.1979.4310076`" in pages["bank/W33.md"]


def test_markdown_outputs_become_cells_after_their_code_cell():
    from rlprep.book.pages import markdown_outputs_as_cells

    nb = toy_notebook()
    nb.cells[3].outputs.append(nbformat.v4.new_output("display_data", data={"text/markdown": "*Run it in JupyterLab.*"}))
    out = markdown_outputs_as_cells(nb)
    assert [c.id for c in out.cells[3:5]] == ["w11-plot", "w11-plot-output-1"]
    assert out.cells[4].cell_type == "markdown" and out.cells[4].source == "*Run it in JupyterLab.*"
    assert [list(o["data"]) for o in out.cells[3].outputs] == [["image/png", "text/plain"]]
    assert len(nb.cells[3].outputs) == 2                                  # the executed notebook is left as it was
    assert [c.id for c in split_sections(out)["W11"]][-1] == "w11-plot-output-1"
