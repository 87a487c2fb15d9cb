"""Lab 7's demos: a tiny CLIP-style dual encoder trained with the learner's InfoNCE, and what τ does (W30).

Each lab cell is one call with the learner's ``infonce_loss(image_emb [B, D], text_emb [B, D], temperature)``:

- :func:`show_data` renders the synthetic shapes once (96 captions) and shows a few;
- :func:`temperature_sweep` trains one model per τ and plots held-out recall@1 and the loss curves;
- :func:`learnable_temperature` learns log(1/τ) as CLIP does (capped at 1/τ ≤ 100; Radford et al. 2021,
  arXiv 2103.00020, Sec. 2.5);
- :func:`plot_gradients` evaluates the loss gradient of fixed embeddings across τ
  (``multimodal.dual_encoder.gradient_profile``).

``python -m rlprep.demos.infonce --record`` runs them in the cpu profile with the reference loss and writes
``records/lab07_infonce.json``, the figures the lab's text quotes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import numpy as np
import torch

from rlprep.multimodal import dual_encoder as de
from rlprep.profiles import Profile, get_profile

RECORD = "lab07_infonce"
COMMAND = "RLPREP_PROFILE=cpu OMP_NUM_THREADS=1 python -m rlprep.demos.infonce --record"
TAUS = (0.01, 0.03, 0.07, 0.2, 0.5)
"""The sweep's temperatures."""
GRADIENT_TAUS = tuple(float(t) for t in np.geomspace(0.005, 2.0, 14))
"""Temperatures at which :func:`plot_gradients` evaluates the loss on fixed embeddings."""

SCOPE = {
    "smoke": "smoke profile: {steps} steps per run on {n} images, seconds each. Too small to reproduce the text's "
             "figures (they come from the cpu profile), though recall@1 already rises far above chance.",
    "cpu": "cpu profile: {steps} steps per run on {n} images, about a minute per run on 2 cores: the budget the "
           "text's figures were measured with.",
    "gpu": "gpu profile: {steps} steps per run on {n} images: longer runs than the text's cpu figures.",
}


def _profile(profile) -> Profile:
    return profile if isinstance(profile, Profile) else get_profile(profile)


def with_progress(loss_fn: Callable, steps: int, label: str) -> tuple[Callable, object]:
    """``loss_fn`` wrapped to advance a progress bar named ``label`` on each call (one call per training step)."""
    from tqdm.auto import tqdm

    bar = tqdm(total=steps, desc=label, leave=True, disable=os.environ.get("RLPREP_NO_BAR") == "1")

    def counted(image_emb, text_emb, temperature=0.07):
        loss = loss_fn(image_emb, text_emb, temperature)
        bar.update(1)
        bar.set_postfix(loss=f"{float(loss.detach()):.3f}", refresh=False)
        return loss

    return counted, bar


def train(loss_fn: Callable, data, label: str, *, profile=None, **overrides) -> tuple:
    """One dual-encoder run with ``loss_fn`` and a labelled progress bar; returns ``(model, history)``."""
    config = de.DualEncoderConfig.for_profile(_profile(profile), **overrides)
    counted, bar = with_progress(loss_fn, config.steps, label)
    try:
        return de.train_dual_encoder(config, loss_fn=counted, data=data)
    finally:
        bar.close()


def show_data(*, profile=None, n_show: int = 6, show: bool = True) -> tuple:
    """Render ``(train, test)`` for the profile's budget, show ``n_show`` training pairs; returns the data."""
    import matplotlib.pyplot as plt

    p = _profile(profile)
    config = de.DualEncoderConfig.for_profile(p)
    data = de.make_data(config)
    train_set = data[0]
    fig, axes = plt.subplots(1, n_show, figsize=(2.5 * n_show, 3))
    for ax, image, caption in zip(axes, train_set.images, train_set.captions):
        ax.imshow(image.transpose(1, 2, 0))  # (3, H, W) -> (H, W, 3)
        ax.set_title(caption.replace(" at the ", "\nat the "), fontsize=8)
        ax.axis("off")
    fig.suptitle(f"Training pairs ({config.image_size} × {config.image_size} px images and their captions)")
    if show:
        plt.show()
    print(f"{len(train_set)} training pairs, {len(data[1])} test images, batch {config.batch_size}, "
          f"{config.steps} steps per run")
    print(SCOPE[p.name].format(steps=config.steps, n=len(train_set)))
    return data


def temperature_sweep(loss_fn: Callable, data, *, taus=TAUS, profile=None, show: bool = True, **overrides) -> dict:
    """One run per τ (same data, initialization and batches); returns ``{tau: (model, history)}`` and plots
    recall@1 (held out) against τ and the loss curves. ``overrides`` go to ``DualEncoderConfig.for_profile``."""
    import matplotlib.pyplot as plt

    p = _profile(profile)
    sweep = {}
    for tau in taus:
        model, hist = train(loss_fn, data, f"lab07 dual encoder, τ = {tau} ({p.name} profile)", profile=p,
                            temperature=tau, **overrides)
        sweep[tau] = (model, hist)
        print(f"tau={tau:<5} recall@1 {hist['recall@1'][-1]:.3f}  final loss {hist['loss'][-1]:.3f} nats  "
              f"({hist['wall_s'][0]:.1f} s)")
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    ax.plot(list(taus), [sweep[t][1]["recall@1"][-1] for t in taus], "o-")
    ax.axhline(1 / 96, color="gray", lw=1, ls=":", label="chance (1/96)")
    ax.set_xscale("log")
    ax.set_xlabel("temperature τ (dimensionless)")
    ax.set_ylabel("recall@1 (image → caption, held out; fraction)")
    ax.set_title(f"Temperature sweep ({p.name} profile)")
    ax.legend()
    for t in taus:
        ax2.plot(sweep[t][1]["loss"], label=f"τ={t}")
    ax2.set_xlabel("step (one batch)")
    ax2.set_ylabel("InfoNCE loss (nats)")
    ax2.set_title("Training loss (its floor depends on τ)")
    ax2.legend()
    if show:
        plt.show()
    return sweep


def learnable_temperature(loss_fn: Callable, data, *, start: float = 0.07, profile=None, show: bool = True,
                          **overrides) -> tuple:
    """Learn log(1/τ) from ``start`` (CLIP); returns ``(model, history)`` and plots τ per step."""
    import matplotlib.pyplot as plt

    p = _profile(profile)
    model, hist = train(loss_fn, data, f"lab07 dual encoder, learnable τ from {start} ({p.name} profile)",
                        profile=p, learnable_temperature=True, temperature=start, **overrides)
    print(f"learned tau: {start} -> {hist['temperature'][-1]:.4f} (floor 1/100 = 0.01); "
          f"recall@1 {hist['recall@1'][-1]:.3f}")
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(hist["temperature"])
    ax.axhline(0.01, color="gray", ls=":", label="cap: 1/τ ≤ 100")
    ax.set_yscale("log")
    ax.set_xlabel("step (one batch)")
    ax.set_ylabel("τ = 1 / exp(logit_scale) (dimensionless)")
    ax.set_title(f"Learned temperature ({p.name} profile)")
    ax.legend()
    if show:
        plt.show()
    return model, hist


def plot_gradients(loss_fn: Callable, model, data, *, n_pairs: int = 64, taus=GRADIENT_TAUS, show: bool = True
                   ) -> dict:
    """The loss gradient on ``n_pairs`` held-out embeddings of ``model`` across ``taus``; returns
    ``gradient_profile``'s dict (``grad_norm``, ``hardest_share``, ``effective_negatives``, ``p_positive``)."""
    import matplotlib.pyplot as plt

    test_set = data[1]
    with torch.no_grad():
        image_emb, text_emb = model(torch.from_numpy(test_set.images[:n_pairs]),
                                    torch.from_numpy(test_set.token_ids[:n_pairs]))  # (B, D) each
    prof = de.gradient_profile(image_emb, text_emb, taus, loss_fn=loss_fn)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    axes[0].plot(taus, prof["grad_norm"], "o-")
    axes[0].set_ylabel("‖∂L/∂image_emb‖ (nats per embedding unit)")
    axes[0].set_yscale("log")
    axes[0].set_title("Gradient norm")
    axes[1].plot(taus, prof["hardest_share"], "o-", label="hardest negative's share of the push")
    axes[1].plot(taus, np.array(prof["effective_negatives"]) / (n_pairs - 1), "s-",
                 label=f"effective negatives / {n_pairs - 1}")
    axes[1].set_ylabel("fraction")
    axes[1].set_title("Who gets pushed")
    axes[1].legend()
    axes[2].plot(taus, prof["p_positive"], "o-")
    axes[2].set_ylabel("mean softmax probability of the match")
    axes[2].set_title("Probability of the match")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("temperature τ (dimensionless)")
    fig.suptitle(f"Gradients of InfoNCE on fixed embeddings ({n_pairs} held-out pairs)")
    fig.tight_layout()
    if show:
        plt.show()
    return prof


def experiment(profile: str | Profile | None = "cpu") -> dict:
    """The lab's demos with the reference loss; returns the values :func:`main` records."""
    import matplotlib

    matplotlib.use("Agg")
    from rlprep.algos.infonce import infonce_loss

    p = _profile(profile)
    data = show_data(profile=p, show=False)
    sweep = temperature_sweep(infonce_loss, data, profile=p, show=False)
    _, learned = learnable_temperature(infonce_loss, data, profile=p, show=False)
    prof = plot_gradients(infonce_loss, sweep[0.07][0], data, show=False)
    config = de.DualEncoderConfig.for_profile(p)
    values = {"steps": config.steps, "n_train": config.n_train, "batch_size": config.batch_size,
              "learned_tau": learned["temperature"][-1], "learned_recall": learned["recall@1"][-1],
              "gradient_tau_min": prof["temperature"][0], "hardest_share_tau_min": prof["hardest_share"][0],
              "effective_negatives_tau_min": prof["effective_negatives"][0],
              "run_s": float(np.mean([h["wall_s"][0] for _, h in sweep.values()]))}
    for tau, (_, hist) in sweep.items():
        key = f"{tau:g}".replace(".", "")
        values[f"recall_tau{key}"] = hist["recall@1"][-1]
        values[f"loss_tau{key}"] = hist["loss"][-1]
    return values


def main(argv: list[str] | None = None) -> int:
    from rlprep.demos.recorded import run_and_record

    return run_and_record(experiment, RECORD, COMMAND, argv, "Lab 7's demos with the reference InfoNCE loss.")


if __name__ == "__main__":
    sys.exit(main())
