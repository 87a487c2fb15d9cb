"""The site's MyST project, written from the course's own sources (pure: no kernel, no node).

Layout under the project folder (URLs follow it, lower-cased by MyST; ``site.py`` adds the upper-case question URLs):

    index.md                    the start page: what the site is, the map, where each question is answered
    notebooks/NN_*.ipynb        the walkthrough notebooks, executed; each question heading carries a label (``w11``)
    questions/<ID>.ipynb        one page per bank id: its notebook section with outputs, linking the section, the lab
                                and the bank entry
    bank/<ID>.md                the bank entry: 面试口述版, misconceptions, follow-ups, sources, scoring rubric
    labs/<lab>/<lab>.ipynb      the labs as released (labs/: no solutions, no hidden tests)
    interview/<preset>.md       ``rlprep mock --interviewer --preset <preset> --format markdown`` at a fixed seed
    coding/<slug>.md            a coding-round problem; its solution on coding/<slug>-solution.md (``coding_pages.py``)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from rlprep.course import LABS, NOTEBOOKS, Unit

QUESTION_HEADING = re.compile(r"^###\s+([WGA]\d{2})\s+·\s+(.+)$")
SECTION_END = re.compile(r"^#{1,3}\s")
DOI_URL = re.compile(r"https?://(?:dx\.|www\.)?doi\.org/(10\.\d+/[^\s)]+?)(?=[.,;]?(?:\s|\)|$))")
"""A doi.org link, which MyST looks up on doi.org while building (a network request, and the build runs offline)."""
SHEET_SEED = 1
"""The interviewer sheets' seed: the site shows the sheet ``--seed 1`` prints."""


@dataclass(frozen=True)
class Page:
    """One file of the MyST project: a path inside it and its content (text, or a notebook)."""

    path: str
    content: str | nbformat.NotebookNode


def without_doi_lookups(text: str) -> str:
    """``https://doi.org/10.x/y`` written as ``DOI 10.x/y`` (code, not a link), so that MyST does not query doi.org."""
    return DOI_URL.sub(lambda m: f"DOI `{m.group(1)}`", text)


def _offline_markdown(nb):
    """``without_doi_lookups`` on a notebook's markdown cells and Markdown outputs, in place; returns ``nb``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = without_doi_lookups(cell.source)
        for out in cell.get("outputs", []):
            if "text/markdown" in out.get("data", {}):
                out["data"]["text/markdown"] = without_doi_lookups(out["data"]["text/markdown"])
    return nb


def markdown_outputs_as_cells(nb):
    """A copy of ``nb`` whose Markdown outputs (``render_spoken``, ``records.show``, the slider notes) are Markdown
    cells right after their code cell: the theme shows a notebook's Markdown outputs as nothing, but renders (and
    indexes for search) Markdown cells."""
    nb = nbformat.from_dict(nb)
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if cell.cell_type != "code":
            continue
        texts = [out["data"]["text/markdown"] for out in cell.outputs if "text/markdown" in out.get("data", {})]
        cell.outputs = [out for out in cell.outputs if "text/markdown" not in out.get("data", {})]
        cells += [nbformat.v4.new_markdown_cell(text, id=f"{cell.id}-output-{k}") for k, text in enumerate(texts, 1)]
    nb.cells = cells
    return nb


def question_id(cell) -> str | None:
    """The question id a markdown cell opens (``### W11 · …``), else None."""
    if cell.cell_type != "markdown" or not cell.source:
        return None
    match = QUESTION_HEADING.match(cell.source.splitlines()[0])
    return match.group(1) if match else None


def split_sections(nb) -> dict[str, list]:
    """Each question's cells, from its ``### ID ·`` heading to the next heading of level 1-3."""
    sections: dict[str, list] = {}
    current: list | None = None
    for cell in nb.cells:
        qid = question_id(cell)
        if qid:
            current = sections.setdefault(qid, [])
        elif cell.cell_type == "markdown" and cell.source and SECTION_END.match(cell.source.splitlines()[0]):
            current = None
        if current is not None:
            current.append(cell)
    return sections


def label(qid: str) -> str:
    """The MyST label on a question's heading in its notebook (the target of the question page's link)."""
    return qid.lower()


def labelled_notebook(nb):
    """A copy of an executed notebook whose question headings carry ``(w11)=`` labels."""
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        qid = question_id(cell)
        if qid:
            cell.source = f"({label(qid)})=\n{cell.source}"
    return nb


def _lab_path(unit: Unit) -> str:
    return unit.path  # labs/<lab>/<lab>.ipynb: the same place as in the repository, so relative links hold


def _labs_for(qid: str) -> list[Unit]:
    return [lab for lab in LABS if qid in lab.ids]


def _links(qid: str, unit: Unit | None) -> str:
    parts = []
    if unit is not None:
        parts.append(f"the walkthrough: [{Path(unit.path).stem}, section {qid}](../{unit.path}#{label(qid)})")
    parts += [f"the lab: [{lab.title}](../{_lab_path(lab)})" for lab in _labs_for(qid)]
    parts.append(f"the bank entry: [{qid} (面试口述版, key points, follow-ups)](../bank/{qid}.md)")
    parts.append(f"practise it: `rlprep mock --ids {qid}`")
    return "**Where this question lives.** " + " · ".join(parts)


def question_page(qid: str, question_zh: str, question_en: str, unit: Unit | None, cells: list) -> nbformat.NotebookNode:
    """The page for ``qid``: its heading as the title, the links, then its notebook section with outputs."""
    head = nbformat.v4.new_markdown_cell(f"# {qid} · {question_zh}\n\n*{question_en}*\n\n{_links(qid, unit)}",
                                         id=f"{qid.lower()}-page-head")
    body = []
    for cell in cells[1:] if cells else []:  # cells[0] is the heading, now the title
        cell = nbformat.from_dict(cell)
        cell.id = f"page-{cell.id}"  # MyST turns cell ids into project-wide identifiers: the notebook keeps the originals
        if cell.cell_type == "markdown":  # one level up: #### Derivation -> ## Derivation
            cell.source = re.sub(r"^(#{4,6}) ", lambda m: "#" * (len(m.group(1)) - 2) + " ", cell.source, flags=re.M)
        body.append(cell)
    if not cells:
        body.append(nbformat.v4.new_markdown_cell(
            "This question is in the bank only: its answer, key points and follow-ups are on the bank entry above.",
            id=f"{qid.lower()}-bank-only"))
    nb = nbformat.v4.new_notebook(cells=[head] + body)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def bank_page(q) -> str:
    """A bank entry as Markdown (the same renderers the notebooks call)."""
    from rlprep.interview.render import render_rubric, render_section_extras, render_spoken

    # "Bank entry" in the title: search lists this page and the question page side by side, and they must differ
    return (f"# Bank entry {q.id} · {q.question.zh}\n\n*{q.question.en}*\n\n"
            f"Topics: {', '.join(q.topics)} · difficulty {q.difficulty} · [the question page](../questions/{q.id}.ipynb)\n\n"
            f"## 面试口述版\n\n{render_spoken(q.id)}\n## Misconceptions, follow-ups and sources\n\n{render_section_extras(q.id)}"
            f"\n## Scoring rubric\n\n{render_rubric(q.id)}")


def interviewer_pages() -> list[Page]:
    """One interviewer's sheet per preset, as ``rlprep mock --interviewer --preset P --seed 1 --format markdown``."""
    from rlprep.interview.bank import load_bank
    from rlprep.interview.session import PRESETS, SessionSettings, interviewer_sheet, plan_questions

    bank = load_bank()
    pages = []
    for name, preset in PRESETS.items():
        settings = SessionSettings.from_preset(name, seed=SHEET_SEED)
        sheet = interviewer_sheet(plan_questions(bank, settings), settings, "markdown")
        body = sheet.split("\n", 1)[1] if sheet.startswith("# ") else sheet
        command = f"rlprep mock --interviewer --preset {name} --seed {SHEET_SEED} --format markdown"
        pages.append(Page(f"interview/{name}.md", f"# Interviewer's sheet: {name}\n\n*{preset.description}.* "
                                                   f"Printed by `{command}`; another seed draws other questions.\n{body}"))
    return pages


def start_page(bank: dict, profile: str) -> str:
    """The site's index: how to use it, the notebooks with their question ids, the labs and the sheets."""
    lines = ["# rlprep: LLM reinforcement-learning interview prep", "",
             "Every answer of the course with its evidence, readable without running anything: the walkthrough "
             f"notebooks executed in the `{profile}` profile, a page per interview question, the graded labs as "
             "released and the mock interviewer's sheets. The sliders show their default figure here; run the "
             "notebooks in JupyterLab (`make lab`) to move them and to train the models yourself.", "",
             "## Walkthrough notebooks", "", "| notebook | questions |", "|---|---|"]
    for unit in NOTEBOOKS:
        ids = " ".join(f"[{q}](questions/{q}.ipynb)" for q in unit.ids if q in bank) or "—"
        lines.append(f"| [{unit.title}]({unit.path}) | {ids} |")
    lines += ["", "## Labs", "", "| lab | questions |", "|---|---|"]
    for lab in LABS:
        ids = " ".join(f"[{q}](questions/{q}.ipynb)" for q in lab.ids if q in bank)
        lines.append(f"| [{lab.title}]({_lab_path(lab)}) | {ids} |")
    lines += ["", "## All questions", "", "[The question index](questions/index.md) lists every id with its question; "
              "each has a page at `questions/<ID>`.", "", "## Mock interviews", "",
              "[The interviewer's sheets](interview/index.md), one per preset, for practising in pairs."]
    return "\n".join(lines) + "\n"


def question_index(bank: dict) -> str:
    rows = ["# Questions", "", "| id | question | walkthrough |", "|---|---|---|"]
    for qid, q in bank.items():
        unit = _notebook_of(qid)
        where = f"[{Path(unit.path).stem}]({'../' + unit.path}#{label(qid)})" if unit else "bank only"
        rows.append(f"| [{qid}]({qid}.ipynb) | {q.question.zh} | {where} |")
    return "\n".join(rows) + "\n"


def _notebook_of(qid: str) -> Unit | None:
    return next((u for u in NOTEBOOKS if qid in u.ids), None)


def project_pages(executed: dict[str, nbformat.NotebookNode], bank: dict, labs_root: Path, profile: str) -> list[Page]:
    """Every page of the site. ``executed`` maps a notebook's repository path to its executed notebook."""
    pages = [Page("index.md", start_page(bank, profile)), Page("questions/index.md", question_index(bank))]
    sections: dict[str, list] = {}
    for path, nb in executed.items():
        nb = _offline_markdown(markdown_outputs_as_cells(nb))
        pages.append(Page(path, labelled_notebook(nb)))
        sections.update(split_sections(nb))
    for qid, q in bank.items():
        pages.append(Page(f"questions/{qid}.ipynb",
                          question_page(qid, q.question.zh, q.question.en, _notebook_of(qid), sections.get(qid, []))))
        pages.append(Page(f"bank/{qid}.md", without_doi_lookups(bank_page(q))))
    for lab in LABS:
        pages.append(Page(lab.path, nbformat.read(labs_root / Path(lab.path).relative_to("labs"), as_version=4)))
    sheets = interviewer_pages()
    pages.append(Page("interview/index.md", "# Interviewer's sheets\n\nOne sheet per `rlprep mock` preset:\n\n"
                      + "\n".join(f"- [{Path(p.path).stem}]({Path(p.path).name})" for p in sheets) + "\n"))
    from rlprep.book.coding_pages import coding_pages

    return pages + sheets + [Page(path, text) for path, text in coding_pages()]


def toc(pages: list[Page]) -> list[dict]:
    """The table of contents (``project.toc`` in myst.yml), in the course's order."""
    paths = [p.path for p in pages]

    def files(prefix: str, suffix: str = "") -> list[dict]:
        return [{"file": p} for p in paths if p.startswith(prefix) and p.endswith(suffix) and not p.endswith("index.md")]

    return [{"file": "index.md"},
            {"title": "Walkthrough notebooks", "children": files("notebooks/")},
            {"file": "questions/index.md", "children": files("questions/")},
            {"title": "Labs", "children": files("labs/")},
            {"file": "interview/index.md", "children": files("interview/")},
            {"file": "coding/index.md", "children": files("coding/")},
            {"title": "Question bank", "children": files("bank/")}]
