"""``rlprep train <trainer>``: run one of the package's trainers with the reference functions.

    rlprep train grpo --profile cpu
    rlprep train dpo --profile cpu --sweep
    rlprep train reward_model --profile cpu --best-of-n 64
    rlprep train ppo --profile cpu --kl-sweep --set gae_lambda=0.9

One ``<trainer>_main(argv, prog)`` per trainer (:data:`MAINS`) parses the options after the trainer's name
(``rlprep train grpo --help``) with :func:`trainer_parser`, which they all share: ``--profile``, ``--steps``,
``--run-dir`` and ``--set KEY=VALUE`` for any field of the trainer's config dataclass, converted by the type the
field declares. Every bad option is an ``error:``/``fix:`` (:class:`~rlprep.errors.RlprepError`, exit 2), raised
while the config is built, before any training starts. ``python -m rlprep.trainers.<name>`` runs the same.

Each run writes its checkpoint, ``history.json`` and ``plot.png`` to a folder of its own (:func:`run_folder`: a new
``<RLPREP_HOME>/runs/<trainer>-<time>`` unless ``--run-dir`` names one, which must not hold a run already) and
says where before it starts. A run stopped by Ctrl-C (or SIGTERM, SIGHUP) keeps what it trained, prints its
summary, and exits 128 + the signal (130 for Ctrl-C), like every other ``rlprep`` command.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from pathlib import Path

from rlprep.errors import RlprepError

TRAINERS = ("reward_model", "ppo", "dpo", "grpo")
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trainer", choices=TRAINERS, help="which trainer to run")
    parser.add_argument("options", nargs=argparse.REMAINDER,
                        help="options passed to the trainer ('rlprep train TRAINER --help' lists them)")


def run(args: argparse.Namespace) -> int:
    return int(MAINS[args.trainer](list(args.options), f"rlprep train {args.trainer}") or 0)


class TrainerArgumentParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are :class:`RlprepError` (``error:``/``fix:``, exit 2)."""

    def error(self, message: str):  # argparse's hook
        raise RlprepError(message, f"run '{self.prog} --help' to see every option")


def trainer_parser(prog: str, description: str, config_cls: type) -> TrainerArgumentParser:
    """The options every trainer shares; the trainer adds its own after."""
    parser = TrainerArgumentParser(prog=prog, description=description)
    parser.add_argument("--profile", default=None, help="smoke, cpu or gpu (default: RLPREP_PROFILE, else auto)")
    parser.add_argument("--steps", type=int, default=None, help="training steps (default: the profile's)")
    parser.add_argument("--run-dir", default=None,
                        help="a new folder for the checkpoint, history.json and plot.png (default: a new "
                             "<RLPREP_HOME>/runs/<trainer>-<time> per run; a folder holding a run is refused)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help=f"override a {config_cls.__name__} field, e.g. --set lr=2e-4 (repeatable); fields: "
                             + ", ".join(f.name for f in dataclasses.fields(config_cls)))
    return parser


def _convert(annotation, raw: str):
    """``raw`` as a value of type ``annotation`` (int, float, bool, str, ``X | None``, ``tuple[X, ...]``)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if raw.strip().lower() == "none" and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _convert(inner, raw)
    if origin is tuple:
        return tuple(_convert(args[0], item) for item in raw.split(",") if item.strip())
    if annotation is bool:
        word = raw.strip().lower()
        if word not in _TRUE + _FALSE:
            raise ValueError(f"expected true or false, got {raw!r}")
        return word in _TRUE
    if annotation in (int, float, str):
        return annotation(raw.strip())
    raise ValueError(f"a {annotation} field cannot be set from the command line")


def parse_overrides(config_cls: type, pairs: list[str]) -> dict:
    """``["lr=2e-4", "dynamic_sampling=true"]`` -> ``{"lr": 2e-4, "dynamic_sampling": True}``, each value
    converted by the type ``config_cls`` declares for that field. A bad pair is an :class:`RlprepError`."""
    hints = typing.get_type_hints(config_cls)
    fields = [f.name for f in dataclasses.fields(config_cls)]
    out = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in fields:
            raise RlprepError(f"--set {pair!r}: {config_cls.__name__} has no field {key!r}" if sep else
                              f"--set {pair!r}: expected KEY=VALUE",
                              f"use KEY=VALUE with KEY one of: {', '.join(fields)}")
        try:
            out[key] = _convert(hints[key], raw)
        except ValueError as err:
            kind = getattr(hints[key], "__name__", str(hints[key]))
            raise RlprepError(f"--set {pair!r}: {key} must be {kind} ({err})",
                              f"give {key} a value of type {kind}, e.g. "
                              f"{_example(config_cls, key, hints[key])}") from None
    return out


def _example(config_cls: type, key: str, annotation) -> str:
    """``--set key=<the config's default>`` (its own value, so the suggestion is one that makes sense for the field);
    a field without a usable default gets a value of its type."""
    field = next(f for f in dataclasses.fields(config_cls) if f.name == key)
    default = field.default
    if isinstance(default, bool):
        return f"--set {key}={str(default).lower()} (its default)"
    if isinstance(default, (int, float)):
        return f"--set {key}={default!r} (its default)"
    if isinstance(default, str) and default:
        return f"--set {key}={default} (its default)"
    if isinstance(default, tuple) and default:
        return f"--set {key}={','.join(str(v) for v in default)} (its default)"
    defaults = {int: "3", float: "0.5", bool: "true", str: "text"}
    for candidate in (annotation, *typing.get_args(annotation)):
        if candidate in defaults:
            return f"--set {key}={defaults[candidate]}"
    return f"--set {key}=VALUE"


RUN_FILES = ("checkpoint.pt", "history.json", "plot.png")


def run_folder(trainer: str, given: str | None) -> Path:
    """The folder a run writes to: ``given`` (refused when it already holds a run's files, so no run is overwritten
    silently), else a new ``<RLPREP_HOME>/runs/<trainer>-<YYYYmmdd-HHMMSS>`` (``-2``, ``-3``… when taken)."""
    import time

    from rlprep.paths import data_dir

    if given:
        path = Path(given).expanduser()
        if path.exists() and not path.is_dir():
            raise RlprepError(f"--run-dir {given} is a file, not a folder", "pass a new folder, e.g. --run-dir my-run")
        held = [name for name in RUN_FILES if (path / name).exists()]
        if held:
            raise RlprepError(f"--run-dir {given} already holds a run ({', '.join(held)}); this run would overwrite it",
                              f"pass a new folder (e.g. --run-dir {given.rstrip('/')}-2), or leave --run-dir out for "
                              "a new folder per run; nothing was trained")
        return path
    root = data_dir() / "runs"
    root.mkdir(parents=True, exist_ok=True)
    stamp, n = time.strftime("%Y%m%d-%H%M%S"), 1
    while True:  # claim the name by creating it: two runs started in the same second get two folders
        path = root / (f"{trainer}-{stamp}" if n == 1 else f"{trainer}-{stamp}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            n += 1


def build_config(config_cls: type, args: argparse.Namespace, prog: str, **options):
    """``config_cls.for_profile(args.profile, ...)`` from ``--steps``, ``--run-dir``, ``--set`` and the trainer's
    own ``options`` (None = not given); the config's own checks become an :class:`RlprepError`. Prints where the
    run's files go (:func:`run_folder`)."""
    overrides = parse_overrides(config_cls, args.overrides)
    given = {"steps": args.steps, **options}
    overrides.update({k: v for k, v in given.items() if v is not None})
    try:
        config = config_cls.for_profile(args.profile, **overrides)
    except ValueError as err:
        raise RlprepError(str(err), f"change that option ('{prog} --help' lists them); nothing was trained") from None
    folder = run_folder(prog.split()[-1], args.run_dir)
    sweep = any(getattr(args, flag, False) for flag in ("sweep", "kl_sweep"))
    print(f"run files: {folder}/{'<one folder per run of the sweep>/' if sweep else ''}"
          f"{{{','.join(RUN_FILES)}}}, written at the end or when the run is stopped", flush=True)
    return dataclasses.replace(config, run_dir=str(folder))


def finish(history) -> int:
    """0 for a run that ran to the end; a stopped run (its files saved, its summary printed) stops the command
    as the signal did, so ``rlprep`` exits 128 + the signal (130 for Ctrl-C)."""
    if history.interrupted:
        import signal

        from rlprep.interrupts import Interrupted

        raise Interrupted(history.stop_signum or signal.SIGINT)
    return 0


# ------------------------------------------------------------------------------------------------ trainers
def grpo_main(argv: list[str], prog: str) -> int:
    import math

    from rlprep.trainers.grpo import GRPOConfig, train_grpo

    parser = trainer_parser(prog, "GRPO/DAPO on the arithmetic task (reference functions).", GRPOConfig)
    parser.add_argument("--sft-curve", type=int, default=None, metavar="STEPS",
                        help="instead of GRPO: follow the profile's SFT run for STEPS steps and print what a warm "
                             "start would offer every 25 steps (rlprep.tinyworld.warm_start.sft_curve)")
    parser.add_argument("--device", default=None, help="torch device of the model (default: the profile's)")
    args = parser.parse_args(argv)
    if args.sft_curve is not None:
        from rlprep.tinyworld.warm_start import print_sft_curve

        return print_sft_curve(args.profile, args.sft_curve, args.device)
    config = build_config(GRPOConfig, args, prog, device=args.device)
    history = train_grpo(config, live=False)
    meta, n = history.meta, config.eval_size
    start, end = meta["accuracy_start"], meta["accuracy_end"]
    se = lambda p: math.sqrt(p * (1 - p) / n)  # noqa: E731  binomial standard error of one accuracy
    noise = 2 * math.hypot(se(start), se(end))  # two standard errors of the difference
    curve = " ".join(f"{r['step']}:{r['eval/accuracy']:.3f}" for r in history if r.get("eval/accuracy") is not None)
    print(f"held-out greedy accuracy by step ({n} test prompts): {curve}")
    print(f"profile={config.profile} steps={len(history) - 1} accuracy {start:.3f} ± {se(start):.3f} -> "
          f"{end:.3f} ± {se(end):.3f} ({100 * (end - start):+.1f} points"
          f"{', within noise' if abs(end - start) <= noise else ''}) in {meta['wall_s']:.0f} s"
          f"{' (interrupted)' if history.interrupted else ''}")
    if config.profile == "smoke":
        print(smoke_note(history.trainer.policy, len(history) - 1, config.batch_size, start))
    return finish(history)


def smoke_note(policy, steps: int, batch: int, start: float) -> str:
    """What a smoke run can and cannot show, with the figures of this run and of the cpu profile's."""
    from rlprep.trainers.grpo import GRPOConfig
    from rlprep.tinyworld.model import count_parameters

    cpu = GRPOConfig.for_profile("cpu")
    return (f"note: smoke checks that the pieces run, not that GRPO learns: a {count_parameters(policy) / 1e6:.2f}M-"
            f"parameter GPT-2, {steps} steps of {batch} completions, from a warm start that already scores "
            f"{start:.2f}. Too small and too short to learn: a change of a few points either way is noise. To see "
            f"GRPO learn, run --profile cpu ({cpu.steps} steps of {cpu.batch_size} completions, from a warm start "
            f"stopped where it first scores {cpu.sft_stop_accuracy:g} on training prompts).")


def _parse_with_sweep(argv: list[str], prog: str, description: str, config_cls: type, field: str,
                      field_help: str, sweep_flag: str, sweep_help: str):
    """``(args, config)`` for a trainer with one float option for ``field`` (``--kl-coef`` for ``kl_coef``) and
    a sweep flag."""
    parser = trainer_parser(prog, description, config_cls)
    parser.add_argument("--" + field.replace("_", "-"), dest=field, type=float, default=None, help=field_help)
    parser.add_argument(sweep_flag, action="store_true", help=sweep_help)
    args = parser.parse_args(argv)
    return args, build_config(config_cls, args, prog, **{field: getattr(args, field)})


def dpo_main(argv: list[str], prog: str) -> int:
    import time

    from rlprep.trainers.dpo import SWEEP_BETAS, DPOConfig, beta_sweep, train_dpo

    args, config = _parse_with_sweep(argv, prog, "DPO on the reviews pairs (reference functions).", DPOConfig,
                                     "beta", "DPO's beta > 0 (default: the profile's)",
                                     "--sweep", f"run the beta sweep {SWEEP_BETAS}")
    t0 = time.perf_counter()
    if args.sweep:
        rows = beta_sweep(config=config)
        for r in rows:
            print(f"beta={r['beta']:<5g} KL {r['kl']:7.3f} ± {r['kl_se']:.3f} nats  gold {r['gold']:+.3f} "
                  f"± {r['gold_se']:.3f} (SFT {r['gold_start']:+.3f})  implicit acc {r['reward/implicit_accuracy']:.2f}")
        kls = [r["kl"] for r in rows]
        print(f"KL falls as beta grows: {all(a >= b for a, b in zip(kls, kls[1:]))}; {time.perf_counter() - t0:.0f} s")
        return finish(rows[-1]["history"])
    h = train_dpo(config, live=False)
    m = h.meta
    print(f"beta={config.beta:g} loss {h[1]['loss/dpo']:.4f} -> {h.last('loss/dpo'):.4f}, implicit acc "
          f"{h.last('reward/implicit_accuracy'):.2f}, KL {m['kl']:.3f} nats, gold {m['gold_start']:+.3f} -> "
          f"{m['gold']:+.3f} ± {m['gold_se']:.3f}, {m['wall_s']:.0f} s")
    return finish(h)


def ppo_main(argv: list[str], prog: str) -> int:
    from rlprep.trainers.ppo import PPOConfig, kl_sweep, train_ppo

    args, config = _parse_with_sweep(argv, prog, "PPO-RLHF on reviews (reference functions).", PPOConfig,
                                     "kl_coef", "weight >= 0 of the per-token KL penalty in the reward "
                                                "(default: the profile's)",
                                     "--kl-sweep", "run kl_coef in (0, 0.01, 0.05, 0.2)")
    if args.kl_sweep:
        rows = kl_sweep(config=config)
        for r in rows:
            print(f"kl_coef={r['kl_coef']:<5g} RM {r['rm_start']:+.3f} -> {r['rm_end']:+.3f}  gold "
                  f"{r['gold_start']:+.3f} -> {r['gold_end']:+.3f} ± {r['gold_end_se']:.3f}  KL {r['kl_end']:.3f}")
        return finish(rows[-1]["history"])
    h = train_ppo(config, live=False)
    m = h.meta
    print(f"profile={config.profile} kl_coef={config.kl_coef:g}: gold {m['gold_start']:+.3f} ± {m['gold_start_se']:.3f}"
          f" -> {m['gold_end']:+.3f} ± {m['gold_end_se']:.3f} ({m['gold_gain_se']:+.1f} SE), RM {m['rm_start']:+.3f}"
          f" -> {m['rm_end']:+.3f}, KL {m['kl_end']:.3f} nats/seq, {m['wall_s']:.0f} s")
    return finish(h)


def reward_model_main(argv: list[str], prog: str) -> int:
    from rlprep.trainers.reward_model import RewardModelConfig, best_of_n, train_reward_model

    parser = trainer_parser(prog, "Train the reviews reward model (reference Bradley-Terry loss).",
                            RewardModelConfig)
    parser.add_argument("--best-of-n", type=int, default=0, metavar="PROMPTS",
                        help="after training, also run best-of-N (N = 1..32) on this many test prompts (0: skip)")
    args = parser.parse_args(argv)
    if args.best_of_n < 0:
        raise RlprepError(f"--best-of-n must be >= 0 (a number of test prompts), got {args.best_of_n}",
                          "pass e.g. --best-of-n 64, or 0 to skip best-of-N; nothing was trained")
    config = build_config(RewardModelConfig, args, prog)
    rm, history = train_reward_model(config, live=False)
    m = history.meta
    print(f"profile={config.profile} held-out pairwise accuracy {m['accuracy_start']:.3f} -> {m['accuracy']:.3f} "
          f"± {m['accuracy_se']:.3f} (label-noise ceiling {m['ceiling/expected']:.3f}, gold scorer on these labels "
          f"{m['ceiling/gold_on_labels']:.3f}), gold-order agreement {m['accuracy_gold']:.3f}, "
          f"Pearson r with gold {m['pearson_gold']:.3f}, {m['wall_s']:.0f} s")
    finish(history)  # a stopped run ends here, before best-of-N
    if args.best_of_n:
        from rlprep.tinyworld import get_task, load_policy

        policy, tokenizer = load_policy("reviews", config.profile)
        prompts = [ex.prompt for ex in get_task("reviews").sample(args.best_of_n, split="test", seed=5)]
        bon = best_of_n(policy, rm.to(next(policy.parameters()).device), tokenizer, prompts, ns=(1, 2, 4, 8, 16, 32))
        for i, n in enumerate(bon["n"]):
            print(f"  best-of-{n:<3d} RM {bon['reward/rm'][i]:+.3f}  gold {bon['reward/gold'][i]:+.3f} "
                  f"± {bon['reward/gold_se'][i]:.3f}  KL≤{bon['kl_bound'][i]:.2f}")
    return 0


MAINS = {"reward_model": reward_model_main, "ppo": ppo_main, "dpo": dpo_main, "grpo": grpo_main}
"""``rlprep train <name>``'s option parser and summary, by trainer."""
