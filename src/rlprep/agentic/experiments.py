"""The experiments behind notebooks 07 (agentic RL) and 08 (reward design), runnable from the command line.

Each function returns plain dicts/lists (JSON-serialisable) so a notebook can plot them and a long run can be
saved and quoted. Example (the runs the notebooks quote):

    python -m rlprep.agentic.experiments rewards --profile smoke --steps 60 --out w14.json
    python -m rlprep.agentic.experiments hacking --profile smoke --steps 60 --out w19.json
    python -m rlprep.agentic.experiments horizon --profile smoke      # also: credit, compaction, evolution

``--record`` also writes ``records/agentic_<experiment>.json`` (:func:`rlprep.records.record`) with the figures
the notebooks show through ``rlprep.records.show`` instead of typing them into the prose; ``--tag T`` writes
``records/agentic_<experiment>_T.json`` instead, so a second run (another learning rate) sits beside the first.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict

import numpy as np
import torch

from rlprep.agentic.episodes import (broadcast_turn_values, play, reward_matrix, transcript_batch)
from rlprep.agentic.train import ADVANTAGES, AgenticConfig, evaluate, policy_loss, train
from rlprep.errors import RlprepError

REWARD_SETUPS = {
    "outcome only": {"outcome": 1.0},
    "outcome + process": {"outcome": 1.0, "halving": 0.2},
}
"""W14: the same policy trained on the sparse outcome alone, or with the environment's per-turn process reward."""

HACKING_SETUPS = {
    "per-turn bonus (gameable)": {"outcome": 1.0, "per_turn_bonus": 0.5},
    "potential shaping (fix)": {"outcome": 1.0, "potential": 0.1},
}
"""W19: a bonus per well-formed guess (pays for stalling) vs potential-based progress shaping (cannot be farmed).
With 0.5 per turn, failing after 6 turns (3.0) beats succeeding on turn 3 (2.5); 0.1 · log2(32) = 0.5 is the
most the shaping can pay in a whole episode."""


def compare_rewards(model, tokenizer, setups: dict[str, dict[str, float]], config: AgenticConfig, *,
                    eval_n: int = 128, log=print) -> dict[str, dict]:
    """Train a copy of ``model`` once per reward setup (same seed, same budget) and evaluate each.

    Returns ``{name: {"history": [...], "before": eval dict, "after": eval dict, "seconds": float}}``;
    the evaluation is sampled play on held-out targets, scored with that setup's proxy and with success (gold).
    """
    results = {}
    for name, spec in setups.items():
        start = time.perf_counter()
        cfg = AgenticConfig(**{**config.__dict__, "reward": spec})
        trained, history = train(cfg, model, tokenizer)
        results[name] = {"history": history,
                         "before": evaluate(model, tokenizer, n=eval_n, spec=spec, max_turns=cfg.max_turns),
                         "after": evaluate(trained, tokenizer, n=eval_n, spec=spec, max_turns=cfg.max_turns),
                         "seconds": time.perf_counter() - start}
        log(f"{name}: success {results[name]['before']['reward/gold']:.2f} -> {results[name]['after']['reward/gold']:.2f}, "
            f"turns {results[name]['after']['stats/turns']:.2f} ({results[name]['seconds']:.0f} s)")
    return results


def gradient_noise_by_horizon(model, tokenizer, horizons=(2, 3, 4, 5, 6), *, n_targets: int = 8,
                              group_size: int = 8, seed: int = 0, credit: str = "trajectory") -> dict[str, list]:
    """W03/W16: how noisy is one episode's policy-gradient estimate as the horizon (turns allowed) grows?

    For each horizon H: play ``n_targets × group_size`` episodes with ``max_turns=H``, compute each episode's own
    gradient g_i of the outcome-reward surrogate (advantages from ``credit``), and report over episodes:
    ``grad_var`` = E‖g_i − ḡ‖² (trace of the covariance), ``signal`` = ‖ḡ‖², ``snr`` = ‖ḡ‖² / (E‖g_i − ḡ‖²/n),
    ``action_tokens`` per episode, ``success`` and ``return_var`` (variance of the episode return).
    Gradients are taken w.r.t. the output projection (``lm_head``/tied embedding) to keep the cost small.
    """
    params = [p for n, p in model.named_parameters() if "wte" in n or "lm_head" in n][:1]
    out = defaultdict(list)
    for H in horizons:
        seeds = [10**7 + seed * 1000 + t for t in range(n_targets) for _ in range(group_size)]
        episodes = play(model, tokenizer, seeds, max_turns=H, sample_seed=seed * 7 + H)
        rewards, turn_mask = reward_matrix(episodes, {"outcome": 1.0})
        turn_adv = ADVANTAGES[credit](rewards, turn_mask, group_size)
        grads = []
        for i, ep in enumerate(episodes):
            batch = transcript_batch(tokenizer, [ep], max_len=model.config.n_positions)
            token_adv = broadcast_turn_values(turn_adv[i:i + 1], batch.turn_index)
            loss = policy_loss(model, batch, token_adv) * float(batch.action_mask[:, 1:].sum())  # sum, not mean
            g = torch.autograd.grad(loss, params)[0].flatten()
            grads.append(g)
        G = torch.stack(grads)  # (B, P)
        mean = G.mean(0)
        noise = ((G - mean) ** 2).sum(1).mean()
        returns = (rewards * turn_mask).sum(1)
        out["horizon"].append(H)
        out["grad_var"].append(float(noise))
        out["signal"].append(float((mean ** 2).sum()))
        out["snr"].append(float((mean ** 2).sum() / (noise / len(episodes))))
        out["action_tokens"].append(float(sum(int(transcript_batch(tokenizer, [e]).action_mask.sum()) for e in episodes)
                                          / len(episodes)))
        out["success"].append(float(np.mean([e.success for e in episodes])))
        out["return_var"].append(float(returns.var(unbiased=True)))
    return dict(out)


def compaction_study(model, tokenizer, windows=(None, 3, 2, 1, 0), *, n: int = 256, seed: int = 0) -> dict[str, list]:
    """W18: play with the history compacted to the last ``m`` turns and measure what the policy can no longer see.

    For each window: ``success`` (sampled play), and ``aliasing``: at every decision, the number of distinct
    feasible intervals (the true state) that share the same visible context, averaged over decisions. 1.0 means
    the visible context determines the state; larger means a critic or baseline conditioned on the context must
    average over states with different values: the advantage of an action is blurred.
    """
    out = defaultdict(list)
    for window in windows:
        episodes = play(model, tokenizer, [2 * 10**9 + seed * n + i for i in range(n)], sample_seed=seed,
                        context_window=window)
        states_by_context = defaultdict(set)
        decisions = []
        for ep in episodes:
            for context, step in zip(ep.contexts, ep.steps):
                states_by_context[context].add(step.interval_before)
                decisions.append(context)
        out["window"].append("full" if window is None else window)
        out["success"].append(float(np.mean([e.success for e in episodes])))
        out["turns"].append(float(np.mean([e.n_turns for e in episodes])))
        out["aliasing"].append(float(np.mean([len(states_by_context[c]) for c in decisions])))
        out["distinct_contexts"].append(len(states_by_context))
    return dict(out)


def self_evolution(model, tokenizer, *, rounds: int = 3, episodes_per_round: int = 64, sft_steps: int = 4,
                   lr: float = 3e-4, keep: str = "verified", eval_n: int = 128, seed: int = 0) -> dict[str, list]:
    """W17: a weight-updating self-improvement loop (rejection-sampling fine-tuning, as in STaR / expert iteration).

    Each round: play ``episodes_per_round`` episodes with the current policy, keep the ones the environment
    verifies as successes (``keep="verified"``) or keep everything (``keep="all"``, no external check), then take
    ``sft_steps`` gradient steps of negative log-likelihood on the kept episodes' action tokens (observation
    tokens masked). NLL on kept episodes is the policy-gradient loss with advantage 1 on kept, 0 on dropped ones.
    Returns held-out sampled success (and turns) after each round, round 0 = the starting policy.
    """
    import copy
    import random

    if keep not in ("verified", "all"):
        raise ValueError(f"keep must be 'verified' or 'all', got {keep!r}")
    torch.manual_seed(seed)
    rng = random.Random(seed)
    policy = copy.deepcopy(model)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=lr, weight_decay=0.0)
    out = defaultdict(list)

    def record(r, kept_fraction):
        stats = evaluate(policy, tokenizer, n=eval_n, seed=777)
        out["round"].append(r)
        out["success"].append(stats["reward/gold"])
        out["turns"].append(stats["stats/turns"])
        out["kept_fraction"].append(kept_fraction)

    record(0, float("nan"))
    for r in range(1, rounds + 1):
        policy.eval()
        episodes = play(policy, tokenizer, [rng.randrange(10**8) for _ in range(episodes_per_round)],
                        sample_seed=seed * 100 + r)
        kept = [e for e in episodes if e.success] if keep == "verified" else episodes
        if kept:
            batch = transcript_batch(tokenizer, kept, max_len=policy.config.n_positions)
            ones = batch.action_mask.float()  # advantage 1 on every kept action token
            for _ in range(sft_steps):
                loss = policy_loss(policy, batch, ones)
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
                optimizer.step()
        record(r, len(kept) / len(episodes))
    return dict(out)


def _rounded(values: list, digits: int = 3) -> list:
    """Floats rounded for the record; NaN (e.g. no kept fraction before round 1) becomes null."""
    return [(round(v, digits) if math.isfinite(v) else None) if isinstance(v, float) else v for v in values]


def record_values(experiment: str, result: dict) -> dict:
    """The flat ``{key: value or list}`` that ``--record`` writes for ``experiment`` (what the notebooks quote)."""
    if experiment in ("rewards", "hacking"):
        values = {}
        for name, res in result.items():
            key = "".join(c if c.isalnum() else "_" for c in name).strip("_")
            while "__" in key:
                key = key.replace("__", "_")
            for stat, short in (("reward/gold", "success"), ("reward/proxy", "proxy"), ("stats/turns", "turns"),
                                ("stats/valid_actions", "valid_actions")):
                for when in ("before", "after"):
                    values[f"{key}_{short}_{when}"] = round(res[when][stat], 3)
        return values
    if experiment == "credit":
        return {f"{credit}_{key}": round(res[key][0], 3) for credit, res in result.items()
                for key in ("grad_var", "signal", "snr")}
    if experiment == "evolution":
        return {f"{keep}_{key}": _rounded(res[key]) for keep, res in result.items()
                for key in ("success", "kept_fraction") if key in res}
    return {key: _rounded(values) for key, values in result.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=["rewards", "hacking", "horizon", "credit", "compaction", "evolution"])
    parser.add_argument("--profile", default=None)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--targets", type=int, default=None, help="hidden numbers per step (group size stays)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default=None, help="run only this setup of rewards/hacking (its name)")
    parser.add_argument("--out", default=None, help="write the results here as JSON")
    parser.add_argument("--record", action="store_true",
                        help="also write records/agentic_<experiment>.json, the figures the notebooks show")
    parser.add_argument("--tag", default=None,
                        help="with --record: write records/agentic_<experiment>_<tag>.json (letters and digits)")
    args = parser.parse_args(argv)
    try:
        return _run(args, argv)
    except RlprepError as err:
        print(f"error: {err.problem}\nfix: {err.fix}", file=sys.stderr)
        return 2


def _records_folder():
    """``records/`` for ``--record``, checked before a long run rather than after it."""
    from rlprep import records

    folder = records.records_dir()
    if folder.exists() and not folder.is_dir():
        raise RlprepError(f"the records folder {folder} is a file", "set RLPREP_RECORDS to a folder")
    return folder


def _record_name(args) -> str:
    """``agentic_<experiment>`` or, with ``--tag``, ``agentic_<experiment>_<tag>``; a bad tag fails before the run."""
    if args.tag is None:
        return f"agentic_{args.experiment}"
    if not args.tag.isascii() or not args.tag.isalnum():
        raise RlprepError(f"--tag {args.tag!r} cannot name a record file (letters and digits only)",
                          "pass a tag such as lr3e4")
    return f"agentic_{args.experiment}_{args.tag}"


def _run(args, argv) -> int:
    from rlprep.tinyworld import load_policy

    name = _record_name(args)
    if args.record:
        _records_folder()
    model, tokenizer = load_policy("multiturn", args.profile)
    overrides = {k: v for k, v in {"steps": args.steps, "lr": args.lr, "seed": args.seed,
                                        "targets_per_step": args.targets}.items() if v is not None}
    config = AgenticConfig.for_profile(args.profile, **overrides)
    start = time.perf_counter()
    if args.experiment == "rewards":
        setups = {k: v for k, v in REWARD_SETUPS.items() if args.only in (None, k)}
        result = compare_rewards(model, tokenizer, setups, config)
    elif args.experiment == "hacking":
        setups = {k: v for k, v in HACKING_SETUPS.items() if args.only in (None, k)}
        result = compare_rewards(model, tokenizer, setups, config)
    elif args.experiment == "horizon":
        result = gradient_noise_by_horizon(model, tokenizer, seed=args.seed)
    elif args.experiment == "credit":
        result = {credit: gradient_noise_by_horizon(model, tokenizer, horizons=(6,), seed=args.seed, credit=credit)
                  for credit in ("trajectory", "turn")}
    elif args.experiment == "compaction":
        result = compaction_study(model, tokenizer, seed=args.seed)
    else:
        result = {keep: self_evolution(model, tokenizer, keep=keep, seed=args.seed) for keep in ("verified", "all")}
    print(json.dumps({k: v for k, v in result.items() if k != "history"} if isinstance(result, dict) else result,
                     default=lambda o: None)[:4000])
    print(f"took {time.perf_counter() - start:.0f} s")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh)
    if args.record:
        from rlprep import records
        from rlprep.profiles import get_profile

        command = "python -m rlprep.agentic.experiments " + " ".join(argv if argv is not None else sys.argv[1:])
        print(records.record(name, record_values(args.experiment, result),
                             command=command, profile=get_profile(args.profile).name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
