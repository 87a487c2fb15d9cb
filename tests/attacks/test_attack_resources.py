"""Attacks on the grader's memory: a zip bomb as a result, a flood of output."""

from __future__ import annotations

from harness import ZEROS_GAE, cell, grade, submission

LIMIT_MB = 1024  # the grader (not the learner's kernel) must stay far below this


def test_zip_bomb_result_is_refused_before_it_is_decompressed(tmp_path, env):
    # The kernel's value writer is replaced by one that writes a 1.5 GB array of zeros, deflated to ~1.5 MB.
    answer = ZEROS_GAE + r'''
import zipfile
import numpy as np
import rlprep.grading.wire as wire

def bomb(path, name, obj):
    n = 1536 * 2**20 // 8
    with zipfile.ZipFile(path / f"{name}.npz", "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("a0.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (n,)})
            chunk = bytes(2**20)
            for _ in range(n * 8 // len(chunk)):
                f.write(chunk)
    (path / f"{name}.json").write_text('{"t": "ndarray", "k": "a0"}')

wire.write = bomb
'''
    graded = grade(submission(tmp_path, answer), env, args=("--call-timeout", "60"))
    assert graded.score == 0, graded.report
    assert graded.peak_rss_mb < LIMIT_MB, f"grader peak RSS {graded.peak_rss_mb:.0f} MB"


def test_output_flood_is_capped_as_it_arrives(tmp_path, env):
    flood = cell("import time\nend = time.time() + 20\nwhile time.time() < end:\n    print('x' * 100_000)",
                 "flood")
    graded = grade(submission(tmp_path, ZEROS_GAE, [flood]), env)
    assert graded.score == 0, graded.report
    assert graded.peak_rss_mb < LIMIT_MB, f"grader peak RSS {graded.peak_rss_mb:.0f} MB"
