"""``rlprep classroom report``: what an instructor needs after the grades, as one self-contained HTML page.

For each lab: the distribution of scores (a histogram, matplotlib, embedded as a PNG), the pass rate of every test
cell and of every property it checks (hidden ones marked: what the class did not understand), and the tests that
stopped on an error rather than a property; then the late hand-ins and, per lab, the students of the roster with no
submission. The numbers come from :func:`summarise` (also written as JSON beside the page, and what
``rlprep.classroom.crosscheck`` compares with a simulated class's expected grades); the page is rendered from them.

Student ids, names and e-mail come from the gradebook and may be hostile (a hub user name, a roster imported from a
spreadsheet): every string is escaped (``html.escape``, quotes included), the page carries no script and its
Content-Security-Policy allows none (images from ``data:`` only, inline styles), and no student string reaches a
plot's text (matplotlib would read ``$...$`` as mathtext).
"""

from __future__ import annotations

import base64
import datetime
import html
import io
import json
import statistics
from pathlib import Path

from rlprep.classroom.results import ClassResults, count_cells, read_results

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:75em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}
td.n{text-align:right}tr.bad td{background:#fde8e8}.hidden{font-size:.8em;color:#a0522d}
h2{border-bottom:2px solid #444;margin-top:2em}.small{color:#666;font-size:.9em}"""


def _esc(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _rate(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _when(value: datetime.datetime | None) -> str:
    return value.isoformat(sep=" ", timespec="seconds") if value else ""


def summarise(results: ClassResults) -> dict:
    """The report's numbers: per lab the scores and their statistics, per test cell and property the counts, the
    late hand-ins and the students with no submission. Plain JSON types."""
    names = {s.id: s.name for s in results.students}
    labs = []
    for lab in results.labs:
        subs = results.of_lab(lab.name)
        scores = [s.score for s in subs]
        cells = []
        for cc in count_cells(lab, subs):
            cells.append({
                "grade_id": cc.test.grade_id, "points": cc.test.points, "full": cc.full, "partial": cc.partial,
                "ungraded": cc.ungraded, "pass_rate": _rate(cc.pass_rate), "errors": dict(sorted(cc.errors.items())),
                "properties": [{"text": pc.prop.text, "hidden": pc.prop.hidden, "passed": pc.passed,
                                "failed": pc.failed, "unreached": pc.unreached, "pass_rate": _rate(pc.pass_rate)}
                               for pc in cc.properties]})
        labs.append({
            "lab": lab.name, "points": lab.points, "duedate": _when(lab.duedate), "submitted": len(subs),
            "scores": {s.student: s.score for s in subs},
            "mean": round(statistics.fmean(scores), 4) if scores else None,
            "median": statistics.median(scores) if scores else None,
            "min": min(scores) if scores else None, "max": max(scores) if scores else None,
            "full_marks": sum(1 for x in scores if x >= lab.points),
            "late": sum(1 for s in subs if s.late),
            "missing": [{"student": s.id, "name": s.name} for s in results.missing(lab.name)],
            "cells": cells})
    late = [{"student": s.student, "name": names.get(s.student, ""), "lab": s.lab, "submitted": _when(s.timestamp),
             "seconds_late": round(s.seconds_late, 3), "raw": s.raw, "penalty": s.penalty, "score": s.score}
            for s in results.submissions if s.late]
    return {"students": len(results.students), "submissions": len(results.submissions), "labs": labs, "late": late}


# -- plots ------------------------------------------------------------------------------------------------------
def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _plots(lab: dict) -> tuple[str, str]:
    """(score histogram, pass rate per test cell) of one lab, as base64 PNGs. Only numbers and the instructor's
    grade ids are drawn; text is drawn as plain text (no mathtext)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    with plt.rc_context({"text.parse_math": False, "font.size": 9}):
        fig, ax = plt.subplots(figsize=(4.2, 2.4))
        top = lab["points"] or 1.0
        scores = list(lab["scores"].values())
        ax.hist(scores, bins=min(20, max(5, int(top) + 1)), range=(0, top), color="#4a7ab5", edgecolor="white")
        ax.set_xlabel(f"score (of {top:g})")
        ax.set_ylabel("students")
        ax.set_title(f"{lab['lab']}: {len(scores)} hand-ins")
        hist = _png(fig)
        plt.close(fig)
        cells = lab["cells"]
        fig, ax = plt.subplots(figsize=(5.2, 0.3 * len(cells) + 0.8))
        rates = [100 * (c["pass_rate"] or 0.0) for c in cells]
        ax.barh(range(len(cells)), rates, color=["#c0392b" if r < 50 else "#4a7ab5" for r in rates])
        ax.set_yticks(range(len(cells)), [c["grade_id"] for c in cells])
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("hand-ins with full points (%)")
        bars = _png(fig)
        plt.close(fig)
    return hist, bars


# -- the page ---------------------------------------------------------------------------------------------------
def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.0f}%"


def _num(x) -> str:
    return "-" if x is None else f"{x:g}"


def _table(head: list[str], rows: list[list[str]], bad: list[bool] | None = None) -> str:
    """A table from already escaped cells; numbers right-aligned."""
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for k, row in enumerate(rows):
        cls = ' class="bad"' if bad and bad[k] else ""
        out.append(f"<tr{cls}>" + "".join(
            f'<td class="n">{c}</td>' if c[:1].isdigit() or c[:1] == "-" else f"<td>{c}</td>" for c in row) + "</tr>")
    return "\n".join(out) + "</table>"


def _lab_section(lab: dict) -> str:
    hist, bars = _plots(lab)
    parts = [f'<h2 id="{_esc(lab["lab"])}">{_esc(lab["lab"])}</h2>',
             f'<p>{lab["submitted"]} hand-ins, due {_esc(lab["duedate"]) or "-"}; mean {_num(lab["mean"])}, median '
             f'{_num(lab["median"])} of {lab["points"]:g} points; {lab["full_marks"]} with full marks, '
             f'{lab["late"]} late, {len(lab["missing"])} with no submission.</p>',
             f'<img alt="score distribution of {_esc(lab["lab"])}" src="data:image/png;base64,{hist}"> '
             f'<img alt="pass rate per test of {_esc(lab["lab"])}" src="data:image/png;base64,{bars}">',
             "<h3>Tests</h3>"]
    rows = [[_esc(c["grade_id"]), f'{c["points"]:g}', str(c["full"]), str(c["partial"]), _pct(c["pass_rate"]),
             _esc(", ".join(f"{k} {v}" for k, v in c["errors"].items()))] for c in lab["cells"]]
    parts.append(_table(["test cell", "points", "full points", "fewer", "pass rate", "stopped on an error"], rows,
                        [(c["pass_rate"] or 0) < 0.5 for c in lab["cells"]]))
    props = [(c["grade_id"], p) for c in lab["cells"] for p in c["properties"]]
    worst = sorted((x for x in props if x[1]["failed"]), key=lambda x: (-x[1]["failed"], x[0]))
    parts.append("<h3>What the class did not understand</h3>")
    if worst:
        parts.append("<ol>" + "".join(
            f'<li>{_esc(p["text"])}{" <span class=hidden>(hidden)</span>" if p["hidden"] else ""} '
            f'<span class="small">({_esc(gid)}): failed {p["failed"]} of {p["passed"] + p["failed"]} hand-ins that '
            f"reached it</span></li>" for gid, p in worst[:10]) + "</ol>")
    else:
        parts.append("<p>No hand-in failed on a property.</p>")
    parts.append('<details><summary>Every property, in test order (pass rate = passed / (passed + failed); '
                 '"unreached": the test stopped earlier)</summary>')
    rows = [[_esc(gid), _esc(p["text"]) + (" <span class=hidden>(hidden)</span>" if p["hidden"] else ""),
             str(p["passed"]), str(p["failed"]), str(p["unreached"]), _pct(p["pass_rate"])] for gid, p in props]
    parts.append(_table(["test cell", "property", "passed", "failed", "unreached", "pass rate"], rows,
                        [p["failed"] > 0 for _, p in props]) + "</details>")
    if lab["missing"]:
        parts.append("<h3>No submission</h3><ul>" + "".join(
            f'<li>{_esc(m["student"])}{" (" + _esc(m["name"]) + ")" if m["name"] else ""}</li>'
            for m in lab["missing"]) + "</ul>")
    return "\n".join(parts)


def render_html(summary: dict, title: str = "rlprep class report", note: str = "") -> str:
    """The page for :func:`summarise`'s ``summary``; ``note`` (already plain text) says where the data came from."""
    labs = summary["labs"]
    overview = _table(
        ["lab", "hand-ins", "no submission", "late", "mean", "median", "min", "max", "points"],
        [[f'<a href="#{_esc(lab["lab"])}">{_esc(lab["lab"])}</a>', str(lab["submitted"]), str(len(lab["missing"])),
          str(lab["late"]), _num(lab["mean"]), _num(lab["median"]), _num(lab["min"]), _num(lab["max"]),
          f'{lab["points"]:g}'] for lab in labs])
    late = _table(["student", "name", "lab", "submitted", "late by (s)", "raw", "penalty", "score"],
                  [[_esc(x["student"]), _esc(x["name"]), _esc(x["lab"]), _esc(x["submitted"]),
                    f'{x["seconds_late"]:g}', f'{x["raw"]:g}', f'{x["penalty"]:g}', f'{x["score"]:g}']
                   for x in summary["late"]]) if summary["late"] else "<p>No late hand-ins.</p>"
    body = "\n".join(_lab_section(lab) for lab in labs)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>{_esc(title)}</title><style>{STYLE}</style></head><body>
<h1>{_esc(title)}</h1>
<p class="small">{_esc(note)}</p>
<p>{summary["students"]} students on the roster, {summary["submissions"]} hand-ins in {len(labs)} labs.</p>
{overview}
<h2>Late hand-ins</h2>
{late}
{body}
</body></html>
"""


def write_report(db_url: str, course_id: str, course: Path, path: Path, note: str = "") -> dict:
    """Read the class (gradebook ``db_url``, autograded notebooks under ``course``), write the page to ``path`` and
    its numbers to ``path`` with ``.json``; return the numbers."""
    summary = summarise(read_results(db_url, course_id, Path(course)))
    path = Path(path)
    path.write_text(render_html(summary, title=f"{course_id}: class report", note=note), encoding="utf-8")
    path.with_suffix(".json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary
