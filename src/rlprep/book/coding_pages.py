"""The coding bank on the website: an index, a page per problem (statement, contract, examples, the library function
it mirrors), and its solution on a separate page linked from the bottom of the statement.

    coding/index.md             every problem by topic, with its target time
    coding/<slug>.md            the statement page (what the starter file shows, and how to practise it)
    coding/<slug>-solution.md   the reference, its complexity and numerics, the follow-ups with model answers
"""

from __future__ import annotations


def _statement(p) -> str:
    from rlprep.coding.examples import examples_text

    retests = "\n".join(f"- **{r.name}**: {r.twist.en} / {r.twist.zh}" for r in p.retests)
    return (f"# {p.title.en} · {p.title.zh}\n\n"
            f"`{p.slug}` · {p.topic} · target **{p.minutes} minutes** · the library function: `{p.library}`\n\n"
            f"## Problem\n\n{p.statement.en}\n\n{p.statement.zh}\n\n"
            f"## Contract\n\n{p.contract.en}\n\n{p.contract.zh}\n\n"
            f"## Signature\n\n```python\n{p.signature.rstrip()}\n```\n\n"
            f"## Examples\n\n```python\n{examples_text(p)}\n```\n\n"
            f"## Practise it\n\n`rlprep mock --coding --problem {p.slug}` writes this starter file, starts the "
            "clock and grades `submit` with the hidden tests in the sandbox (`rlprep coding grade FILE --problem "
            f"{p.slug}` grades a file outside a round). A failed or slow round comes back on day 2 and day 7 as:\n\n"
            f"{retests}\n\n---\n\nTried it? [The solution, its numerics and the interviewer's follow-ups]"
            f"({p.slug}-solution.md)\n")


def _solution(p) -> str:
    from rlprep.coding.sources import reference_is_shared, reference_source

    shared = reference_is_shared(p)
    origin = (f"This is the course's one copy of the formula, `{shared}` (inlined here as the file a learner "
              "would hand in).\n\n" if shared else "")
    follow = "\n\n".join(f"**Q{i}.** {f.q.en} / {f.q.zh}\n\n*A.* {f.a.en}\n\n{f.a.zh}"
                         for i, f in enumerate(p.follow_ups, 1))
    return (f"# Solution: {p.title.en} · {p.title.zh}\n\n[Back to the problem]({p.slug}.md)\n\n"
            f"{origin}```python\n{reference_source(p).rstrip()}\n```\n\n"
            f"## Complexity and numerics\n\n{p.notes.en}\n\n{p.notes.zh}\n\n"
            f"## The library\n\n`{p.library}`: the hidden tests compare your answer with it where it exists.\n\n"
            f"## Follow-ups (追问) with model answers\n\n{follow}\n")


def coding_pages() -> list[tuple[str, str]]:
    """(path, Markdown) of the index, then each problem's statement page and solution page (``book.pages`` makes
    them its ``Page`` objects; this module imports nothing of it, so neither depends on the other both ways)."""
    from rlprep.coding.bank import TOPICS, load_problems

    bank = load_problems()
    rows = ["# Coding rounds", "", "Timed hand-coding problems of LLM-RL interviews, graded by hidden tests in the "
            "labs' sandbox (`rlprep mock --coding`). Each page has the statement and examples; the solution is on a "
            "page of its own.", ""]
    pages = []
    for topic in TOPICS:
        items = [p for p in bank.values() if p.topic == topic]
        if not items:
            continue
        rows += [f"## {topic}", "", "| problem | minutes | library |", "|---|---|---|"]
        rows += [f"| [{p.title.en} · {p.title.zh}]({p.slug}.md) | {p.minutes} | `{p.library}` |" for p in items]
        rows.append("")
        for p in items:
            pages += [(f"coding/{p.slug}.md", _statement(p)), (f"coding/{p.slug}-solution.md", _solution(p))]
    return [("coding/index.md", "\n".join(rows))] + pages
