"""The website's coding pages: an index, a statement page per problem with its examples, and the solution on a
page of its own, linked from the bottom of the statement (generated without building the site)."""

from __future__ import annotations

from rlprep.book.coding_pages import coding_pages
from rlprep.book.pages import toc
from rlprep.coding.bank import load_problems
from rlprep.coding.sources import reference_source


def test_a_statement_page_and_a_separate_solution_page_per_problem():
    pages = dict(coding_pages())
    bank = load_problems()
    assert set(pages) == {"coding/index.md"} | {f"coding/{s}{x}.md" for s in bank for x in ("", "-solution")}
    for slug, problem in bank.items():
        statement, solution = pages[f"coding/{slug}.md"], pages[f"coding/{slug}-solution.md"]
        assert problem.statement.en in statement and problem.statement.zh in statement and ">>> " in statement
        assert problem.library in statement and f"({slug}-solution.md)" in statement.rsplit("---", 1)[1]
        assert "def " in solution and "### BEGIN" not in solution
        body = [line.strip() for line in reference_source(problem).splitlines() if len(line.strip()) > 25]
        leaked = [line for line in body if line in statement and line not in problem.signature]
        assert not leaked, (slug, leaked[:3])  # no line of the solution on the statement page
        assert problem.follow_ups[0].a.en in solution and problem.follow_ups[0].a.en not in statement
        assert f"]({slug}.md)" in pages["coding/index.md"]
    entries = toc([type("P", (), {"path": p})() for p in pages])
    assert {"file": "coding/index.md", "children": [{"file": p} for p in pages if p != "coding/index.md"]} in entries
