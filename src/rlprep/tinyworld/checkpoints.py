"""The SFT checkpoint cache: build once (deterministically), verify on every load, never leave half a file.

Layout: ``cache_dir()/checkpoints/<task>-<profile>-v<VERSION>-<recipe>-s<seed>/`` holds a standard Hugging Face
checkpoint (``model.safetensors``, ``config.json``, tokenizer files, so ``load_policy(model=PATH)`` and
``from_pretrained`` read it too) plus ``manifest.json``: the sha256 of the weights, the model config, the
SFT config and the evaluation metrics. A build happens in a temporary sibling directory that is moved into
place with one ``os.replace``; a checkpoint whose weights no longer match the manifest's hash (a
truncated download, a crash of an older writer, a disk error) is reported and rebuilt.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from rlprep.errors import RlprepError
from rlprep.paths import cache_dir
from rlprep.profiles import Profile

if TYPE_CHECKING:  # sft imports torch: sft_config imports it only when a schedule is needed
    from rlprep.tinyworld.sft import SFTConfig

VERSION = 1
"""Bump when the tokenizer, the model config, the tasks' SFT data or the SFT recipe change."""
WEIGHTS = "model.safetensors"
MANIFEST = "manifest.json"
BUILD_THREADS = 1
"""Torch threads of every build, whatever the caller's count: the thread count changes the order of float sums,
and SFT amplifies the last bits into a different policy (the smoke arithmetic start tied 84% of its level-2 groups
at T = 0.5 built with one thread, 25% with two), so the tests, the notebooks and the records would otherwise see
another warm start on every machine. One, because the course's models are tiny and a second thread costs more than
it gains on a shared 2-core machine (rlprep.lab_env). A different CPU instruction set can still change the bits."""


@contextlib.contextmanager
def _quiet_transformers():
    """Hide transformers' own "Loading weights" / "Writing model shards" bars (stderr output in an
    nbgrader test cell scores that cell 0); our SFT progress bar is unaffected."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def recipe_key(task: str, profile: Profile) -> str:
    """8 hex digits of the build recipe (the profile's numbers and the task's SFT budget fractions), so a change
    to either builds a new checkpoint instead of silently serving one trained under the old recipe."""
    from rlprep.tinyworld.tasks import get_task

    spec = get_task(task)
    recipe = {"profile": dataclasses.asdict(profile), "version": VERSION,
              "batch_fraction": getattr(spec, "sft_batch_fraction", 1.0),
              "steps_fraction": getattr(spec, "sft_steps_fraction", 1.0)}
    return hashlib.sha256(json.dumps(recipe, sort_keys=True, default=str).encode()).hexdigest()[:8]


def checkpoint_dir(task: str, profile: Profile, seed: int = 0, variant: str | None = None) -> Path:
    """Where the checkpoint for ``(task, profile, seed)`` lives (it may not exist yet). A ``variant`` (e.g.
    ``"stop250"``, an SFT run stopped early) gets its own folder next to the full run's."""
    name = f"{task}-{profile.name}-v{VERSION}-{recipe_key(task, profile)}-s{seed}"
    return cache_dir() / "checkpoints" / (f"{name}-{variant}" if variant else name)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_checkpoint(path: Path) -> str | None:
    """None when ``path`` holds a complete checkpoint; otherwise what is wrong with it."""
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        return "its manifest.json is missing"
    try:
        manifest = json.loads(manifest_path.read_text())
        expected = manifest["sha256"]
    except (ValueError, KeyError):
        return "its manifest.json is unreadable"
    weights = path / WEIGHTS
    if not weights.is_file():
        return f"{WEIGHTS} is missing"
    if sha256_file(weights) != expected:
        return f"{WEIGHTS} does not match the sha256 in its manifest (truncated or modified)"
    return None


def read_manifest(path: Path) -> dict:
    return json.loads((path / MANIFEST).read_text())


def sft_config(task, profile: Profile, seed: int = 0, steps: int | None = None,
               stop_after: int | None = None) -> SFTConfig:
    """The SFT schedule of ``task``'s warm start in ``profile`` (the task scales the profile's batch and steps);
    ``steps`` overrides the step count, ``stop_after`` stops that schedule early."""
    from rlprep.tinyworld.sft import SFTConfig  # imports torch: only when a schedule is needed

    batch = max(1, round(profile.sft_batch * task.sft_batch_fraction))
    steps = steps or max(1, round(profile.sft_steps * task.sft_steps_fraction))
    return SFTConfig(steps=steps, batch=batch, lr=profile.sft_lr, seed=seed, stop_after=stop_after)


def build_checkpoint(task_name: str, profile: Profile, seed: int = 0, steps: int | None = None,
                     progress: bool = True, stop_after: int | None = None,
                     stop_when=None, variant: str | None = None) -> tuple[Path, dict]:
    """Run the SFT warm start for ``task_name`` and save it; returns ``(tmp_dir, manifest)``.

    The checkpoint is written into a fresh temporary directory next to the cache entry; the caller moves it
    into place (:func:`ensure_checkpoint`). ``steps`` overrides ``profile.sft_steps`` (tests use it);
    ``stop_after`` stops that schedule early (``SFTConfig.stop_after``), and so does ``stop_when(step, model)``
    returning True (the manifest's ``metrics["sft/steps"]`` records where it stopped). ``variant`` names the
    cache entry the build is for (:func:`checkpoint_dir`).
    """
    import torch
    from safetensors.torch import save_file  # noqa: F401  (save_pretrained writes safetensors)
    from tqdm.auto import tqdm

    from rlprep.tinyworld.tasks import get_task
    from rlprep.tinyworld.model import build_model, count_parameters
    from rlprep.tinyworld.sft import train_sft
    from rlprep.tinyworld.tokenizer import build_tokenizer

    task = get_task(task_name)
    tokenizer = build_tokenizer()
    model = build_model(profile, tokenizer, seed=seed).to(profile.device)
    config = sft_config(task, profile, seed, steps=steps, stop_after=stop_after)
    callers_threads = torch.get_num_threads()
    torch.set_num_threads(BUILD_THREADS)
    start, cpu_start = time.perf_counter(), time.process_time()
    bar = tqdm(total=config.stop_after or config.steps, desc=f"SFT {task_name} ({profile.name})", unit="step",
               disable=not progress, file=sys.stderr, leave=False)
    try:
        metrics = train_sft(model, tokenizer, task, config,
                            on_step=lambda step, loss: (bar.update(1), bar.set_postfix(loss=f"{loss:.3f}")),
                            stop_when=None if stop_when is None else (lambda step: stop_when(step, model)))
        bar.close()
        metrics["time/sft_s"] = round(time.perf_counter() - start, 2)
        # CPU seconds this process used: close to the wall time on an idle core (one thread, BUILD_THREADS),
        # and unaffected by other users of a shared machine (wall time is not).
        metrics["time/sft_cpu_s"] = round(time.process_time() - cpu_start, 2)
        with torch.no_grad():
            metrics.update(task.evaluate(model, tokenizer, seed=seed))
    finally:
        torch.set_num_threads(callers_threads)
    metrics["time/total_s"] = round(time.perf_counter() - start, 2)

    target = checkpoint_dir(task_name, profile, seed, variant)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{target.name}-", dir=target.parent))
    try:
        with _quiet_transformers():
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
    except BaseException:  # a full disk or Ctrl-C: leave no half-written temp dir behind
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    manifest = {
        "task": task_name, "profile": profile.name, "seed": seed, "version": VERSION,
        "sha256": sha256_file(tmp / WEIGHTS), "parameters": count_parameters(model),
        "profile_config": dataclasses.asdict(profile), "sft_config": dataclasses.asdict(config),
        "model_config": model.config.to_diff_dict(), "metrics": metrics,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    with open(tmp / MANIFEST, "w") as handle:  # written last: a manifest means the rest is complete
        json.dump(manifest, handle, indent=2, sort_keys=True, default=str)
    return tmp, manifest


BUILD_RECORD = "warm_starts"
"""The record (``rlprep.records``) of measured warm-start build times, written by ``rlprep models build --record``."""


def build_notice(task_name: str, profile: Profile, target: Path, variant: str | None = None) -> str:
    """What a learner reads before a warm start is built: what it is, that it is built once and cached, and how long
    the wait is (the recorded build of this task and profile, timed with the thread count a notebook kernel gets:
    its CPU time is the wall time on a free core). No date or machine: those stay in the record."""
    from rlprep import records
    from rlprep.tinyworld.tasks import get_task

    steps = sft_config(get_task(task_name), profile).steps
    early = f", stopped early by the rule {variant}" if variant else ""
    text = (f"building the {task_name} warm start for the {profile.name} profile (a one-time build; make lab builds "
            f"it ahead): supervised fine-tuning of a fresh GPT-2 for up to {steps} steps{early}. It is cached in "
            f"{target}; later runs load it in seconds.")
    try:
        measured = records.load(BUILD_RECORD)["values"][f"{task_name}/{profile.name}"]
        seconds = float(measured["sft_cpu_s"])
    except (RlprepError, KeyError, TypeError, ValueError):
        return text + " The bar below shows the time left."
    return text + f" Expect {wait_text(seconds)} (longer on a busy machine); the bar below shows the time left."


def wait_text(seconds: float) -> str:
    """``"about 25 s"`` / ``"about 4 minutes"``: a measured time as a learner's expectation."""
    if seconds < 90:
        return f"about {max(5, 5 * round(seconds / 5)):.0f} s"
    return f"about {seconds / 60:.0f} minutes"


def record_build_times(entries: list[Path]) -> Path:
    """Merge the measured build times of the full (not stopped-early) warm starts in ``entries`` into the
    :data:`BUILD_RECORD` record, keyed ``<task>/<profile>``."""
    from rlprep import records

    try:
        values = dict(records.load(BUILD_RECORD)["values"])
    except RlprepError:
        values = {}
    for path in entries:
        manifest = read_manifest(path)
        m = manifest["metrics"]
        values[f"{manifest['task']}/{manifest['profile']}"] = {
            "sft_s": m["time/sft_s"], "sft_cpu_s": m["time/sft_cpu_s"], "steps": m.get("sft/steps")}
    return records.record(BUILD_RECORD, values, command="rlprep models build --profile P --task T --record",
                          profile="per entry")


def _discard(path: Path) -> None:
    """Move ``path`` aside atomically, then delete it (a reader never sees it half-deleted)."""
    if not path.exists():
        return
    aside = Path(tempfile.mkdtemp(prefix=f".trash-{path.name}-", dir=path.parent))
    os.replace(path, aside / "old")
    shutil.rmtree(aside, ignore_errors=True)


def ensure_checkpoint(task_name: str, profile: Profile, seed: int = 0, force: bool = False,
                      progress: bool = True, *, variant: str | None = None, steps: int | None = None,
                      stop_after: int | None = None, stop_when=None) -> Path:
    """The verified checkpoint directory for ``(task, profile, seed)``, building it when missing or corrupt.

    A ``variant`` entry is built with the other keywords (``build_checkpoint``'s ``steps``, ``stop_after``,
    ``stop_when``); they change the weights, so they need a variant name of their own.
    """
    if variant is None and (steps, stop_after, stop_when) != (None, None, None):
        raise ValueError("steps, stop_after and stop_when build a different checkpoint: name it with variant=")
    target = checkpoint_dir(task_name, profile, seed, variant)
    if target.exists() and not force:
        problem = verify_checkpoint(target)
        if problem is None:
            return target
        warnings.warn(f"cached checkpoint {target} is corrupted ({problem}); rebuilding it", RuntimeWarning,
                      stacklevel=3)
        print(f"warning: cached checkpoint {target} is corrupted ({problem}); rebuilding it", file=sys.stderr)
    if progress:
        print(build_notice(task_name, profile, target, variant), file=sys.stderr, flush=True)
    tmp, _ = build_checkpoint(task_name, profile, seed, steps=steps, progress=progress, stop_after=stop_after,
                              stop_when=stop_when, variant=variant)
    if target.exists() and (force or verify_checkpoint(target) is not None):
        _discard(target)
    try:
        os.replace(tmp, target)
    except OSError:
        # Another process finished the same build first: keep its (identical, verified) copy.
        shutil.rmtree(tmp, ignore_errors=True)
        if verify_checkpoint(target) is not None:
            raise RlprepError(f"could not install the checkpoint at {target}",
                              f"delete {target} and run 'rlprep models build --task {task_name}' again") from None
    return target


def load_checkpoint(path: Path, device: str = "cpu"):
    """``(model, tokenizer)`` from one of our verified cache directories, model in eval mode."""
    from transformers import GPT2LMHeadModel

    from rlprep.tinyworld.tokenizer import build_tokenizer

    with _quiet_transformers():
        model = GPT2LMHeadModel.from_pretrained(path).to(device).eval()
    return model, build_tokenizer()


def load_external(name_or_path: str, device: str = "cpu"):
    """``(model, tokenizer)`` from any local directory or Hugging Face hub id (e.g. ``"gpt2"``).

    Offline, a hub id works only when it is already in the Hugging Face cache; anything that fails to load
    becomes an :class:`RlprepError` naming the fix. The tokenizer pads on the left and gets a pad token
    (its eos) when it has none.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    local = Path(name_or_path).expanduser()
    looks_local = local.exists() or name_or_path.startswith((".", "/", "~"))
    if looks_local and not (local / "config.json").is_file():
        raise RlprepError(f"no model checkpoint at {local} (no config.json there)",
                          "pass a directory written by save_pretrained, or a hub id such as gpt2")
    try:
        with _quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(str(local) if looks_local else name_or_path)
            model = AutoModelForCausalLM.from_pretrained(str(local) if looks_local else name_or_path)
    except Exception as err:  # transformers raises OSError, ValueError, HF hub errors...
        offline = os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("TRANSFORMERS_OFFLINE") == "1"
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        fix = (f"download it once where there is a network (huggingface-cli download {name_or_path}) and pass "
               f"that local directory, or drop --model to use the built-in tiny policy")
        if offline:
            fix = "running offline (HF_HUB_OFFLINE=1): " + fix
        raise RlprepError(f"could not load model {name_or_path!r}: {reason}", fix) from None
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.config.pad_token_id = tokenizer.pad_token_id
    return model.to(device).eval(), tokenizer
