"""Scale-out: 2-process CPU data-parallel runs through ``accelerate launch`` (gloo) end with identical weights,
although each process trained on its own data, and the weights moved away from the start."""

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


def _launch(tmp_path, trainers: str, steps: int, batch_size: int, timeout: int = 300) -> str:
    launcher = shutil.which("accelerate", path=str(Path(sys.executable).parent)) or shutil.which("accelerate")
    if launcher is None:
        pytest.skip("the accelerate launcher is not on PATH")
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "RLPREP_PROFILE": "smoke", "RLPREP_NO_BAR": "1",
           "CUDA_VISIBLE_DEVICES": ""}
    cmd = [launcher, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(_free_port()),
           "-m", "rlprep.trainers.distributed", "--trainer", trainers, "--steps", str(steps),
           "--batch-size", str(batch_size), "--digest-dir", str(tmp_path)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout


def _check_ranks(stdout: str, tmp_path, name: str, steps: int) -> None:
    ranks = re.findall(rf"rank (\d)/(\d): {name} (\d+) steps", stdout)
    assert sorted(r[0] for r in ranks) == ["0", "1"], stdout
    assert all(r[1] == "2" and r[2] == str(steps) for r in ranks), stdout
    data = [(tmp_path / f"{name}-data-{i}.sha256").read_text().strip() for i in (0, 1)]
    assert data[0] != data[1], f"{name}: both processes trained on the same data"
    (start0, end0), (start1, end1) = ((tmp_path / f"{name}-weights-{i}.sha256").read_text().split() for i in (0, 1))
    assert start0 == start1, f"{name}: the processes started from different weights"
    assert end0 == end1, f"{name}: DDP let the processes' weights drift apart"
    assert end0 != start0, f"{name}: training did not change the weights"


def test_two_process_dpo_and_grpo_agree_on_weights(tmp_path):
    """One launch trains DPO, then GRPO (smoke profile, 2 steps each): one process start-up for both."""
    stdout = _launch(tmp_path, "dpo,grpo", steps=2, batch_size=8)
    for name in ("dpo", "grpo"):
        _check_ranks(stdout, tmp_path, name, steps=2)


@pytest.mark.slow
def test_two_process_ppo_agrees_on_weights(tmp_path):
    """PPO wraps the critic too (about 45 s on 2 shared cores, so not in CI)."""
    stdout = _launch(tmp_path, "ppo", steps=2, batch_size=4)
    _check_ranks(stdout, tmp_path, "ppo", steps=2)


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


def test_unwrap_model_reaches_the_plain_module():
    torch = pytest.importorskip("torch")
    from rlprep.trainers.sequences import unwrap_model

    inner = torch.nn.Linear(3, 2)
    assert unwrap_model(inner) is inner
    assert unwrap_model(torch.nn.DataParallel(inner)) is inner

    class Compiled(torch.nn.Module):  # what torch.compile returns: the model sits in _orig_mod
        def __init__(self, model):
            super().__init__()
            self._orig_mod = model

    assert unwrap_model(Compiled(torch.nn.DataParallel(inner))) is inner


def test_backends_that_would_not_train_are_refused():
    from types import SimpleNamespace

    from rlprep.errors import RlprepError
    from rlprep.trainers.distributed import check_backend

    for kind, name in (("DEEPSPEED", "dpo"), ("DEEPSPEED", "grpo"), ("FSDP", "grpo"), ("FSDP", "ppo")):
        with pytest.raises(RlprepError):
            check_backend(name, SimpleNamespace(distributed_type=kind))
    for kind, name in (("MULTI_CPU", "grpo"), ("MULTI_GPU", "ppo"), ("FSDP", "dpo"), ("NO", "grpo")):
        check_backend(name, SimpleNamespace(distributed_type=kind))


def test_accelerate_config_examples_parse():
    yaml = pytest.importorskip("yaml")
    root = SRC.parent / "configs" / "accelerate"
    kinds = {f.stem: yaml.safe_load(f.read_text())["distributed_type"] for f in root.glob("*.yaml")}
    assert kinds == {"multi_gpu": "MULTI_GPU", "zero2": "DEEPSPEED", "fsdp": "FSDP"}
