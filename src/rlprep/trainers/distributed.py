"""Data-parallel training under ``accelerate launch``: each process trains on its own share of the data and
DistributedDataParallel averages the gradients, so every process holds the same weights after each step.

Run (2 CPU processes, gloo)::

    accelerate launch --cpu --num_processes 2 -m rlprep.trainers.distributed --trainer grpo --steps 20

On GPUs drop ``--cpu`` and set ``--num_processes`` to the GPU count. ``configs/accelerate/`` holds example
config files (``multi_gpu.yaml``; ``zero2.yaml`` for DeepSpeed ZeRO-2, ``fsdp.yaml`` for FSDP): see the README's
"Scaling out" for what has been tested.

What each trainer does per process (the trainer's own ``step`` runs unchanged: DDP's hooks all-reduce the
gradients inside ``loss.backward()``, and gradient clipping then sees the averaged gradient on every process):

* ``dpo``: its own preference pairs (data seed ``seed + rank``); global batch = ``num_processes x batch_size``.
* ``grpo``: its own prompts and its own sampled groups (``seed + rank``); group advantages are computed inside
  each process's groups, which is exact because a group never spans processes. Global batch =
  ``num_processes x prompts_per_step x group_size`` completions. With token aggregation each process normalises
  by its own token count, so the averaged gradient weighs the processes equally rather than their tokens.
  DAPO dynamic sampling is switched off (each process would refill a different number of batches and so take a
  different number of gradient steps, which deadlocks DDP).
* ``ppo``: its own prompts and rollouts; policy and critic are both wrapped; advantages are whitened per process.

Sampling always goes through the unwrapped module (:func:`rlprep.trainers.sequences.unwrap_model`): no
collective runs during generation, so processes may generate different lengths. ``--digest-dir`` writes each
process's weight digest and a digest of the prompts it trained on (the test compares them).
"""

from __future__ import annotations

import argparse
import hashlib
from dataclasses import replace
from pathlib import Path

from rlprep.live import atomic_write_bytes

TRAINERS = ("dpo", "grpo", "ppo")


def weights_digest(model) -> str:
    """SHA-256 over every parameter's bytes (in ``state_dict`` order): equal digests = identical weights."""
    h = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        h.update(name.encode())
        h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def prepare_trainer(trainer, accelerator):
    """Wrap ``trainer.policy`` and ``trainer.optimizer`` (and a PPO trainer's critic and its optimizer) for
    ``accelerator`` (DDP on several processes). The frozen reference and the reward model stay unwrapped."""
    if hasattr(trainer, "critic"):
        trainer.policy, trainer.optimizer, trainer.critic, trainer.critic_optimizer = accelerator.prepare(
            trainer.policy, trainer.optimizer, trainer.critic, trainer.critic_optimizer)
    else:
        trainer.policy, trainer.optimizer = accelerator.prepare(trainer.policy, trainer.optimizer)
    return trainer


def _make_accelerator():
    import torch
    from accelerate import Accelerator

    return Accelerator(cpu=not torch.cuda.is_available())


def _record_prompts(trainer, attribute: str, seen: list[str]) -> None:
    """Wrap ``trainer.<attribute>`` (a prompt source) so every prompt it hands out is appended to ``seen``."""
    source = getattr(trainer, attribute)

    def recording(*args, **kwargs):
        prompts = source(*args, **kwargs)
        seen.extend(prompts)
        return prompts

    setattr(trainer, attribute, recording)


def check_backend(name: str, accelerator) -> None:
    """Refuse the combinations that would run but not train correctly, with the reason and the fix.

    * DeepSpeed: the trainers call ``loss.backward()`` and ``optimizer.step()`` themselves, and accelerate's
      DeepSpeed optimizer wrapper makes ``step()`` a no-op (the engine steps inside ``accelerator.backward``),
      so no weight would ever change.
    * FSDP with GRPO or PPO: they sample inside each step through the unwrapped module, which under FSDP holds
      only this process's shard of the weights.
    """
    from rlprep.errors import RlprepError

    kind = str(getattr(accelerator.distributed_type, "value", accelerator.distributed_type)).upper()
    if kind == "DEEPSPEED":
        raise RlprepError("the rlprep trainers do not run under DeepSpeed yet: they call loss.backward() and "
                          "optimizer.step() directly, which accelerate's DeepSpeed engine ignores (no update)",
                          "use configs/accelerate/multi_gpu.yaml (DDP), or fsdp.yaml for DPO")
    if kind == "FSDP" and name != "dpo":
        raise RlprepError(f"the {name} trainer samples during each step, which is not wired for FSDP's sharded "
                          "weights", "use configs/accelerate/multi_gpu.yaml (DDP) for GRPO and PPO")


def build_trainer(name: str, config, accelerator):
    """The trainer ``name`` for this process: data seed ``seed + rank``, the process's device, wrapped by
    ``accelerator``. The main process builds (and caches) the SFT warm start and reward model first, so the
    processes never race on the cache. Returns ``(trainer, seen_prompts)``."""
    if name not in TRAINERS:
        raise ValueError(f"trainer must be one of {TRAINERS}, got {name!r}")
    check_backend(name, accelerator)
    config = replace(config, seed=config.seed + accelerator.process_index, device=str(accelerator.device))
    seen: list[str] = []
    with accelerator.main_process_first():
        if name == "dpo":
            from rlprep.trainers.dpo import DPOTrainer

            trainer = DPOTrainer(config)
        elif name == "grpo":
            from rlprep.trainers.grpo import GRPOTrainer

            if config.dynamic_sampling and accelerator.num_processes > 1:
                config = replace(config, dynamic_sampling=False)  # see the module docstring
            trainer = GRPOTrainer(config)
            _record_prompts(trainer, "prompt_source", seen)
        else:
            from rlprep.trainers.ppo import PPOTrainer

            trainer = PPOTrainer(config)
            _record_prompts(trainer, "_train_prompts", seen)
    return prepare_trainer(trainer, accelerator), seen


def train_distributed(name: str, config, accelerator=None):
    """``config.steps`` steps of trainer ``name`` with one data shard per process.

    Returns ``(trainer, accelerator, rows, seen)``: ``rows`` are this process's metric dicts and ``seen`` the
    prompts it trained on (GRPO, PPO; DPO's pairs are ``trainer.pairs``).
    """
    accelerator = accelerator or _make_accelerator()
    trainer, seen = build_trainer(name, config, accelerator)
    rows = run_steps(name, trainer, config.steps)
    accelerator.wait_for_everyone()
    return trainer, accelerator, rows, seen


def run_steps(name: str, trainer, steps: int) -> list[dict]:
    """``steps`` training steps of ``trainer``: DPO's ``step`` takes the step index (it picks that step's
    pairs), GRPO and PPO sample fresh data each call. Returns the metric dicts."""
    if name == "dpo":
        return [trainer.step(step) for step in range(steps)]
    return [trainer.step() for _ in range(steps)]


def train_dpo_distributed(config, accelerator=None):
    """DPO with one data shard per process; returns ``(trainer, accelerator, rows)``."""
    trainer, accelerator, rows, _ = train_distributed("dpo", config, accelerator)
    return trainer, accelerator, rows


HEADLINE = {"dpo": "loss/dpo", "grpo": "reward/mean", "ppo": "reward/rm"}
"""The metric each process prints for its last step."""


def _config(name: str, profile: str | None, steps: int | None, batch_size: int | None):
    """The trainer's ``for_profile`` config with the command line's overrides."""
    overrides: dict = {} if steps is None else {"steps": steps}
    if name == "dpo":
        from rlprep.trainers.dpo import DPOConfig

        if batch_size is not None:
            overrides.update(batch_size=batch_size, n_train_pairs=max(batch_size * 4, 2 * batch_size))
        return DPOConfig.for_profile(profile, **overrides)
    if name == "grpo":
        from rlprep.trainers.grpo import GRPOConfig

        if batch_size is not None:
            overrides["prompts_per_step"] = batch_size
        return GRPOConfig.for_profile(profile, **overrides)
    from rlprep.trainers.ppo import PPOConfig

    if batch_size is not None:
        overrides.update(batch_size=batch_size, minibatch_size=batch_size)
    return PPOConfig.for_profile(profile, **overrides)


def _trainer_names(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in names if x not in TRAINERS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown trainer(s) {bad or text!r}: pick from {','.join(TRAINERS)}")
    return names


def run_one(name: str, args, accelerator) -> None:
    """Train ``name`` for ``args.steps`` steps in this process; print one line, write the digests."""
    config = _config(name, args.profile, args.steps, args.batch_size)
    trainer, seen = build_trainer(name, config, accelerator)
    start_digest = weights_digest(accelerator.unwrap_model(trainer.policy))
    rows = run_steps(name, trainer, config.steps)
    if name == "dpo":
        seen = [f"{p.prompt}\x00{p.chosen}\x00{p.rejected}" for p in trainer.pairs]
    accelerator.wait_for_everyone()
    digest = weights_digest(accelerator.unwrap_model(trainer.policy))
    data_digest = hashlib.sha256("\n".join(seen).encode()).hexdigest()
    rank = accelerator.process_index
    if args.digest_dir:
        out = Path(args.digest_dir)
        atomic_write_bytes(out / f"{name}-weights-{rank}.sha256", f"{start_digest}\n{digest}\n".encode())
        atomic_write_bytes(out / f"{name}-data-{rank}.sha256", (data_digest + "\n").encode())
    key = HEADLINE[name]
    print(f"rank {rank}/{accelerator.num_processes}: {name} {len(rows)} steps, "
          f"last {key} {rows[-1][key]:.4f}, data {data_digest[:12]}, weights {digest[:12]}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="data-parallel DPO / GRPO / PPO under accelerate launch")
    parser.add_argument("--trainer", default=["dpo"], type=_trainer_names,
                        help=f"one of {','.join(TRAINERS)}, or several comma-separated (trained one after another)")
    parser.add_argument("--profile", default=None)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=None,
                        help="per process: DPO pairs, GRPO prompts (x group_size completions), PPO rollouts")
    parser.add_argument("--digest-dir", default=None,
                        help="write <trainer>-weights-<rank>.sha256 (start and end) and <trainer>-data-<rank>.sha256")
    args = parser.parse_args(argv)
    accelerator = _make_accelerator()
    for name in args.trainer:
        run_one(name, args, accelerator)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
