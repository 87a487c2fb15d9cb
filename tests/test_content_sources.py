"""Learner-facing content: every bank source is checkable, and no internal note leaks into what a learner reads.

Three rules (issue #17, #35): each source line of a bank entry names a paper by arXiv id or an official document by URL
(or DOI link), never the course's own modules, and each entry cites at least one paper or document; no
notebook or bank file names the authors' internal reference sheet; and learner text never calls the source documents
"the seed" / "种子" (they are "the source question list", 原题单, explained once on the start page). Random seeds,
``seed=0`` and PMA "seed vectors" are other senses of the word and must not trip the check, which the detector's own
test pins down.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from rlprep.interview.bank import load_bank

ROOT = Path(__file__).resolve().parents[1]
BANK_DIR = ROOT / "src" / "rlprep" / "interview" / "bank"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LEARNER_NOTEBOOKS = NOTEBOOKS + sorted((ROOT / "labs").glob("*/*.ipynb")) + sorted((ROOT / "solutions").glob("*/*.ipynb"))
START_PAGE = ROOT / "notebooks" / "00_start_here.ipynb"

ARXIV_ID = re.compile(r"arXiv[ :]?\d{4}\.\d{4,5}")
URL = re.compile(r"https?://[\w.-]+\.[a-z]{2,}\S*")
COURSE_CODE = re.compile(r"\brlprep\.[a-z_]+(?:\.[a-z_]+)+")
INTERNAL_FILES = ("facts.md", "shared/references", "toolchain-notes.md")

# "the seed" as the name of a source document: a subject that says, lists or blames something, a possessive, or a
# document noun. Deliberately not matched: "seed=0", "random seed", "5 seeds", "per-seed", "ByteDance Seed", 种子向量.
_SEED_EN = re.compile(
    r"\bthe seed(?:'s\b| (?:says|lists|blames|suggests|calls|describes|gives|names|equates|writes|labels|centres|"
    r"notes|documents?|list|answers?|text|materials?)\b)"
    r"|\bseed (?:documents?|materials?|notes|list|answers?|text|pseudo-code)\b"
    r"|\bseed[- ]00\d\b|\(and the seed\)",
    re.IGNORECASE,
)
_SEED_ZH = re.compile(r"(?<!随机)(?<!固定)种子(?:材料|文档|答案|资料|排查表|说|把|只|称|写|列|建议|举|的(?:方案|伪代码|\s|[A-Za-z]))")


def source_document_mentions(text: str) -> list[str]:
    """Every place where ``text`` calls a source document "the seed" / "种子" (the form issue #17 forbids)."""
    return [m.group(0) for m in _SEED_EN.finditer(text)] + [m.group(0) for m in _SEED_ZH.finditer(text)]


def _bank(monkeypatch) -> dict:
    monkeypatch.delenv("RLPREP_BANK", raising=False)
    return load_bank(BANK_DIR)


def _learner_texts(question) -> list[tuple[str, str]]:
    """(field, text) for every field a learner reads; ``source`` (seed-000/seed-002) is a provenance tag never shown."""
    texts = [("question", question.question.zh), ("question", question.question.en),
             ("spoken_answer_zh", question.spoken_answer_zh)]
    texts += [(f"key_points[{i}]", t) for i, kp in enumerate(question.key_points) for t in (kp.zh, kp.en)]
    texts += [(f"follow_ups[{i}]", t) for i, fu in enumerate(question.follow_ups)
              for t in (fu.q.zh, fu.q.en, fu.a.zh, fu.a.en)]
    texts += [(f"misconceptions[{i}]", t) for i, m in enumerate(question.misconceptions)
              for t in (m.claim.zh, m.claim.en, m.answer.zh, m.answer.en)]
    texts += [(f"sources[{i}]", s) for i, s in enumerate(question.sources)]
    return texts


# -- the detector itself ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "The seed says clipping ignores direction.",
    "the seed's compute_gae handles one trajectory",
    "The seed documents blame over-optimisation",
    "what the seed notes get wrong",
    "The question (and the seed) call asymmetric clipping DAPO's core idea",
    "see seed 000 for the list",
    "种子材料说“实践常用 0.9~0.95”",
    "种子答案把 KL 约束列为防范手段",
    "种子说 BoN 的缺点是搜索空间有限",
    "种子的方案以专家排序为主",
    "种子的 compute_gae 只处理单条轨迹",
])
def test_detector_finds_the_seed_as_a_document(text):
    assert source_document_mentions(text), text


@pytest.mark.parametrize("text", [
    "torch.manual_seed(0); ToyPPOConfig(seed=0)",
    "seed = 3 and seeds = range(5); the per-seed values",
    "Seed-averaged toy run over 5 seeds, same seeds as above",
    "fix the random seed; the seed is part of the cache key",
    "Lu et al. 2025 (ByteDance Seed), SUPO",
    "有没有对照和多次种子？固定种子，比较成功率；几个种子和方差",
    "可学习种子向量做注意力池化（PMA）；随机种子的方差",
    "the source question list's reference answer says",
])
def test_detector_ignores_random_seeds_and_the_new_name(text):
    assert source_document_mentions(text) == [], text


# -- the bank -----------------------------------------------------------------------------------------------------------
def test_every_bank_source_names_a_paper_or_an_official_document(monkeypatch):
    unsourced, no_paper = {}, []
    for qid, question in _bank(monkeypatch).items():
        bad = [s for s in question.sources if not (ARXIV_ID.search(s) or URL.search(s)) or COURSE_CODE.search(s)]
        if bad:
            unsourced[qid] = bad
        if not any(ARXIV_ID.search(s) or URL.search(s) for s in question.sources):
            no_paper.append(qid)
    assert unsourced == {}, "each source needs an arXiv id or an official URL/DOI link, and names no rlprep.* module"
    assert no_paper == [], "each entry must cite at least one paper (arXiv id) or official document (URL)"


def test_source_check_rejects_a_bare_citation():
    bare = "Ng, Harada, Russell 1999, Policy invariance under reward transformations, ICML 1999"
    assert not (ARXIV_ID.search(bare) or URL.search(bare))
    assert COURSE_CODE.search("rlprep.algos.pg_losses.gspo_loss")  # a module is not a source (issue #35)
    assert ARXIV_ID.search("Schulman et al. 2017, PPO, arXiv 1707.06347")
    assert URL.search("DeepSeek-V3.1 model card, https://huggingface.co/deepseek-ai/DeepSeek-V3.1")


def test_bank_learner_text_never_calls_a_source_document_the_seed(monkeypatch):
    found = {}
    for qid, question in _bank(monkeypatch).items():
        for field, text in _learner_texts(question):
            if source_document_mentions(text):
                found.setdefault(qid, []).append((field, source_document_mentions(text)))
    assert found == {}


# -- files: notebooks, labs, solutions, bank YAML ------------------------------------------------------------------
def test_no_notebook_or_bank_file_names_an_internal_file():
    files = LEARNER_NOTEBOOKS + sorted(BANK_DIR.glob("*.yaml"))
    assert len(files) > 52
    leaks = {str(f.relative_to(ROOT)): name for f in files for name in INTERNAL_FILES
             if name in f.read_text(encoding="utf-8")}
    assert leaks == {}


TEST_FILE = re.compile(r"\btests/[\w/]*test_\w+\.py")


def test_no_notebook_or_bank_file_names_a_test_file():
    """A learner reads what the course shows, not its test suite's file names ("the course's tests check ...")."""
    files = LEARNER_NOTEBOOKS + sorted(BANK_DIR.glob("*.yaml"))
    leaks = {str(f.relative_to(ROOT)): TEST_FILE.findall(f.read_text(encoding="utf-8")) for f in files}
    assert {k: v for k, v in leaks.items() if v} == {}
    assert TEST_FILE.findall("checked in `tests/test_algos_atlas_trl.py`") == ["tests/test_algos_atlas_trl.py"]


def test_notebooks_never_call_a_source_document_the_seed():
    found = {}
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            hits = source_document_mentions(cell.source)
            if hits:
                found[f"{path.name}#{cell.id}"] = hits
    assert found == {}


def test_start_page_explains_the_source_question_list():
    text = "\n".join(c.source for c in nbformat.read(START_PAGE, as_version=4).cells if c.cell_type == "markdown")
    assert "source question list" in text and "原题单" in text
    assert "W01–W33" in text and "G01–G19" in text


# Measurement logistics (dates, load averages, shared machines) stay out of the answers (issue #17;
# docs/authoring-notebooks.md). tests/test_notebook_reproducibility.py keeps them out of the "## Reproducibility" note
# too: there a code cell prints them from the record that holds them.
_LOGISTICS = re.compile(r"\b20\d\d-\d\d-\d\d\b|load average|load ≈|shared cores|cores shared|shared with other jobs",
                        re.IGNORECASE)


def logistics_outside_reproducibility(nb) -> list[str]:
    """``cell id: match`` for every date or machine note outside the notebook's Reproducibility note."""
    return [f"{cell.id}: {m.group(0)}" for cell in nb.cells
            if not (cell.cell_type == "markdown" and cell.source.lstrip().startswith("## Reproducibility"))
            for m in _LOGISTICS.finditer(cell.source)]


def test_logistics_detector_flags_answers_and_spares_the_note():
    answer = nbformat.v4.new_markdown_cell("**Measured (2026-11-30):** 0.82, 2 cores at load average 3."); answer.id = "a"
    note = nbformat.v4.new_markdown_cell("## Reproducibility\n\nRun on 2026-11-30, load average 3."); note.id = "r"
    code = nbformat.v4.new_code_cell("rng = np.random.default_rng(0)  # 2 cores"); code.id = "c"
    nb = nbformat.v4.new_notebook(cells=[answer, note, code])
    assert logistics_outside_reproducibility(nb) == ["a: 2026-11-30", "a: load average"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_measurement_logistics_sit_only_in_the_reproducibility_note(path):
    assert logistics_outside_reproducibility(nbformat.read(path, as_version=4)) == []


# The course's internals stay out of the answers (issue #17, review round 8). A learner rehearses the 30-second answer, the
# derivation, the misconceptions and the bank's key points, follow-ups and 面试口述版 for an interview, where "the
# course's test suite checks it", "our trainer's warm start", a side script or `rlprep.x.y` mean nothing. Evidence cells
# may name the API the learner calls; the test suite, side scripts and trainer warm-start logistics appear nowhere.
ANSWER_LAYERS = ("#### 30-second answer", "#### Derivation", "#### Misconceptions")
_LAYER_HEADINGS = ANSWER_LAYERS + ("#### Evidence you can run", "#### 面试口述版")
_INTERNALS_ANYWHERE = re.compile(
    r"\b(?:the course's|this course's|our)(?: own| slow)? tests?\b(?: suite)?"
    r"|not part of the notebook|\bside script|\btrainer's (?:own )?(?:\w+ )?warm[- ]start"
    r"|本课程|这门课的|本节(?:的)?(?:第.个)?(?:实验|运行)",
    re.IGNORECASE,
)
_INTERNALS_IN_ANSWERS = re.compile(
    r"\brlprep\.[a-z_]+|\bour (?:trainers?|pipeline)\b|\bthe course's own (?:pipeline|trainer)\b|\bthis section's\b"
    r"|\bthis course's\b",
    re.IGNORECASE,
)


def course_internals(text: str, answer_layer: bool) -> list[str]:
    """Every place where ``text`` names the course's internals; module paths count only inside an answer layer."""
    hits = [m.group(0) for m in _INTERNALS_ANYWHERE.finditer(text)]
    return hits + ([m.group(0) for m in _INTERNALS_IN_ANSWERS.finditer(text)] if answer_layer else [])


def layered_markdown(nb):
    """(layer heading or None, cell) for each markdown cell; a layer runs until the next layer or section heading."""
    layer = None
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        first = cell.source.lstrip().split("\n", 1)[0]
        if first.startswith(("# ", "## ", "### ")):
            layer = None
        layer = next((h for h in _LAYER_HEADINGS if first.startswith(h)), layer)
        yield layer, cell


def test_internals_detector_flags_the_reviewed_forms_and_spares_the_rest():
    assert course_internals("the course's slow test suite checks the KD direction", False) == [
        "the course's slow test suite"]
    assert course_internals("A run (a script with the same budgets, not part of the notebook)", False) == [
        "not part of the notebook"]
    assert course_internals("This is not the GRPO trainer's own cpu warm start", False) == [
        "trainer's own cpu warm start"]
    assert course_internals("computed exactly (`rlprep.distillation.reverse_kl_per_token`)", True) == [
        "rlprep.distillation"]
    assert course_internals("实现上（TRL、本课程的 generalized_jsd_per_token）", True) == ["本课程"]
    # the API named in an evidence cell, and a repository's own tests in a code-RL answer, are not internals
    assert course_internals("`rlprep.demos.code_reward` trains the toy", False) == []
    assert course_internals("the reward is the repository's test suite after the final patch", True) == []


def test_notebook_answers_never_name_the_course_internals():
    found = {}
    for path in NOTEBOOKS:
        for layer, cell in layered_markdown(nbformat.read(path, as_version=4)):
            hits = course_internals(cell.source, answer_layer=layer in ANSWER_LAYERS)
            if hits:
                found[f"{path.name}#{cell.id}"] = hits
    assert found == {}


def test_bank_answers_never_name_the_course_internals(monkeypatch):
    found = {}
    for qid, question in _bank(monkeypatch).items():
        for field, text in _learner_texts(question):
            if field.startswith("sources"):  # sources have their own rule (above): no module names at all
                continue
            hits = course_internals(text, answer_layer=True)
            if hits:
                found.setdefault(qid, []).append((field, hits))
    assert found == {}
