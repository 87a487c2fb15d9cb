"""Scale-out: a 2-process CPU data-parallel DPO run through ``accelerate launch`` ends with identical weights."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("accelerate")
SRC = Path(__file__).resolve().parents[1] / "src"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_process_dpo_agrees_on_weights(tmp_path):
    launcher = shutil.which("accelerate", path=str(Path(sys.executable).parent)) or shutil.which("accelerate")
    if launcher is None:
        pytest.skip("the accelerate launcher is not on PATH")
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "RLPREP_PROFILE": "smoke",
           "CUDA_VISIBLE_DEVICES": ""}
    cmd = [launcher, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(_free_port()),
           "-m", "rlprep.trainers.distributed", "--steps", "2", "--batch-size", "8", "--digest-dir", str(tmp_path)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    ranks = re.findall(r"rank (\d)/(\d): 2 steps, last loss/dpo ([-\d.]+)", proc.stdout)
    assert sorted(r[0] for r in ranks) == ["0", "1"] and all(r[1] == "2" for r in ranks), proc.stdout
    # each process trained on its own data shard (different losses), yet DDP kept the weights identical
    assert len({r[2] for r in ranks}) == 2, f"both ranks saw the same data: {ranks}"
    digests = [(tmp_path / f"weights-{i}.sha256").read_text().strip() for i in (0, 1)]
    assert digests[0] == digests[1]


def test_weights_digest_tells_models_apart():
    torch = pytest.importorskip("torch")
    from rlprep.trainers.distributed import weights_digest

    a = torch.nn.Linear(3, 2)
    b = torch.nn.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    assert weights_digest(a) == weights_digest(b)
    with torch.no_grad():
        b.bias[0] += 1e-6
    assert weights_digest(a) != weights_digest(b)
