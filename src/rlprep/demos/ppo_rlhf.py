"""lab03's GPT-2 demos: PPO-RLHF on the reviews policy with the learner's five functions.

``main_run`` trains once against the lab 2 reward model and plots RM reward, gold reward, KL, clip fraction,
entropy and value loss; ``clip_sweep`` reruns it shorter for ε ∈ {0.1, 0.2, 0.3} (W06; PPO, Schulman et al. 2017,
arXiv 1707.06347, Eq. 7); ``kl_sweep`` trains against a deliberately weak proxy RM for several kl_coef and shows
reward hacking (Gao et al. 2022, arXiv 2210.10760, Fig. 1). The functions are passed by keyword
(``masked_mean``, ``kl_penalized_rewards``, ``compute_gae_tokens``, ``ppo_clip_loss``, ``value_loss``) and default
to the references. ``python -m rlprep.demos.ppo_rlhf --record`` runs all three with the references and writes
``records/lab03_ppo.json``, the figures lab03's text quotes: the two sweeps compare settings, so it trains each of
them for :data:`RECORD_SEEDS` and records means with 95% Student-t intervals over seeds and paired differences seed
by seed (:func:`rlprep.demos.ppo_lambda.summary`'s pattern); the main run compares nothing and stays one seed.
"""

from __future__ import annotations

import copy
import itertools
import math
import statistics
from dataclasses import replace

from rlprep.demos.lab_runs import profile_note, record_cli, save_record
from rlprep.demos.seed_stats import check_seeds, interval, mean_ci95, mean_series, reading, runs_by_seed
from rlprep.profiles import Profile, get_profile
from rlprep.trainers.ppo import PPOConfig, train_ppo

RECORD = "lab03_ppo"
CLIP_EPS = (0.1, 0.2, 0.3)
KL_STEPS = {"smoke": 2, "cpu": 40}
"""PPO steps per kl_coef against the weak proxy RM (gpu: twice the profile's main run). In the cpu profile the hack
shows by step 40 (docs/benchmarks.md: held-out gold at kl_coef 0 is past its peak by then), and 40 keeps the lab's
three demos plus the record within about 20 minutes on a shared 2-core machine."""
RECORD_SEEDS = (0, 1, 2)
"""Training seeds of the recorded clip and kl_coef sweeps (``PPOConfig.seed``: prompts, sampling, minibatch order,
held-out prompts). Every run starts from the same SFT policy, lab 2 RM and weak proxy RM (each trained once), so the
runs of one seed differ by the swept setting alone. The lab's cells train one seed (0), to stay minutes long."""
EPS_GAPS = (((0.1, 0.2), "clipfrac"), ((0.2, 0.3), "clipfrac"), ((0.3, 0.1), "gold"))
"""Paired differences over ε the record holds, ``epsgap_<a>_vs_<b>_<quantity>`` = q(ε = a) − q(ε = b), seed by seed."""
KL_GAPS = (((0.05, 0.0), "gold_end"), ((0.05, 0.0), "rm_end"), ((0.05, 0.0), "kl_end"), ((0.05, 0.0), "parse_last10"))
"""Paired differences over kl_coef, ``klgap_<a>_vs_<b>_<quantity>``: what lab03's text compares between kl_coef 0.05
and 0 (held-out gold, RM reward, KL, share of samples that parse over the last 10 steps)."""
QUANTITY_WORDS = {"clipfrac": "clip fraction", "gold": "held-out gold reward", "gold_end": "held-out gold reward",
                  "rm_end": "RM reward", "kl_end": "KL", "parse_last10": "share of parsing samples"}


def _setup(profile):
    """(profile, SFT policy, tokenizer, lab 2 reward model, the profile's PPOConfig), all cached."""
    from rlprep.tinyworld import load_policy
    from rlprep.trainers.reward_model import load_reward_model

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    policy, tokenizer = load_policy("reviews", p)
    return p, policy, tokenizer, load_reward_model(p, policy=policy, tokenizer=tokenizer), PPOConfig.for_profile(p)


def _show(fig, show: bool):
    import matplotlib.pyplot as plt

    if show:
        plt.show()
    return fig


def main_run(profile=None, show: bool = True, progress: bool | None = None, **functions):
    """One PPO run with ``functions``; prints held-out gold reward start -> end, RM reward and KL; plots the curves."""
    p, policy, tokenizer, reward_model, config = _setup(profile)
    print(profile_note(f"PPO-RLHF, {config.steps} steps, kl_coef {config.kl_coef}", p))
    history = train_ppo(config, policy=copy.deepcopy(policy), tokenizer=tokenizer, reward_model=reward_model,
                        live=progress, **functions)
    m = history.meta
    print(f"held-out gold reward {m['gold_start']:+.3f} ± {m['gold_start_se']:.3f} -> {m['gold_end']:+.3f} ± "
          f"{m['gold_end_se']:.3f} ({m['gold_gain_se']:+.1f} standard errors), RM {m['rm_start']:+.3f} -> "
          f"{m['rm_end']:+.3f}, KL to the SFT policy {m['kl_end']:.3f} nats per completion")
    _show(history.plot(["reward/rm", "reward/gold", "stats/kl_k1_seq", "stats/clipfrac_two_sided", "stats/entropy",
                        "loss/value"], title=f"PPO-RLHF ({p.name} profile, kl_coef {config.kl_coef})"), show)
    return history


def clip_sweep(profile=None, clip_eps=CLIP_EPS, show: bool = True, progress: bool | None = None, *,
               seeds=(0,), **functions):
    """A short run per clip range ε and seed, with a 3x learning rate and 4 passes per batch so the ratio reaches
    1 ± ε. Returns ``{ε: History}`` for one seed (the lab's default) and ``{ε: {seed: History}}`` for several."""
    import matplotlib.pyplot as plt

    from rlprep.metrics import unit

    seeds = check_seeds(seeds, "ε")
    p, policy, tokenizer, reward_model, config = _setup(profile)
    steps = {"smoke": 2, "cpu": max(1, config.steps // 6)}.get(p.name, config.steps)
    print(profile_note(f"PPO clip-range sweep, {steps} steps for each ε in {tuple(clip_eps)}"
                       + (f" and seed in {seeds}" if len(seeds) > 1 else ""), p))
    runs: dict = {eps: {} for eps in clip_eps}
    for seed, eps in itertools.product(seeds, clip_eps):  # seed-major: a stop leaves whole seeds behind it
        print(f"run ε = {eps}" + (f", seed {seed}" if len(seeds) > 1 else "") + ":")
        runs[eps][seed] = train_ppo(replace(config, clip_eps=eps, seed=seed, steps=steps, eval_every=0,
                                            lr=3 * config.lr, ppo_epochs=4),
                                    policy=copy.deepcopy(policy), tokenizer=tokenizer, reward_model=reward_model,
                                    live=progress, **functions)
        if runs[eps][seed].interrupted:
            break
    runs = {eps: by_seed for eps, by_seed in runs.items() if by_seed}
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for key, ax in zip(("stats/clipfrac_two_sided", "stats/approx_kl", "reward/rm"), axes):
        for eps, by_seed in runs.items():
            n = len(by_seed)
            ax.plot(*mean_series(by_seed.values(), key), marker=".",
                    label=f"ε = {eps}" + (f" (mean of {n} seeds)" if n > 1 else ""))
        ax.set(xlabel="PPO step", ylabel=f"{key.split('/', 1)[1]} ({unit(key)})", title=key)
        ax.legend()
    fig.suptitle(f"Clip range ε: {steps} steps each ({p.name} profile)")
    fig.tight_layout()
    _show(fig, show)
    for eps, by_seed in runs.items():
        for seed, h in by_seed.items():
            print(f"ε = {eps}" + (f", seed {seed}" if len(seeds) > 1 else "") + f": gold {h.meta['gold_end']:+.3f} "
                  f"± {h.meta['gold_end_se']:.3f}, KL {h.meta['kl_end']:.3f} nats, mean clip fraction "
                  f"{clip_fraction(h):.3f}")
    return runs if len(seeds) > 1 else {eps: by_seed[seeds[0]] for eps, by_seed in runs.items()}


def clip_fraction(history) -> float:
    """Mean of ``stats/clipfrac_two_sided`` over the run's steps."""
    _, values = history.series("stats/clipfrac_two_sided")
    return sum(values) / max(1, len(values))


def kl_sweep(profile=None, show: bool = True, progress: bool | None = None, *, seeds=(0,),
             **functions) -> list[dict]:
    """Probe a weak proxy RM, then train against it for each seed and kl_coef; plot the first seed's RM reward, gold
    and parse rate. One row per run (:func:`~rlprep.demos.reward_hacking.hacking_sweep`'s, plus ``seed`` and the
    proxy's ``proxy_accuracy`` and ``proxy_pearson``), seed-major."""
    from rlprep.demos.reward_hacking import WEAK_RM, hacking_sweep, plot_hacking, rm_probes
    from rlprep.trainers.reward_model import RewardModelConfig, load_reward_model

    seeds = check_seeds(seeds, "kl_coef")
    p, policy, tokenizer, _, config = _setup(profile)
    weak = dict(WEAK_RM, steps=20) if p.name == "smoke" else WEAK_RM
    proxy_rm = load_reward_model(p, policy=policy, tokenizer=tokenizer, config=RewardModelConfig.for_profile(p, **weak))
    print(f"proxy RM: held-out accuracy {proxy_rm.meta['accuracy']:.1%}, Pearson r with gold "
          f"{proxy_rm.meta['pearson_gold']:.2f}")
    for name, probe in rm_probes(proxy_rm, tokenizer).items():
        print(f"{name}:")
        for text, r, g in zip(probe["text"], probe["rm"], probe["gold"]):
            print(f"    RM {r:+.2f}  gold {g:+.2f}  {text!r}")
    kl_coefs = (0.0, 0.01, 0.05, 0.2) if p.name == "gpu" else (0.0, 0.05)
    steps = KL_STEPS.get(p.name, 2 * config.steps)
    lr = {"smoke": config.lr, "cpu": 1e-4}.get(p.name, config.lr)
    print(profile_note(f"PPO against the weak proxy RM, {steps} steps for each kl_coef in {kl_coefs}"
                       + (f" and seed in {seeds}" if len(seeds) > 1 else "") + " (each run's progress line is named "
                       "'ppo kl=<kl_coef>')", p))
    rows_meta = {"proxy_accuracy": proxy_rm.meta["accuracy"], "proxy_pearson": proxy_rm.meta["pearson_gold"]}
    rows = []
    for seed in seeds:
        done = hacking_sweep(kl_coefs, replace(config, steps=steps, lr=lr, eval_every=0, seed=seed), policy=policy,
                             tokenizer=tokenizer, reward_model=proxy_rm, live=progress, **functions)
        rows += [dict(row, seed=seed, **rows_meta) for row in done]
        if len(done) < len(kl_coefs) or done[-1]["history"].interrupted:
            break
    over = f", seed {seeds[0]} of {len(seeds)}" if len(seeds) > 1 else ""
    _show(plot_hacking([r for r in rows if r["seed"] == seeds[0]],
                       title=f"kl_coef sweep against the weak proxy RM: {steps} steps each ({p.name} profile{over})"),
          show)
    for row in rows:
        print(f"kl_coef = {row['kl_coef']:<5g}" + (f"seed {row['seed']}  " if len(seeds) > 1 else "")
              + f"RM {row['rm_start']:+.3f} -> {row['rm_end']:+.3f}   gold {row['gold_start']:+.3f} -> "
              f"{row['gold_end']:+.3f} ± {row['gold_end_se']:.3f}   KL {row['kl_end']:.3f} nats   samples: "
              f"{row['samples'][:3]}")
    return rows


def lab_demos(profile=None, progress: bool | None = None, record: bool = False, show: bool = True, *,
              seeds=(0,), **functions) -> dict:
    """All three demos in a row, the two sweeps for each of ``seeds`` (the main run: one seed); ``record=True``
    writes their figures to ``records/lab03_ppo.json`` (:func:`summary`)."""
    p = profile if isinstance(profile, Profile) else get_profile(profile)
    seeds = check_seeds(seeds, "ε and kl_coef")
    history = main_run(p, show=show, progress=progress, **functions)
    runs = clip_sweep(p, show=show, progress=progress, seeds=seeds, **functions)
    rows = kl_sweep(p, show=show, progress=progress, seeds=seeds, **functions)
    if record:
        save_record(RECORD, summary(history, runs, rows), "rlprep.demos.ppo_rlhf", p)
    return {"history": history, "clip_runs": runs, "kl_rows": rows}


def summary(history, runs: dict, rows: list[dict]) -> dict:
    """The figures lab03's text quotes, from ``{ε: History}`` or ``{ε: {seed: History}}`` and :func:`kl_sweep`'s rows.

    The main run (``main_*``, ``main_seed``): one seed. ``seeds``, ``n_seeds`` (the fewest seeds any ε or kl_coef
    finished) and ``interval`` ("seeds" or "evaluation samples"). Per clip range (``eps_0p1``, ...): ``_clipfrac``,
    ``_kl``, ``_gold``; per kl_coef against the weak proxy (``kl_0``, ``kl_0p05``): ``_rm_start``, ``_rm_end``,
    ``_gold_start``, ``_gold_end``, ``_kl_end`` and the training-batch means ``_batch_gold_peak``,
    ``_batch_gold_last10``, ``_parse_min``, ``_parse_last10`` (gold reward at its highest and over the last 10 steps,
    the share of samples that parse). Each is the mean over seeds with ``_seeds`` (one value per seed) and, with
    several seeds, ``_ci95`` (95% Student-t half-width); with one seed the gold end's ``_ci95`` is 1.96 standard
    errors over held-out prompts. Per pair in :data:`EPS_GAPS` and :data:`KL_GAPS`: the paired difference's mean,
    ``_ci95``, ``_seeds`` and ``_reading`` (:func:`rlprep.demos.seed_stats.reading`).
    """
    m = history.meta
    values = {f"main_{k}": m[k] for k in ("gold_start", "gold_start_se", "gold_end", "gold_end_se", "gold_gain_se",
                                            "rm_start", "rm_end", "kl_end")}
    values.update(main_steps=m["config"]["steps"], main_kl_coef=m["config"]["kl_coef"],
                  main_seed=m["config"].get("seed", 0))
    clip = {eps: {seed: _clip_figures(h) for seed, h in by_seed.items()} for eps, by_seed in runs_by_seed(runs).items()}
    hack: dict = {}
    for row in rows:
        hack.setdefault(row["kl_coef"], {})[row["seed"]] = _kl_figures(row)
    settings = [*clip.values(), *hack.values()]
    seeds = list(next(iter(settings))) if settings else []
    values.update(seeds=seeds, n_seeds=min((len(r) for r in settings), default=0))
    values["interval"] = "seeds" if values["n_seeds"] > 1 else "evaluation samples"
    for prefix, figures in (("eps", clip), ("kl", hack)):
        for setting, by_seed in figures.items():
            per_quantity = _transpose(by_seed)
            for q, per_seed in per_quantity.items():
                if not q.endswith("_se"):
                    _spread(values, f"{_tag(prefix, setting)}_{q}", per_seed, per_quantity.get(f"{q}_se"))
    for prefix, figures, gaps, name in (("eps", clip, EPS_GAPS, "ε"), ("kl", hack, KL_GAPS, "kl_coef")):
        for (a, b), q in gaps:
            if a in figures and b in figures:
                _gap(values, f"{prefix}gap_{_tag('', a)[1:]}_vs_{_tag('', b)[1:]}_{q}", figures[a], figures[b], q,
                     (a, b, name))
    if rows:
        values.update(kl_steps=rows[0]["history"].meta["config"]["steps"], proxy_accuracy=rows[0]["proxy_accuracy"],
                      proxy_pearson=rows[0]["proxy_pearson"])
    return values


def _tag(prefix: str, setting: float) -> str:
    return f"{prefix}_{setting:g}".replace(".", "p")


def _clip_figures(h) -> dict:
    return {"clipfrac": clip_fraction(h), "kl": h.meta["kl_end"], "gold": h.meta["gold_end"],
            "gold_se": h.meta["gold_end_se"]}


def _kl_figures(row: dict) -> dict:
    figures = {k: row[k] for k in ("rm_start", "rm_end", "gold_start", "gold_end", "gold_end_se", "kl_end")}
    _, gold = row["history"].series("reward/gold")
    _, parse = row["history"].series("text/parse_rate")
    if gold and parse:
        figures.update(batch_gold_peak=max(gold), batch_gold_last10=_mean(gold[-10:]), parse_min=min(parse),
                       parse_last10=_mean(parse[-10:]))
    return figures


def _transpose(by_seed: dict) -> dict:
    """``{seed: {quantity: value}}`` -> ``{quantity: {seed: value}}`` over the quantities every seed has."""
    shared = set.intersection(*(set(f) for f in by_seed.values()))
    return {q: {seed: f[q] for seed, f in by_seed.items()} for q in next(iter(by_seed.values())) if q in shared}


def _spread(values: dict, key: str, per_seed: dict, se: dict | None = None):
    """``key`` (mean over seeds), ``key_seeds`` and, where an interval exists, ``key_ci95``: Student t over seeds,
    or with one seed 1.96 of its standard error ``se`` (``{seed: se}``) when the quantity has one."""
    points = list(per_seed.values())
    values[key], values[f"{key}_seeds"] = statistics.fmean(points), points
    if len(points) > 1 or se:
        values[f"{key}_ci95"] = interval(points, next(iter(se.values())) if se else math.nan)[1]


def _gap(values: dict, key: str, by_a: dict, by_b: dict, q: str, settings: tuple):
    """The paired difference q(a) − q(b) seed by seed: mean, ``_ci95``, ``_seeds``, ``_reading``. With one seed
    only a gold difference has an interval (1.96 standard errors of the two held-out means)."""
    paired = [s for s in by_a if s in by_b and q in by_a[s] and q in by_b[s]]
    diffs = [by_a[s][q] - by_b[s][q] for s in paired]
    se = f"{q}_se"  # held in the figures for the gold reward only
    if len(diffs) > 1:
        mean, half = mean_ci95(diffs)
    elif diffs and se in by_a[paired[0]]:
        mean, half = diffs[0], 1.96 * math.hypot(by_a[paired[0]][se], by_b[paired[0]][se])
    else:
        return
    a, b, name = settings
    values.update({key: mean, f"{key}_ci95": half, f"{key}_seeds": diffs,
                   f"{key}_reading": reading(mean, half, a, b, len(diffs), setting=name, quantity=QUANTITY_WORDS[q])})


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def main(argv=None) -> int:
    """``python -m rlprep.demos.ppo_rlhf --record``: lab03's three demos with the reference functions, the two
    sweeps for each of :data:`RECORD_SEEDS`, recorded."""

    def demo(progress, record, show):
        return lab_demos(progress=progress, record=record, show=show, seeds=RECORD_SEEDS)

    return record_cli("rlprep.demos.ppo_rlhf", RECORD, demo, argv)


if __name__ == "__main__":
    raise SystemExit(main())
