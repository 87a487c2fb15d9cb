"""lab03's GPT-2 demos: PPO-RLHF on the reviews policy with the learner's five functions.

``main_run`` trains once against the lab 2 reward model and plots RM reward, gold reward, KL, clip fraction,
entropy and value loss; ``clip_sweep`` reruns it shorter for ε ∈ {0.1, 0.2, 0.3} (W06; PPO, Schulman et al. 2017,
arXiv 1707.06347, Eq. 7); ``kl_sweep`` trains against a deliberately weak proxy RM for several kl_coef and shows
reward hacking (Gao et al. 2022, arXiv 2210.10760, Fig. 1). The functions are passed by keyword
(``masked_mean``, ``kl_penalized_rewards``, ``compute_gae_tokens``, ``ppo_clip_loss``, ``value_loss``) and default
to the references. ``python -m rlprep.demos.ppo_rlhf --record`` runs all three with the references and writes
``records/lab03_ppo.json``, the figures lab03's text quotes.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from rlprep.demos.lab_runs import profile_note, record_cli, save_record
from rlprep.profiles import Profile, get_profile
from rlprep.trainers.ppo import PPOConfig, train_ppo

RECORD = "lab03_ppo"
CLIP_EPS = (0.1, 0.2, 0.3)
KL_STEPS = {"smoke": 2, "cpu": 40}
"""PPO steps per kl_coef against the weak proxy RM (gpu: twice the profile's main run). In the cpu profile the hack
shows by step 40 (docs/benchmarks.md: held-out gold at kl_coef 0 is past its peak by then), and 40 keeps the lab's
three demos plus the record within about 20 minutes on a shared 2-core machine."""


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


def clip_sweep(profile=None, clip_eps=CLIP_EPS, show: bool = True, progress: bool | None = None, **functions):
    """A short run per clip range ε, with a 3x learning rate and 4 passes per batch so the ratio reaches 1 ± ε."""
    import matplotlib.pyplot as plt

    from rlprep.metrics import unit

    p, policy, tokenizer, reward_model, config = _setup(profile)
    steps = {"smoke": 2, "cpu": max(1, config.steps // 6)}.get(p.name, config.steps)
    print(profile_note(f"PPO clip-range sweep, {steps} steps for each ε in {tuple(clip_eps)}", p))
    runs = {}
    for eps in clip_eps:
        print(f"run ε = {eps}:")
        runs[eps] = train_ppo(replace(config, clip_eps=eps, steps=steps, eval_every=0, lr=3 * config.lr, ppo_epochs=4),
                              policy=copy.deepcopy(policy), tokenizer=tokenizer, reward_model=reward_model,
                              live=progress, **functions)
        if runs[eps].interrupted:
            break
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for key, ax in zip(("stats/clipfrac_two_sided", "stats/approx_kl", "reward/rm"), axes):
        for eps, h in runs.items():
            ax.plot(*h.series(key), marker=".", label=f"ε = {eps}")
        ax.set(xlabel="PPO step", ylabel=f"{key.split('/', 1)[1]} ({unit(key)})", title=key)
        ax.legend()
    fig.suptitle(f"Clip range ε: {steps} steps each ({p.name} profile)")
    fig.tight_layout()
    _show(fig, show)
    for eps, h in runs.items():
        print(f"ε = {eps}: gold {h.meta['gold_end']:+.3f} ± {h.meta['gold_end_se']:.3f}, KL {h.meta['kl_end']:.3f} "
              f"nats, mean clip fraction {clip_fraction(h):.3f}")
    return runs


def clip_fraction(history) -> float:
    """Mean of ``stats/clipfrac_two_sided`` over the run's steps."""
    _, values = history.series("stats/clipfrac_two_sided")
    return sum(values) / max(1, len(values))


def kl_sweep(profile=None, show: bool = True, progress: bool | None = None, **functions) -> list[dict]:
    """Probe a weak proxy RM, then train against it for each kl_coef and plot RM reward, gold and the parse rate."""
    from rlprep.demos.reward_hacking import WEAK_RM, hacking_sweep, plot_hacking, rm_probes
    from rlprep.trainers.reward_model import RewardModelConfig, load_reward_model

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
    print(profile_note(f"PPO against the weak proxy RM, {steps} steps for each kl_coef in {kl_coefs} (each run's "
                       "progress line is named 'ppo kl=<kl_coef>')", p))
    rows = hacking_sweep(kl_coefs, replace(config, steps=steps, lr=lr, eval_every=0), policy=policy,
                         tokenizer=tokenizer, reward_model=proxy_rm, live=progress, **functions)
    _show(plot_hacking(rows, title=f"kl_coef sweep against the weak proxy RM: {steps} steps each ({p.name} profile)"),
          show)
    for row in rows:
        print(f"kl_coef = {row['kl_coef']:<5g} RM {row['rm_start']:+.3f} -> {row['rm_end']:+.3f}   gold "
              f"{row['gold_start']:+.3f} -> {row['gold_end']:+.3f} ± {row['gold_end_se']:.3f}   "
              f"KL {row['kl_end']:.3f} nats   samples: {row['samples'][:3]}")
    rows_meta = {"proxy_accuracy": proxy_rm.meta["accuracy"], "proxy_pearson": proxy_rm.meta["pearson_gold"]}
    return [dict(row, **rows_meta) for row in rows]


def lab_demos(profile=None, progress: bool | None = None, record: bool = False, show: bool = True,
              **functions) -> dict:
    """All three demos in a row; ``record=True`` writes their figures to ``records/lab03_ppo.json``."""
    p = profile if isinstance(profile, Profile) else get_profile(profile)
    history = main_run(p, show=show, progress=progress, **functions)
    runs = clip_sweep(p, show=show, progress=progress, **functions)
    rows = kl_sweep(p, show=show, progress=progress, **functions)
    if record:
        save_record(RECORD, summary(history, runs, rows), "rlprep.demos.ppo_rlhf", p)
    return {"history": history, "clip_runs": runs, "kl_rows": rows}


def summary(history, runs: dict, rows: list[dict]) -> dict:
    """The figures lab03's text quotes: the main run (``main_*``), each clip range (``eps_0p1_*``, ...) and each
    kl_coef against the weak proxy (``kl_0_*``, ``kl_0p05_*``; ``batch_*`` and ``parse_*`` are per-step training-batch
    means: gold reward at its highest and over the last 10 steps, the share of samples that parse)."""
    m = history.meta
    values = {f"main_{k}": m[k] for k in ("gold_start", "gold_start_se", "gold_end", "gold_end_se", "gold_gain_se",
                                            "rm_start", "rm_end", "kl_end")}
    values.update(main_steps=m["config"]["steps"], main_kl_coef=m["config"]["kl_coef"])
    for eps, h in runs.items():
        tag = f"eps_{eps:g}".replace(".", "p")
        values.update({f"{tag}_clipfrac": clip_fraction(h), f"{tag}_kl": h.meta["kl_end"],
                       f"{tag}_gold": h.meta["gold_end"], f"{tag}_gold_se": h.meta["gold_end_se"]})
    for row in rows:
        tag = f"kl_{row['kl_coef']:g}".replace(".", "p")
        values.update({f"{tag}_{k}": row[k] for k in ("rm_start", "rm_end", "gold_start", "gold_end", "gold_end_se",
                                                      "kl_end")})
        _, gold = row["history"].series("reward/gold")
        _, parse = row["history"].series("text/parse_rate")
        if gold and parse:
            values.update({f"{tag}_batch_gold_peak": max(gold), f"{tag}_batch_gold_last10": _mean(gold[-10:]),
                           f"{tag}_parse_min": min(parse), f"{tag}_parse_last10": _mean(parse[-10:])})
    if rows:
        values.update(kl_steps=rows[0]["history"].meta["config"]["steps"], proxy_accuracy=rows[0]["proxy_accuracy"],
                      proxy_pearson=rows[0]["proxy_pearson"])
    return values


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def main(argv=None) -> int:
    """``python -m rlprep.demos.ppo_rlhf --record``: lab03's three demos with the reference functions, recorded."""
    return record_cli("rlprep.demos.ppo_rlhf", RECORD, lab_demos, argv)


if __name__ == "__main__":
    raise SystemExit(main())
