"""The GRPO warm start: the arithmetic SFT run stopped early, so RL has headroom (W11: a policy that already
solves everything has all-correct groups and no advantage to learn from).

- :func:`load_warm_start` picks one of three starts (at most one rule is set): a shorter SFT run of the same
  recipe (``sft_steps``, its own compressed schedule), the profile's full run stopped after ``sft_stop`` steps,
  or that run stopped at the first check where greedy accuracy on 256 *training* prompts reaches
  ``sft_stop_accuracy`` (the test prompts are never used to choose it). Each is built once and cached by
  :mod:`rlprep.tinyworld.checkpoints` as a variant of the full run (verified, atomic, rebuilt when corrupt).
- :func:`sft_curve` follows the full run and measures, every few steps, what a start taken there would offer.

    python -m rlprep.trainers.grpo --profile cpu --sft-curve 700
"""

from __future__ import annotations

from rlprep.profiles import Profile, get_profile

SFT_CHECK_EVERY = 25
"""SFT steps between two accuracy checks of ``sft_stop_accuracy``."""


def stop_probe(task, seed: int) -> list:
    """The 256 *training* prompts the ``sft_stop_accuracy`` rule is measured on (the test set stays unseen)."""
    return task.sample(256, split="train", seed=seed + 20_000)


def warm_start_kwargs(config) -> dict:
    """The :func:`load_warm_start` keywords a trainer config (``GRPOConfig``) asks for."""
    return dict(sft_steps=config.sft_steps, sft_stop=config.sft_stop, sft_stop_accuracy=config.sft_stop_accuracy)


def load_warm_start(profile: str | Profile | None = None, sft_steps: int | None = None, seed: int = 0, *,
                    sft_stop: int | None = None, sft_stop_accuracy: float | None = None):
    """``(policy, tokenizer)``: the arithmetic SFT policy; with ``sft_steps`` a shorter SFT of the same recipe
    (its own, compressed schedule); with ``sft_stop`` the profile's full SFT run stopped after that many steps;
    with ``sft_stop_accuracy`` that run stopped at the first check where greedy accuracy on 256 training
    prompts reaches it. The manifest's ``metrics`` hold ``sft/steps`` and the held-out ``eval/accuracy``."""
    from rlprep.tinyworld import build_tokenizer, checkpoints, get_task, load_policy
    from rlprep.tinyworld.tasks.arithmetic import evaluate_accuracy

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    if sum(x is not None for x in (sft_steps, sft_stop, sft_stop_accuracy)) > 1:
        raise ValueError("pass at most one of sft_steps (a shorter SFT run), sft_stop and sft_stop_accuracy "
                         "(stop the full run early)")
    if sft_stop is not None and not 1 <= sft_stop <= p.sft_steps:
        raise ValueError(f"sft_stop must be in 1..{p.sft_steps} (the {p.name} profile's SFT steps), got {sft_stop}")
    if sft_stop_accuracy is not None and not 0 < sft_stop_accuracy <= 1:
        raise ValueError(f"sft_stop_accuracy must be in (0, 1], got {sft_stop_accuracy}")
    variant = warm_start_variant(p, sft_steps, sft_stop=sft_stop, sft_stop_accuracy=sft_stop_accuracy)
    if variant is None:
        return load_policy("arithmetic", p, seed=seed)
    if sft_stop_accuracy is not None:
        task = get_task("arithmetic")
        probe, probe_tokenizer = stop_probe(task, seed), build_tokenizer()

        def stop_when(step: int, model) -> bool:
            if (step + 1) % SFT_CHECK_EVERY:
                return False
            return evaluate_accuracy(model, probe_tokenizer, task, probe, max_new_tokens=6) >= sft_stop_accuracy

        build = dict(stop_when=stop_when)
    elif sft_stop is not None:
        build = dict(stop_after=sft_stop)
    else:
        build = dict(steps=sft_steps)
    path = checkpoints.ensure_checkpoint("arithmetic", p, seed, variant=variant, **build)
    return checkpoints.load_checkpoint(path, device=p.device)


def warm_start_variant(profile: Profile, sft_steps: int | None = None, *, sft_stop: int | None = None,
                       sft_stop_accuracy: float | None = None) -> str | None:
    """The cache variant name of :func:`load_warm_start`'s start (the rule is part of the name), or None when it is
    the profile's full SFT run."""
    if sft_stop_accuracy is not None:
        return f"acc{sft_stop_accuracy:g}-every{SFT_CHECK_EVERY}"
    if sft_stop is not None and sft_stop != profile.sft_steps:
        return f"stop{sft_stop}"
    if sft_steps is not None and sft_steps != profile.sft_steps:
        return f"sft{sft_steps}"
    return None


def sft_curve(profile: Profile, stop: int, every: int = SFT_CHECK_EVERY, seed: int = 0) -> list[dict]:
    """Follow the profile's full arithmetic SFT run for its first ``stop`` steps (nothing is cached) and, every
    ``every`` steps, measure what a GRPO warm start taken there would offer: ``test`` (greedy, 256 held-out
    prompts), ``train_probe`` (the ``sft_stop_accuracy`` rule's number), ``sampled`` (mean reward of 8 samples
    at temperature 1 on 64 training prompts) and ``mixed`` (share of those groups with both right and wrong
    samples: the groups that give GRPO a gradient). Used to choose the warm start; see docs/benchmarks.md."""
    from rlprep.tinyworld import build_tokenizer, get_task
    from rlprep.tinyworld.checkpoints import sft_config
    from rlprep.tinyworld.model import build_model
    from rlprep.tinyworld.sft import train_sft
    from rlprep.tinyworld.tasks.arithmetic import evaluate_accuracy, sample_success_rates

    tokenizer, task = build_tokenizer(), get_task("arithmetic")
    model = build_model(profile, tokenizer, seed=seed).to(profile.device)
    test = task.sample(256, split="test", seed=seed + 10_000)
    probe = stop_probe(task, seed)
    pool = [ex.prompt for ex in task.sample(64, split="train", seed=seed + 5)]
    rows: list[dict] = []

    def on_step(step: int, loss: float) -> None:
        if (step + 1) % every:
            return
        rates = sample_success_rates(model, tokenizer, task, pool, 8, 6, seed=seed + 1)
        rows.append({"step": step + 1, "loss": loss,
                     "test": evaluate_accuracy(model, tokenizer, task, test, 6),
                     "train_probe": evaluate_accuracy(model, tokenizer, task, probe, 6),
                     "sampled": float(rates.mean()), "mixed": float(((rates > 0) & (rates < 1)).mean())})
        print("  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in rows[-1].items()),
              flush=True)
        model.train()

    train_sft(model, tokenizer, task, sft_config(task, profile, seed, stop_after=stop), on_step=on_step)
    return rows


def print_sft_curve(profile_name: str | None, steps: int, device: str | None = None) -> int:
    """``--sft-curve STEPS``: :func:`sft_curve` of the named profile (on ``device``), one printed row per check."""
    import dataclasses

    from rlprep.errors import RlprepError
    from rlprep.profiles import PROFILES

    if steps < 1:
        raise RlprepError(f"--sft-curve must be >= 1, got {steps}", "pass a number of SFT steps, e.g. 700")
    profile = get_profile(profile_name)  # an unknown name raises the RlprepError that lists the profiles
    if device:
        profile = dataclasses.replace(PROFILES[profile.name], device=device)
    sft_curve(profile, min(steps, profile.sft_steps))
    return 0
