"""The section template (issue #35): every id's layers, each with one job, checked for all 61 ids.

A notebook section is ``### <ID> · question`` with its anchor, then these layer headings, each exactly once and in this
order: the 30-second answer, the derivation, the evidence, the misconceptions and follow-ups (``render_section_extras``)
and the 面试口述版 (``render_spoken``). The bank's key points are the mock interview's scoring rubric and are never
rendered in a notebook; its misconceptions are structured claim/answer pairs; and no learner-visible source carries an
internal tag ("(secondary)"), a module name (``rlprep.algos.…``) or an audit-log locator (commit hash, line number,
"search the file for …"). ``docs/authoring-notebooks.md`` states each layer's job.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from rlprep.course import NOTEBOOKS
from rlprep.interview.bank import MISCONCEPTIONS_RANGE, Misconception, load_bank

ROOT = Path(__file__).resolve().parents[1]
BANK_DIR = ROOT / "src" / "rlprep" / "interview" / "bank"
LAYERS = ("#### 30-second answer", "#### Derivation", "#### Evidence you can run", "#### Misconceptions and follow-ups",
          "#### 面试口述版")
OLD_LAYERS = ("#### Short answer", "#### Full answer", "#### Misconceptions, follow-ups and sources")


@pytest.fixture(scope="module")
def bank(request) -> dict:
    mp = pytest.MonkeyPatch()
    mp.delenv("RLPREP_BANK", raising=False)
    request.addfinalizer(mp.undo)
    return load_bank(BANK_DIR)


def section_cells(nb) -> dict[str, list]:
    """Cells of each ``### <ID> ·`` section, keyed by id; a section ends at the next ``#``/``##``/``###`` heading."""
    sections: dict[str, list] = {}
    current = None
    for cell in nb.cells:
        first = cell.source.lstrip().split("\n", 1)[0] if cell.cell_type == "markdown" else ""
        match = re.match(r"^###\s+([WGA]\d\d)\s+·", first)
        if match:
            current = match.group(1)
            sections[current] = []
        elif re.match(r"^#{1,3}\s", first):
            current = None
        if current:
            sections[current].append(cell)
    return sections


def layer_sequence(cells: list) -> list[str]:
    """Every ``####`` layer heading (new or old name) in the order the section's markdown has them."""
    found = []
    for cell in cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if line.rstrip() in LAYERS + OLD_LAYERS:
                found.append(line.rstrip())
    return found


def _all_sections() -> dict[str, tuple[str, list]]:
    out = {}
    for unit in NOTEBOOKS:
        if unit.ids:
            for qid, cells in section_cells(nbformat.read(ROOT / unit.path, as_version=4)).items():
                out[qid] = (unit.path, cells)
    return out


SECTIONS = _all_sections()


def test_the_template_covers_all_61_ids(bank):
    assert len(bank) == 61 and sorted(SECTIONS) == sorted(bank), sorted(set(bank) ^ set(SECTIONS))


# -- layers: each once, in order ----------------------------------------------------------------------------------------
def test_layer_detector_flags_a_missing_a_repeated_and_a_reordered_layer():
    md = nbformat.v4.new_markdown_cell
    good = [md("### W04 · q"), md(LAYERS[0]), md(LAYERS[1] + "\n\ntext"), md(LAYERS[2]), md(LAYERS[3]), md(LAYERS[4])]
    assert layer_sequence(good) == list(LAYERS)
    assert layer_sequence([md("### W04 · q"), md(LAYERS[1]), md(LAYERS[0])]) != list(LAYERS)
    assert layer_sequence(good + [md(LAYERS[0])]) != list(LAYERS)
    assert layer_sequence([md("#### Short answer"), *good[2:]]) != list(LAYERS)


@pytest.mark.parametrize("qid", sorted(SECTIONS))
def test_section_has_every_layer_once_and_in_order(qid):
    path, cells = SECTIONS[qid]
    assert layer_sequence(cells) == list(LAYERS), f"{path} {qid}: layers must be exactly {LAYERS}, in order"
    text = "\n".join(c.source for c in cells)
    assert f'<a id="{qid}"></a>' in text, f"{path} {qid}: the section needs its anchor"
    assert re.search(rf"render_section_extras\(\s*['\"]{qid}['\"]\s*\)", text), f"{path} {qid}"
    assert re.search(rf"render_spoken\(\s*['\"]{qid}['\"]\s*\)", text), f"{path} {qid}"


@pytest.mark.parametrize("qid", sorted(SECTIONS))
def test_extras_and_spoken_are_rendered_in_their_own_layers(qid):
    """render_section_extras sits under the misconceptions layer, render_spoken under the 面试口述版: nowhere else."""
    _, cells = SECTIONS[qid]
    layer, where = None, {}
    for cell in cells:
        if cell.cell_type == "markdown":
            layer = next((line.rstrip() for line in cell.source.splitlines() if line.rstrip() in LAYERS), layer)
        elif "render_section_extras(" in cell.source or "render_spoken(" in cell.source:
            key = "extras" if "render_section_extras(" in cell.source else "spoken"
            where[key] = layer
    assert where == {"extras": LAYERS[3], "spoken": LAYERS[4]}, f"{qid}: {where}"


# -- the key points are the rubric, not a notebook layer ---------------------------------------------------------------
def test_notebooks_never_render_the_key_points(bank):
    from rlprep.interview.render import render_section_extras

    for qid, question in bank.items():
        extras = render_section_extras(qid)
        shown = [kp.en for kp in question.key_points if kp.en in extras or kp.zh in extras]
        assert shown == [], f"{qid}: render_section_extras shows key points {shown}"
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            assert "render_rubric" not in cell.source, f"{path.name}#{cell.id}: the rubric is the mock interview's"


def test_extras_render_misconceptions_ladder_and_sources_in_that_order(bank):
    from rlprep.interview.render import render_section_extras

    question = bank["A03"]
    extras = render_section_extras("A03")
    positions = [extras.index(question.misconceptions[0].claim.en), extras.index(question.misconceptions[0].answer.en),
                 extras.index(question.follow_ups[0].q.en), extras.index(question.follow_ups[-1].a.en),
                 extras.index(question.sources[0])]
    assert positions == sorted(positions)


# -- misconceptions: structured claim/answer pairs ---------------------------------------------------------------------
def test_every_entry_has_structured_misconceptions(bank):
    for qid, question in bank.items():
        assert MISCONCEPTIONS_RANGE[0] <= len(question.misconceptions) <= MISCONCEPTIONS_RANGE[1], qid
        for m in question.misconceptions:
            assert isinstance(m, Misconception), qid
            assert m.claim.en != m.answer.en and m.claim.zh != m.answer.zh, qid


# A misconception is a statement a candidate makes, answered; it never argues with an answer the learner never saw.
_UNSEEN_ANSWER = re.compile(r"common (?:answer|phrasing|claim|suggestion|tuning table)|often given as the answer"
                            r"|常见(?:答法|答案|说法|建议|的排查表)", re.IGNORECASE)


def test_unseen_answer_detector():
    assert _UNSEEN_ANSWER.search("A common answer says the clip is one-sided")
    assert _UNSEEN_ANSWER.search("常见答法把 KL 约束列为防范手段")
    assert not _UNSEEN_ANSWER.search("Clipping limits the absolute change in probability.")


def test_misconceptions_never_argue_with_an_unseen_answer(bank):
    found = {qid: m.claim.en for qid, q in bank.items() for m in q.misconceptions
             if any(_UNSEEN_ANSWER.search(t) for t in (m.claim.zh, m.claim.en, m.answer.zh, m.answer.en))}
    assert found == {}


# -- no internal tags, module names or audit-log locators in what a learner reads ------------------------------------
INTERNAL_TAG = re.compile(
    r"\(secondary\b|\bsecondary\)|[—:]\s*secondary\b|\bunverified\b"       # a source-quality tag for the authors
    r"|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"                 # a commit hash
    r"|#L\d+|\bL\d{3,}\b|\blines? \d+"                                     # a line number
    r"|\bat commit\b|search (?:the|this) file",                             # audit-log locators
    re.IGNORECASE)
MODULE_NAME = re.compile(r"\brlprep\.[a-z_]+")


@pytest.mark.parametrize("text", [
    "Yao et al. 2025, blog — secondary", "DAPO (secondary) Sec. 3", "a blog: secondary)",
    "verl/trainer/ppo/core_algos.py at commit b178a3c", "https://github.com/x/y/blob/14ef1aba152fddbc5a58f3a8/a.py",
    "grpo_trainer.py#L2767-L2788", "the 'ipo' loss (lines 1393-1404)", "(search the file for 'double norm(')",
])
def test_internal_tag_detector_flags_audit_log_text(text):
    assert INTERNAL_TAG.search(text), text


@pytest.mark.parametrize("text", [
    "everything else secondary", "GSPO, arXiv 2507.18071, Sec. 5.1", "https://github.com/huggingface/trl/blob/v1.16.0/a.py",
    "DeepSeek-V3, 14.8T tokens, 2.788M H800 GPU-hours", "clip ranges 3e-4 / 4e-4", "Figure 2, Table 1",
])
def test_internal_tag_detector_spares_citations(text):
    assert not INTERNAL_TAG.search(text), text


def test_bank_sources_carry_no_internal_tag_or_module_name(bank):
    found = {qid: s for qid, q in bank.items() for s in q.sources if INTERNAL_TAG.search(s) or MODULE_NAME.search(s)}
    assert found == {}, "a source names the paper and its section, or an official document by URL"


def test_bank_text_carries_no_internal_tag(bank):
    found = {}
    for qid, q in bank.items():
        texts = [q.spoken_answer_zh] + [t for kp in q.key_points for t in (kp.zh, kp.en)]
        texts += [t for fu in q.follow_ups for t in (fu.q.zh, fu.q.en, fu.a.zh, fu.a.en)]
        texts += [t for m in q.misconceptions for t in (m.claim.zh, m.claim.en, m.answer.zh, m.answer.en)]
        hits = [INTERNAL_TAG.search(t).group(0) for t in texts if INTERNAL_TAG.search(t)]
        if hits:
            found[qid] = hits
    assert found == {}


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_markdown_carries_no_internal_tag(path):
    """Anywhere but the Reproducibility note (which names cache keys and commands by design)."""
    hits = [f"{cell.id}: {m.group(0)}" for cell in nbformat.read(path, as_version=4).cells
            if cell.cell_type == "markdown" and not cell.source.lstrip().startswith("## Reproducibility")
            for m in INTERNAL_TAG.finditer(cell.source)]
    assert hits == []


# -- every A id has its section ----------------------------------------------------------------------------------------
def test_every_atlas_id_has_a_notebook_section_under_its_anchor(bank):
    atlas = [qid for qid in bank if qid.startswith("A")]
    homes = {qid: unit.path for unit in NOTEBOOKS for qid in unit.ids}
    for qid in atlas:
        assert qid in homes, f"{qid} is not listed in rlprep.course.NOTEBOOKS"
        assert bank[qid].notebook == f"{homes[qid]}#{qid}", f"{qid}: bank link {bank[qid].notebook}"
        assert qid in SECTIONS and SECTIONS[qid][0] == homes[qid], f"{qid}: no '### {qid} ·' section in {homes[qid]}"
