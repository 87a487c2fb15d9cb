"""Data-parallel training under ``accelerate launch``: each process trains on its own share of the data and
DistributedDataParallel averages the gradients, so every process holds the same weights after each step.

Run (2 CPU processes)::

    accelerate launch --cpu --num_processes 2 -m rlprep.trainers.distributed --trainer dpo --steps 20

On GPUs drop ``--cpu`` and set ``--num_processes`` to the GPU count; DeepSpeed ZeRO or FSDP come from an
accelerate config file (``accelerate launch --config_file zero2.yaml ...``), see the README's "Scaling out".
Each process gets its own data seed (``seed + process_index``), so the global batch is
``num_processes x batch_size`` pairs. ``--digest-dir`` writes each process's weight digest (the test compares them).
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path


def weights_digest(model) -> str:
    """SHA-256 over every parameter's bytes (in ``state_dict`` order): equal digests = identical weights."""
    h = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        h.update(name.encode())
        h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def prepare_trainer(trainer, accelerator):
    """Wrap ``trainer.policy`` and ``trainer.optimizer`` for ``accelerator`` (DDP on several processes)."""
    trainer.policy, trainer.optimizer = accelerator.prepare(trainer.policy, trainer.optimizer)
    return trainer


def train_dpo_distributed(config, accelerator=None):
    """DPO with one data shard per process; returns ``(trainer, accelerator, rows)``.

    The trainer's own ``step`` runs unchanged: DDP hooks all-reduce the gradients inside ``loss.backward()``.
    """
    from dataclasses import replace

    from accelerate import Accelerator

    from rlprep.trainers.dpo import DPOTrainer

    import torch

    accelerator = accelerator or Accelerator(cpu=not torch.cuda.is_available())
    config = replace(config, seed=config.seed + accelerator.process_index, device=str(accelerator.device))
    trainer = prepare_trainer(DPOTrainer(config), accelerator)
    rows = [trainer.step(step) for step in range(config.steps)]
    accelerator.wait_for_everyone()
    return trainer, accelerator, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="data-parallel DPO under accelerate launch")
    parser.add_argument("--trainer", default="dpo", choices=["dpo"])
    parser.add_argument("--profile", default=None)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--digest-dir", default=None, help="write weights-<rank>.sha256 here")
    args = parser.parse_args(argv)
    from rlprep.trainers.dpo import DPOConfig

    overrides = {k: v for k, v in (("steps", args.steps), ("batch_size", args.batch_size)) if v is not None}
    if "batch_size" in overrides:
        overrides["n_train_pairs"] = max(overrides["batch_size"] * 4, 2 * overrides["batch_size"])
    config = DPOConfig.for_profile(args.profile, **overrides)
    trainer, accelerator, rows = train_dpo_distributed(config)
    model = accelerator.unwrap_model(trainer.policy)
    digest = weights_digest(model)
    if args.digest_dir:
        out = Path(args.digest_dir) / f"weights-{accelerator.process_index}.sha256"
        tmp = out.with_suffix(".tmp")
        tmp.write_text(digest + "\n")
        tmp.replace(out)
    print(f"rank {accelerator.process_index}/{accelerator.num_processes}: {len(rows)} steps, "
          f"last loss/dpo {rows[-1]['loss/dpo']:.4f}, weights {digest[:12]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
