"""What an instructor typed in formgrader for a lab, kept across a re-autograde.

nbgrader keeps a manual grade in the gradebook row of each graded cell (``Grade.manual_score``, and
``Grade.extra_credit``) and a manual comment in each answer cell's row (``Comment.manual_comment``). Its
``autograde --force`` writes only ``auto_score`` and ``auto_comment`` (``SaveAutoGrades``), and flags a cell that
has a manual grade for review again (``needs_manual_grade``); ``Grade.score`` is the manual score when there is
one. ``generate_assignment --force`` on a lab with submissions updates the cells in place and refuses to add or
remove any. So a new release plus a re-autograde should keep every manual grade: :func:`snapshot` is taken before
``rlprep classroom autograde`` grades anything and :func:`restore` puts back whatever a later nbgrader lost, and
says so, so that the guarantee does not rest on nbgrader's internals alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Snapshot:
    """A lab's manual work: ``{(student, notebook, cell): value}`` per kind, and the students with a submission."""

    scores: dict = field(default_factory=dict)  # manual_score
    extra_credit: dict = field(default_factory=dict)
    comments: dict = field(default_factory=dict)  # manual_comment
    submissions: set = field(default_factory=set)

    @property
    def count(self) -> int:
        """Manual grades, extra credits and comments held."""
        return len(self.scores) + len(self.extra_credit) + len(self.comments)


def snapshot(db_url: str, course_id: str, lab: str) -> Snapshot:
    """Every manual score, extra credit and comment of ``lab`` in the gradebook, and who has a submission."""
    from nbgrader.api import Gradebook

    snap = Snapshot()
    with Gradebook(db_url, course_id) as gb:
        for sub in gb.assignment_submissions(lab):
            snap.submissions.add(sub.student.id)
            for nb in sub.notebooks:
                for grade in nb.grades:
                    key = (sub.student.id, nb.name, grade.name)
                    if grade.manual_score is not None:
                        snap.scores[key] = grade.manual_score
                    if grade.extra_credit:
                        snap.extra_credit[key] = grade.extra_credit
                for comment in nb.comments:
                    if comment.manual_comment:
                        snap.comments[(sub.student.id, nb.name, comment.name)] = comment.manual_comment
    return snap


def lost(before: Snapshot, after: Snapshot) -> list[str]:
    """What ``after`` no longer holds of ``before``, one line each (empty when nothing was lost)."""
    out = [f"submission of {s} (gone from the gradebook; cannot be written back)"
           for s in sorted(before.submissions - after.submissions)]
    for kind in ("scores", "extra_credit", "comments"):
        now = getattr(after, kind)
        out += [f"{kind[:-1] if kind.endswith('s') else kind} {'/'.join(key)}: {value!r}"
                for key, value in sorted(getattr(before, kind).items()) if now.get(key) != value]
    return out


def restore(db_url: str, course_id: str, lab: str, before: Snapshot) -> list[str]:
    """Write back every manual score, extra credit and comment of ``before`` that the gradebook lost; return what
    was restored (a lost submission cannot be written back and is only listed)."""
    from nbgrader.api import Gradebook

    missing = lost(before, snapshot(db_url, course_id, lab))
    if not missing:
        return []
    with Gradebook(db_url, course_id) as gb:
        for (student, notebook, cell), value in before.scores.items():
            grade = _find(gb.find_grade, cell, notebook, lab, student)
            if grade is not None and grade.manual_score != value:
                grade.manual_score, grade.needs_manual_grade = value, True
        for (student, notebook, cell), value in before.extra_credit.items():
            grade = _find(gb.find_grade, cell, notebook, lab, student)
            if grade is not None and grade.extra_credit != value:
                grade.extra_credit = value
        for (student, notebook, cell), value in before.comments.items():
            comment = _find(gb.find_comment, cell, notebook, lab, student)
            if comment is not None and comment.manual_comment != value:
                comment.manual_comment = value
        gb.db.commit()
    return missing


def _find(finder, cell: str, notebook: str, lab: str, student: str):
    from nbgrader.api import MissingEntry

    try:
        return finder(cell, notebook, lab, student)
    except MissingEntry:
        return None
