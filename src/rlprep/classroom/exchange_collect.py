"""nbgrader's collect with its owner check enforced, for a hub whose students share one exchange (``make hub``).

nbgrader names a hand-in's student by its folder in ``inbound/`` (``<student>+<lab>+<timestamp>+<random>``). When
that folder belongs to another unix account, nbgrader 0.9's ``ExchangeCollect.copy_files`` logs "cheating
attempt?" and collects it all the same. ``inbound/`` is writable by every account (nbgrader's own mode, 2733), so
on a shared machine a student with a terminal can hand in under another student's name, with a later timestamp
that wins over the real hand-in. :class:`OwnerCheckedCollect` leaves such folders out (an error in collect's log
names each) before the latest hand-in of each student is picked, so the student's own latest hand-in is collected.
"""

from __future__ import annotations

import glob
import os
import pwd

from nbgrader.exchange.default.collect import ExchangeCollect, groupby


def owner_of(path: str) -> str:
    try:
        return pwd.getpwuid(os.stat(path).st_uid).pw_name
    except KeyError:
        return "unknown id"


class OwnerCheckedCollect(ExchangeCollect):
    """``ExchangeCollect`` that skips a hand-in whose folder is not owned by the student it names."""

    def init_src(self):
        super().init_src()  # checks, paths, the due date; its pick of each student's hand-in is redone below
        records = []
        for record in self._all_records():
            owner = owner_of(os.path.join(self.inbound_path, record["filename"]))
            if owner != record["username"]:
                self.log.error(f"skipped {record['filename']}: it names {record['username']} but belongs to "
                               f"{owner} (a hand-in under another student's name)")
                continue
            records.append(record)
        self.src_records = [self._pick(v) for v in groupby(records, lambda item: item["username"]).values()]

    def _all_records(self) -> list[dict]:
        student = self.coursedir.student_id if self.coursedir.student_id else "*"
        pattern = os.path.join(self.inbound_path, f"{student}+{self.coursedir.assignment_id}+*")
        return [self._path_to_record(f) for f in glob.glob(pattern)]

    def _pick(self, records: list[dict]) -> dict:
        """nbgrader's choice among one student's hand-ins: the latest, or with ``before_duedate`` the latest before
        the due date if there is one."""
        records = self._sort_by_timestamp(records)
        if self.duedate is None or not self.before_duedate:
            return records[0]
        before = [r for r in records if r["timestamp"] <= self.duedate]
        return before[0] if before else records[0]
