"""Attacks on the gradebook: write grades, rewrite the cached gradebook, read the hidden tests."""

from __future__ import annotations

import sqlite3

from harness import cell, grade, submission, untouched

# Finds every gradebook the kernel can reach: above its working folder (nbgrader's course layout) and in the
# gradebook cache named by the environment.
FIND_GRADEBOOKS = """
import glob, os, pathlib
def gradebooks():
    here = pathlib.Path.cwd()
    found = [d / "gradebook.db" for d in [here, *here.parents] if (d / "gradebook.db").is_file()]
    cache = os.environ.get("RLPREP_CACHE")
    if cache:
        found += [pathlib.Path(p) for p in glob.glob(f"{cache}/gradebooks/*/gradebook.db")]
    return found
"""

# Replaces every test cell's trusted source with `pass`, with the checksum nbgrader keeps for it
# (nbgrader.utils.compute_checksum: md5 of source, type, grade/solution/locked flags, grade id and points).
REWRITE_TESTS = """
import hashlib, sqlite3
def rewrite_tests(db):
    con = sqlite3.connect(db)
    rows = con.execute("select s.id, s.name, g.max_score from source_cell s join base_cell b on b.name = s.name "
                       "and b.notebook_id = s.notebook_id join grade_cells g on g.id = b.id "
                       "where s.name like 'test_%'").fetchall()
    for cell_id, name, points in rows:
        digest = hashlib.md5(("pass" + "code" + "True" + "False" + "True" + name + str(float(points))).encode())
        con.execute("update source_cell set source = 'pass', checksum = ? where id = ?", (digest.hexdigest(), cell_id))
    con.commit()
"""


def test_kernel_cannot_write_the_gradebook(tmp_path, env, sandboxed):
    # Full marks written straight into the run's gradebook: manual_score overrides the autograder's score.
    attack = cell(FIND_GRADEBOOKS + """
import sqlite3
for db in gradebooks():
    con = sqlite3.connect(db)
    con.execute("update grade set manual_score = (select max_score from grade_cells where grade_cells.id = grade.cell_id)")
    full = "update grade set manual_score = (select max_score from grade_cells where grade_cells.id = new.cell_id) "
    con.execute(f"create trigger if not exists on_new after insert on grade begin {full} where id = new.id; end")
    con.execute(f"create trigger if not exists on_auto after update of auto_score on grade begin {full} "
                "where id = new.id; end")
    con.commit()
""", "attack")
    graded = grade(submission(tmp_path, "raise NotImplementedError()", [attack]), env)
    assert graded.score == 0, graded.report


def test_rewritten_gradebook_cache_cannot_change_a_later_grade(tmp_path, env):
    # The cached gradebook is rewritten so that every test cell's trusted source is `pass`; the next grade, of
    # an untouched release, must still be 0.
    env = {**env, "RLPREP_CACHE": str(tmp_path / "cache")}
    attack = cell(FIND_GRADEBOOKS + REWRITE_TESTS + """
for db in gradebooks():
    rewrite_tests(db)
""", "attack")
    first = grade(submission(tmp_path / "one", "raise NotImplementedError()", [attack]), env)
    assert first.score == 0, first.report
    second = grade(untouched(tmp_path / "two"), env)
    assert second.score == 0, second.report


def test_cache_rewritten_outside_grading_is_detected(tmp_path, env):
    # Without a sandbox the kernel could reach the cache: its content hash must still catch the rewrite.
    env = {**env, "RLPREP_CACHE": str(tmp_path / "cache")}
    assert grade(untouched(tmp_path / "one"), env).score == 0
    (db,) = (tmp_path / "cache" / "gradebooks").glob("lab01_gae-*/gradebook.db")
    namespace: dict = {}
    exec(REWRITE_TESTS, namespace)
    namespace["rewrite_tests"](db)
    with sqlite3.connect(db) as con:
        assert {row[0] for row in con.execute("select source from source_cell where name like 'test_%'")} == {"pass"}
    assert grade(untouched(tmp_path / "two"), env).score == 0


def test_kernel_cannot_read_the_hidden_tests(tmp_path, env, sandboxed):
    # Read the hidden tests (from a reachable gradebook, or from the solutions in the course checkout), run
    # them against a recorder, and answer every hidden case from the recorded expected values: no GAE code.
    recorder = FIND_GRADEBOOKS + r'''
import json, pathlib, sqlite3
import numpy as np

def hidden_sources():
    sources = []
    for db in gradebooks():
        sources += [row[0] for row in sqlite3.connect(db).execute("select source from source_cell")]
    try:
        import rlprep
        root = pathlib.Path(rlprep.__file__).resolve().parents[2]
        nb = json.loads((root / "solutions/lab01_gae/lab01_gae.ipynb").read_text())
        sources += ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    except Exception:
        pass
    if not sources:
        raise RuntimeError("no hidden tests found")
    return sources

TABLE = {}

def key(rewards, values, dones, last_value, gamma, lam):
    return repr((np.round(np.asarray(rewards, float), 6).tolist(), np.round(np.asarray(values, float), 6).tolist(),
                 np.asarray(dones, float).tolist(), round(float(last_value), 6), float(gamma), float(lam)))

class Slot:
    def __init__(self, k, i):
        self.k, self.i = k, i

def record(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    k = key(rewards, values, dones, last_value, gamma, lam)
    return Slot(k, 0), Slot(k, 1)

def remember(actual, expected, *args, **kwargs):
    if isinstance(actual, Slot) and not isinstance(expected, Slot):
        TABLE.setdefault(actual.k, [None, None])[actual.i] = np.asarray(expected, dtype=float)

for src in hidden_sources():
    ns = dict(np=np, compute_gae=record, assert_close=remember, expect_tuple=lambda r, n, p: tuple(r),
              check=lambda *a, **k: None, assert_shape=lambda *a, **k: None, assert_float_array=lambda *a, **k: None)
    try:
        exec(src, ns)
    except Exception:
        pass

def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    adv, ret = TABLE.get(key(rewards, values, dones, last_value, gamma, lam), [None, None])
    zeros = np.zeros(len(rewards))
    return (zeros if adv is None else adv), (zeros if ret is None else ret)
'''
    graded = grade(submission(tmp_path, recorder), env)
    hidden_only = ["test_gae_episode_end", "test_gae_bootstrap", "test_gae_lambda_limits", "test_gae_gamma_lambda"]
    failed = {c["grade_id"] for c in graded.report["cells"] if not c["passed"]}
    assert set(hidden_only) <= failed, graded.report
