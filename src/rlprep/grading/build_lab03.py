"""Build ``solutions/lab03_ppo_rlhf/lab03_ppo_rlhf.ipynb`` (the nbgrader source) deterministically.

    PYTHONPATH=src python -m rlprep.grading.build_lab03      # then: rlprep release

Hidden tests hold expected values (and gradients) computed here, once, from the references in
``rlprep.algos.ppo`` and pasted as literals: the gradebook stores hidden tests as text.
"""

from __future__ import annotations

import torch

from rlprep.algos import ppo
from rlprep.grading import authoring as A

LAB = "lab03_ppo_rlhf"
F64 = "dtype=torch.float64"


def tlit(x) -> str:
    """A tensor (0-, 1- or 2-D) as a Python literal with full precision."""
    t = torch.as_tensor(x).detach().double()
    if t.ndim == 0:
        return repr(float(t))

    def rows(u):
        if u.ndim == 1:
            return "[" + ", ".join(repr(float(v)) for v in u) + "]"
        return "[" + ", ".join(rows(v) for v in u) + "]"

    return f"torch.tensor({rows(t)}, {F64})"


def _mask(lengths, T):
    return (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).double()  # (B, T) right-padded


def hidden_fixtures() -> dict:
    """Seeded ragged batches (right padding holds junk) and the references' outputs."""
    g = torch.Generator().manual_seed(20261130)

    def randn(*shape, scale=1.0):
        return torch.round(torch.randn(*shape, generator=g, dtype=torch.float64) * scale, decimals=3)

    B, T = 4, 7
    mask = _mask([7, 3, 5, 1], T)  # (B, T): one full row, one single-token row
    x = randn(B, T) + 50.0 * (1 - mask)  # padding far from the valid values
    logp, ref_logp = randn(B, T, scale=0.5) - 1.0, randn(B, T, scale=0.5) - 1.0
    score = randn(B, scale=2.0)
    rewards, values = randn(B, T), randn(B, T)
    rewards2, values2 = randn(B, T), randn(B, T)
    mask2 = _mask([2, 7, 4, 6], T)
    logp_old = randn(B, T, scale=0.5) - 1.0
    logp_new = logp_old + randn(B, T, scale=0.3)  # ratios both inside and outside [1 - eps, 1 + eps]
    adv = randn(B, T)
    v_old = randn(B, T)
    v_new = v_old + randn(B, T, scale=0.4)
    returns = randn(B, T)

    def loss_and_grad(fn, wrt, **kw):
        kw = {k: (v.clone().requires_grad_(True) if k in wrt else v) for k, v in kw.items()}
        out = fn(**kw)
        grads = torch.autograd.grad(out, [kw[k] for k in wrt])
        return out.detach(), dict(zip(wrt, grads))

    pl, pg = loss_and_grad(ppo.ppo_clip_loss, ("logp_new",), logp_new=logp_new, logp_old=logp_old, advantages=adv,
                           mask=mask, clip_eps=0.2)
    pl1 = ppo.ppo_clip_loss(logp_new, logp_old, adv, mask2, clip_eps=0.1)
    vl, vg = loss_and_grad(ppo.value_loss, ("values",), values=v_new, old_values=v_old, returns=returns, mask=mask,
                           clip_range=0.2)
    vl1 = ppo.value_loss(v_new, v_old, returns, mask2, clip_range=0.1)
    a1, r1 = ppo.compute_gae_tokens(rewards, values, mask, gamma=0.9, lam=0.8)
    a2, r2 = ppo.compute_gae_tokens(rewards2, values2, mask2)
    return {
        "mask": tlit(mask), "mask2": tlit(mask2), "x": tlit(x), "mm": tlit(ppo.masked_mean(x, mask)),
        "mm2": tlit(ppo.masked_mean(x, mask2)),
        "score": tlit(score), "logp": tlit(logp), "ref_logp": tlit(ref_logp),
        "kl": tlit(ppo.kl_penalized_rewards(score, logp, ref_logp, mask, 0.1)),
        "kl0": tlit(ppo.kl_penalized_rewards(score, logp, ref_logp, mask2, 0.0)),
        "rewards": tlit(rewards), "values": tlit(values), "adv1": tlit(a1), "ret1": tlit(r1 * mask),
        "rewards2": tlit(rewards2), "values2": tlit(values2), "adv2": tlit(a2), "ret2": tlit(r2 * mask2),
        "logp_old": tlit(logp_old), "logp_new": tlit(logp_new), "adv": tlit(adv), "pl": tlit(pl),
        "pg": tlit(pg["logp_new"]), "pl1": tlit(pl1),
        "v_old": tlit(v_old), "v_new": tlit(v_new), "returns": tlit(returns), "vl": tlit(vl), "vg": tlit(vg["values"]),
        "vl1": tlit(vl1),
    }


def test_cells(fx):
    f = fx
    return {
        "masked_mean": A.test("test_masked_mean", 2, """
            # Two rows, the second holds one valid token: the token-level mean is (1 + 2 + 3 + 10) / 4 = 4,
            # not the mean of the row means (2 + 10) / 2 = 6, and never a mean over the padding.
            x = torch.tensor([[1.0, 2.0, 3.0], [10.0, 7.0, 7.0]], dtype=torch.float64)
            mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]], dtype=torch.float64)
            out = masked_mean(x, mask)
            assert_shape(out, (), 'masked_mean must return a scalar tensor (shape ())')
            assert_close(out, 4.0, 'masked_mean on the 2-row example worked by hand (token-level mean)')
            """, hidden_code=(
                f"assert_close(masked_mean({f['x']}, {f['mask']}), {f['mm']}, "
                "'masked_mean wrong on a ragged batch whose padding holds large values')\n"
                f"assert_close(masked_mean({f['x']}, {f['mask2']}), {f['mm2']}, "
                "'masked_mean wrong on a second ragged mask')")),
        "kl_penalized_rewards": A.test("test_kl_penalized_rewards", 3, """
            # logp - ref_logp = [[0.2, -0.4, 0.6], [1.0, 0.2, 9.0 (padding)]], kl_coef = 0.5, score = [1, -2]:
            # row 0: [-0.1, 0.2, -0.3 + 1] ; row 1 ends at t = 1: [-0.5, -0.1 - 2, 0 (padding)]
            logp = torch.tensor([[-1.0, -1.4, -0.4], [-0.5, -1.0, 8.0]], dtype=torch.float64)
            ref_logp = torch.tensor([[-1.2, -1.0, -1.0], [-1.5, -1.2, -1.0]], dtype=torch.float64)
            mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]], dtype=torch.float64)
            out = kl_penalized_rewards(torch.tensor([1.0, -2.0], dtype=torch.float64), logp, ref_logp, mask, 0.5)
            assert_shape(out, (2, 3), 'kl_penalized_rewards must return [B, T]')
            assert_close(out, [[-0.1, 0.2, 0.7], [-0.5, -2.1, 0.0]],
                         'per-token rewards on the example worked by hand (score at the last valid token, '
                         '0 on padding)')
            """, hidden_code=(
                f"assert_close(kl_penalized_rewards({f['score']}, {f['logp']}, {f['ref_logp']}, {f['mask']}, 0.1), "
                f"{f['kl']}, 'rewards wrong on a ragged batch (k1 penalty on valid tokens, score at the last valid "
                "token, 0 on padding)')\n"
                f"assert_close(kl_penalized_rewards({f['score']}, {f['logp']}, {f['ref_logp']}, {f['mask2']}, 0.0), "
                f"{f['kl0']}, 'with kl_coef=0 the rewards must be the score at the last valid token and 0 elsewhere')")),
        "compute_gae_tokens": A.test("test_compute_gae_tokens", 3, """
            # One row, two valid tokens then padding (junk reward 5 and value 9 there). gamma = lam = 1:
            # A_1 = r_1 - V_1 = 1 - 0.2 = 0.8 (nothing bootstrapped past the last valid token)
            # A_0 = r_0 + V_1 - V_0 + A_1 = 0 + 0.2 - 0.5 + 0.8 = 0.5 ; A_2 = 0 (padding)
            adv, ret = expect_tuple(compute_gae_tokens(torch.tensor([[0.0, 1.0, 5.0]], dtype=torch.float64),
                                                       torch.tensor([[0.5, 0.2, 9.0]], dtype=torch.float64),
                                                       torch.tensor([[1.0, 1.0, 0.0]], dtype=torch.float64),
                                                       gamma=1.0, lam=1.0),
                                    2, 'compute_gae_tokens must return (advantages, returns)')
            assert_shape(adv, (1, 3), 'advantages must be [B, T]')
            assert_close(adv, [[0.5, 0.8, 0.0]], 'advantages on the 1-row example worked by hand (0 on padding)')
            assert_close(ret[:, :2], [[1.0, 1.0]], 'returns must equal advantages + values on valid tokens')
            """, hidden_code=(
                f"adv, ret = expect_tuple(compute_gae_tokens({f['rewards']}, {f['values']}, {f['mask']}, gamma=0.9, "
                "lam=0.8), 2, 'compute_gae_tokens must return (advantages, returns)')\n"
                f"assert_close(adv, {f['adv1']}, 'advantages wrong on a ragged batch with gamma=0.9, lam=0.8 (episode "
                "ends at the last valid token; gamma and lam each in their place)')\n"
                f"assert_close(ret * {f['mask']}, {f['ret1']}, 'returns must equal advantages + values on valid "
                "tokens')\n"
                f"adv2, ret2 = expect_tuple(compute_gae_tokens({f['rewards2']}, {f['values2']}, {f['mask2']}), 2, "
                "'compute_gae_tokens must return (advantages, returns)')\n"
                f"assert_close(adv2, {f['adv2']}, 'advantages wrong with the defaults gamma=1.0, lam=0.95')\n"
                f"assert_close(ret2 * {f['mask2']}, {f['ret2']}, 'returns wrong with the defaults')")),
        "ppo_clip_loss": A.test("test_ppo_clip_loss", 3, """
            # ratio = 1 everywhere: the loss is -(masked mean of A) = -(1 - 2) / 2 = 0.5 (the 3rd token is padding),
            # and logp_old is a constant: no gradient may flow into it.
            A_ = torch.tensor([[1.0, -2.0, 3.0]], dtype=torch.float64)
            logp = torch.tensor([[-1.0, -2.0, -0.5]], dtype=torch.float64)
            mask = torch.tensor([[1.0, 1.0, 0.0]], dtype=torch.float64)
            value, grads = value_and_grad(ppo_clip_loss, wrt=('logp_new', 'logp_old'), logp_new=logp, logp_old=logp,
                                          advantages=A_, mask=mask, clip_eps=0.2)
            assert_shape(value, (), 'ppo_clip_loss must return a scalar tensor')
            assert_close(value, 0.5, 'with ratio 1 the loss must be minus the masked mean of the advantages')
            assert_close(grads['logp_old'], [[0.0, 0.0, 0.0]], 'logp_old must be a constant (stop-gradient)')
            assert_close(grads['logp_new'], [[-0.5, 1.0, 0.0]], 'gradient wrt logp_new at ratio 1 must be -A / n_valid')
            """, hidden_code=(
                f"value, grads = value_and_grad(ppo_clip_loss, wrt=('logp_new', 'logp_old'), logp_new={f['logp_new']}, "
                f"logp_old={f['logp_old']}, advantages={f['adv']}, mask={f['mask']}, clip_eps=0.2)\n"
                f"assert_close(value, {f['pl']}, 'loss wrong when ratios fall on both sides of the clip range "
                "(pessimistic min, masked mean over valid tokens)')\n"
                f"assert_close(grads['logp_new'], {f['pg']}, 'gradient wrt logp_new wrong: clipped tokens must get "
                "no gradient')\n"
                f"assert_close(grads['logp_old'], torch.zeros(4, 7, {F64}), 'logp_old must be a constant "
                "(stop-gradient)')\n"
                f"assert_close(ppo_clip_loss({f['logp_new']}, {f['logp_old']}, {f['adv']}, {f['mask2']}, clip_eps=0.1), "
                f"{f['pl1']}, 'loss wrong with clip_eps=0.1')")),
        "value_loss": A.test("test_value_loss", 2, """
            # V = 1, V_old = 0.5, R = 0, c = 0.2: (V - R)^2 = 1, (clip(V, 0.3, 0.7) - R)^2 = 0.49, max = 1 -> 0.5 * 1.
            # The second token is padding and must not count.
            value, grads = value_and_grad(value_loss, wrt=('values',),
                                          values=torch.tensor([[1.0, 4.0]], dtype=torch.float64),
                                          old_values=torch.tensor([[0.5, 0.0]], dtype=torch.float64),
                                          returns=torch.tensor([[0.0, 0.0]], dtype=torch.float64),
                                          mask=torch.tensor([[1.0, 0.0]], dtype=torch.float64), clip_range=0.2)
            assert_shape(value, (), 'value_loss must return a scalar tensor')
            assert_close(value, 0.5, 'value loss on the example worked by hand (0.5 * max of the two squared errors)')
            assert_close(grads['values'], [[1.0, 0.0]], 'gradient wrt values on the example worked by hand')
            """, hidden_code=(
                f"value, grads = value_and_grad(value_loss, wrt=('values',), values={f['v_new']}, "
                f"old_values={f['v_old']}, returns={f['returns']}, mask={f['mask']}, clip_range=0.2)\n"
                f"assert_close(value, {f['vl']}, 'value loss wrong on a ragged batch where some values move past the "
                "clip range around old_values')\n"
                f"assert_close(grads['values'], {f['vg']}, 'gradient wrt values wrong on a ragged batch')\n"
                f"assert_close(value_loss({f['v_new']}, {f['v_old']}, {f['returns']}, {f['mask2']}, clip_range=0.1), "
                f"{f['vl1']}, 'value loss wrong with clip_range=0.1')")),
    }


TASKS = {
    "masked_mean": "The mean of `x` over the positions where `mask` is 1, pooled over all rows (a token-level "
                   "mean). Every loss below averages with it.",
    "kl_penalized_rewards": "The per-token RLHF reward of InstructGPT Eq. 2: $-\\beta(\\log\\pi - \\log\\pi_{ref})$ "
                            "on each valid token (the k1 KL estimate), plus the RM score `score[b]` at the **last "
                            "valid token** of row b, 0 on padding.",
    "compute_gae_tokens": "GAE along each row of tokens (lab 1's recursion on a `[B, T]` batch): the episode ends "
                          "at the last valid token, so nothing is bootstrapped past it and the values in the padding "
                          "are never read; advantages are 0 on padding; `returns = advantages + values`.",
    "ppo_clip_loss": "The clipped surrogate of PPO Eq. 7, negated for gradient descent: masked mean of "
                     "$-\\min(\\rho A, \\mathrm{clip}(\\rho, 1-\\epsilon, 1+\\epsilon) A)$ with "
                     "$\\rho = \\exp(\\log\\pi_{new} - \\log\\pi_{old})$; `logp_old` is a constant.",
    "value_loss": "The clipped value loss of the PPO reference code: $0.5 \\cdot$ masked mean of "
                  "$\\max((V-R)^2, (\\mathrm{clip}(V, V_{old}-c, V_{old}+c) - R)^2)$.",
}


def cells():
    tests = test_cells(hidden_fixtures())
    graded = []
    for name in ("masked_mean", "kl_penalized_rewards", "compute_gae_tokens", "ppo_clip_loss", "value_loss"):
        graded += [A.md(f"task-{name.replace('_', '-')}", f"### `{name}`\n\n{TASKS[name]}"),
                   A.answer(name, f"rlprep.algos.ppo:{name}"), tests[name]]
    return [
        A.md("title", """
            # Lab 3 · PPO-RLHF: train the tiny GPT-2 against your reward model

            Interview questions **G09** (手写 PPO-Clip 损失函数 — write the PPO-Clip loss by hand), **G10** (写出 PPO
            多轮小批量更新……的训练循环 — the multi-epoch minibatch loop with value loss, entropy bonus and gradient
            clipping), **G05** (PPO 中的 KL 散度惩罚是加在奖励里还是作为单独的损失项？为什么？ — is the KL penalty added to
            the reward or a separate loss term, and why?), **W05** (clip vs KL) and **W06** (如果 PPO 的 clip 范围设 0.1
            和 0.3，分别会有什么影响？怎么调？ — what do clip ranges of 0.1 and 0.3 do, and how do you tune it?).

            You will write the five pieces of an RLHF PPO step. The course's trainer (`rlprep.trainers.ppo`) then
            runs **your** functions to train the reviews policy against the lab 2 reward model, with a KL
            penalty to the SFT reference, and you watch proxy reward, gold reward and KL move.
            """),
        A.md("theory", r"""
            ## One PPO-RLHF round

            All tensors are `[B, T]` over completion tokens; `mask` is 1 from the first completion token up to
            and including eos, 0 on right padding.

            1. **Reward per token** (InstructGPT, Ouyang et al. 2022, arXiv 2203.02155, Eq. 2):
               $r_t = -\beta\,(\log\pi(y_t) - \log\pi_{\mathrm{ref}}(y_t))$ on every valid token, plus the RM score
               $r_\phi(x, y)$ on the last one. The KL lives **in the reward** (G05): the critic and the advantages
               see it, so the policy pays for drifting where it drifts.
            2. **Advantages** with GAE along the tokens (Schulman et al. 2015, arXiv 1506.02438, Eq. 16), the
               episode ending at eos: $\delta_t = r_t + \gamma V_{t+1} - V_t$, $\hat A_t = \delta_t +
               \gamma\lambda \hat A_{t+1}$.
            3. **Policy loss**, the clipped surrogate (Schulman et al. 2017, arXiv 1707.06347, Eq. 7):
               $L^{\mathrm{CLIP}} = -\mathbb E_t[\min(\rho_t \hat A_t, \mathrm{clip}(\rho_t, 1-\epsilon, 1+\epsilon)
               \hat A_t)]$, $\rho_t = \pi_\theta(y_t)/\pi_{\mathrm{old}}(y_t)$.
            4. **Value loss**, clipped around the rollout's values as in the PPO reference code (Engstrom et al.
               2020, arXiv 2005.12729, Sec. 3).

            Every average is a **masked mean over valid tokens**: a plain `.mean()` lets padding dilute the loss.
            """),
        A.setup("setup", """
            import torch

            from rlprep.grading.asserts import assert_close, assert_shape, check, expect_tuple, value_and_grad
            """),
        A.md("task", """
            ## Your tasks

            Fill in the body of each function below (signatures and docstrings are the contract); each is followed
            by its test. Visible parts are worked by hand; hidden parts run when you grade (the last cell, or
            `rlprep grade labs/lab03_ppo_rlhf/lab03_ppo_rlhf.ipynb` from the repository root) and name the property that failed.
            """),
        *graded,
        A.md("train-intro", """
            ## Train the policy with your functions

            `train_ppo` samples completions, scores them with the reward model, and calls **your**
            `kl_penalized_rewards`, `compute_gae_tokens`, `ppo_clip_loss`, `value_loss` and `masked_mean`. The gold
            reward is logged but never trained on. The profile sets the budget (`RLPREP_PROFILE`: smoke =
            seconds, cpu = minutes on 2 cores, gpu = the full run). The plot updates live; the interrupt button
            (■) stops the run and keeps what was trained (a checkpoint and the plot are saved).
            """),
        A.demo("train", """
            import copy
            from dataclasses import replace

            import matplotlib.pyplot as plt

            from rlprep.profiles import get_profile
            from rlprep.tinyworld import load_policy
            from rlprep.trainers.ppo import PPOConfig, train_ppo
            from rlprep.trainers.reward_model import load_reward_model

            PROFILE = get_profile()
            sft_policy, tokenizer = load_policy("reviews", PROFILE)
            # the lab 2 reward model, trained once with the reference loss and cached
            reward_model = load_reward_model(PROFILE, policy=sft_policy, tokenizer=tokenizer)
            MY_FUNCTIONS = dict(masked_mean=masked_mean, kl_penalized_rewards=kl_penalized_rewards,
                                compute_gae_tokens=compute_gae_tokens, ppo_clip_loss=ppo_clip_loss, value_loss=value_loss)
            config = PPOConfig.for_profile(PROFILE)
            history = train_ppo(config, policy=copy.deepcopy(sft_policy), tokenizer=tokenizer, reward_model=reward_model,
                                **MY_FUNCTIONS)
            m = history.meta
            print(f"profile {PROFILE.name}, kl_coef {config.kl_coef}: held-out gold reward {m['gold_start']:+.3f} ± "
                  f"{m['gold_start_se']:.3f} -> {m['gold_end']:+.3f} ± {m['gold_end_se']:.3f} "
                  f"({m['gold_gain_se']:+.1f} standard errors), RM {m['rm_start']:+.3f} -> {m['rm_end']:+.3f}, "
                  f"KL to the SFT policy {m['kl_end']:.3f} nats per completion")
            """),
        A.demo("train-plot", """
            fig = history.plot(["reward/rm", "reward/gold", "stats/kl_k1_seq", "stats/clipfrac_two_sided", "stats/entropy", "loss/value"],
                               title=f"PPO-RLHF with your functions ({PROFILE.name} profile, kl_coef {config.kl_coef})")
            plt.show()
            """),
        A.md("clip-intro", """
            ## Clip range ε ∈ {0.1, 0.2, 0.3} (W06)

            The same run, shorter, from the same SFT start, with three clip ranges. A small ε clips more tokens
            (higher clip fraction) and moves the policy less per round; a large ε lets each round move further,
            faster and noisier. Schulman et al. 2017 found ε = 0.2 best on their benchmarks (arXiv 1707.06347,
            Table 1).

            Clipping only acts once a round's updates move the ratio past 1 ± ε. The main run's small steps never
            get there in the cpu profile (its clip fraction is 0.000, and ε = 0.1 and 0.2 gave identical runs), so
            the sweep takes a 3× larger learning rate and 4 passes over each batch. Measured in the cpu profile
            (this cell, 10 rounds each, seed 0, 2026-11-30, 1 thread): ε = 0.1 / 0.2 / 0.3 clipped 3.8% / 2.5% /
            1.4% of tokens, so a smaller ε binds more often, as expected. The distance from the SFT policy after 10
            rounds (3.1 / 9.2 / 3.2 nats) is not ordered by ε, and the gold reward (+0.43 / +0.58 / +0.68, ± 0.05-0.07)
            barely separates. An earlier run of this cell (same day, an earlier commit, thread count not recorded)
            gave ε = 0.2 6.4 nats and gold −0.20, with ε = 0.1 and 0.3 exactly as here: one short run can swing
            that much on small numerical differences, so read the clip fraction, not the ranking.
            """),
        A.demo("clip-sweep", """
            SWEEP_STEPS = {"smoke": 2, "cpu": max(1, config.steps // 6)}.get(PROFILE.name, config.steps)
            clip_runs = {}
            for eps in (0.1, 0.2, 0.3):
                # a 3x step and 4 passes per batch, so the ratio reaches 1 ± ε and the clip binds
                clip_runs[eps] = train_ppo(replace(config, clip_eps=eps, steps=SWEEP_STEPS, eval_every=0,
                                                   lr=3 * config.lr, ppo_epochs=4),
                                           policy=copy.deepcopy(sft_policy), tokenizer=tokenizer,
                                           reward_model=reward_model, live=False, **MY_FUNCTIONS)
                if clip_runs[eps].interrupted:
                    break
            fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
            for (key, label), ax in zip([("stats/clipfrac_two_sided", "clip fraction (fraction of tokens)"),
                                         ("stats/approx_kl", "approx KL(old ‖ new) (nats/token)"),
                                         ("reward/rm", "RM reward (logit units)")], axes):
                for eps, h in clip_runs.items():
                    ax.plot(*h.series(key), marker=".", label=f"ε = {eps}")
                ax.set_xlabel("PPO step")
                ax.set_ylabel(label)
                ax.set_title(key)
                ax.legend()
            fig.suptitle(f"Clip range ε: {SWEEP_STEPS} steps each ({PROFILE.name} profile)")
            fig.tight_layout()
            plt.show()
            for eps, h in clip_runs.items():
                print(f"ε = {eps}: gold {h.meta['gold_end']:+.3f} ± {h.meta['gold_end_se']:.3f}, "
                      f"KL {h.meta['kl_end']:.3f} nats, mean clip fraction "
                      f"{sum(h.series('stats/clipfrac_two_sided')[1]) / max(1, len(h.series('stats/clipfrac_two_sided')[1])):.3f}")
            """),
        A.md("kl-intro", """
            ## The KL coefficient and reward hacking (Gao et al. 2022)

            The reward model is a proxy. With a weak KL penalty the policy is free to drift to completions the RM
            over-rates: the RM reward keeps climbing while the gold reward stalls or falls (Gao et al. 2022,
            arXiv 2210.10760, Fig. 1). A stronger penalty keeps the policy near the SFT reference and the two
            curves together. Gao et al. also found that a proxy RM trained on less data is over-optimised sooner,
            so this sweep trains against a deliberately **weak proxy RM** (320 pairs, 60 steps: about 74%
            held-out accuracy) to make the hack show within a cpu budget.

            Before training, ask the proxy what it likes: `rm_probes` scores hand-written ladders of completions
            with the RM and with the gold scorer. The RM only ever saw grammatical reviews, so it has no reason to
            penalise a misspelled one: the "broken grammar" ladder is where its score stays high and gold drops
            to −1.5. The third panel of the sweep plot is the fraction of the policy's samples that still parse.
            """),
        A.demo("kl-sweep", """
            from rlprep.demos.reward_hacking import WEAK_RM, hacking_sweep, plot_hacking, rm_probes
            from rlprep.trainers.reward_model import RewardModelConfig

            weak = dict(WEAK_RM, steps=20) if PROFILE.name == "smoke" else WEAK_RM  # smoke: seconds
            proxy_rm = load_reward_model(PROFILE, policy=sft_policy, tokenizer=tokenizer,
                                         config=RewardModelConfig.for_profile(PROFILE, **weak))
            print(f"proxy RM: held-out accuracy {proxy_rm.meta['accuracy']:.1%}, Pearson r with gold "
                  f"{proxy_rm.meta['pearson_gold']:.2f}")
            for name, probe in rm_probes(proxy_rm, tokenizer).items():
                print(f"{name}:")
                for text, r, g in zip(probe["text"], probe["rm"], probe["gold"]):
                    print(f"    RM {r:+.2f}  gold {g:+.2f}  {text!r}")
            KL_COEFS = (0.0, 0.01, 0.05, 0.2) if PROFILE.name == "gpu" else (0.0, 0.05)
            KL_STEPS = {"smoke": 2, "cpu": 80}.get(PROFILE.name, 2 * config.steps)
            KL_LR = {"smoke": config.lr, "cpu": 1e-4}.get(PROFILE.name, config.lr)
            rows = hacking_sweep(KL_COEFS, replace(config, steps=KL_STEPS, lr=KL_LR, eval_every=0), policy=sft_policy,
                                 tokenizer=tokenizer, reward_model=proxy_rm, **MY_FUNCTIONS)
            fig = plot_hacking(rows, title=f"kl_coef sweep against the weak proxy RM: {KL_STEPS} steps each "
                                           f"({PROFILE.name} profile)")
            plt.show()
            for row in rows:
                print(f"kl_coef = {row['kl_coef']:<5g} RM {row['rm_start']:+.3f} -> {row['rm_end']:+.3f}   gold "
                      f"{row['gold_start']:+.3f} -> {row['gold_end']:+.3f} ± {row['gold_end_se']:.3f}   "
                      f"KL {row['kl_end']:.3f} nats   samples: {row['samples'][:3]}")
            """),
        A.md("summary", r"""
            **What to see.** With your functions the policy's gold reward rises over the SFT start while the KL to
            the reference grows. Compare RM and gold: they rise together while the RM is right, and split when the
            policy finds completions the RM over-rates. The clip fraction grows as ε shrinks. The KL sweep shows
            how the penalty trades proxy reward for staying close to the reference; read the printed numbers
            against their standard errors before you call a difference real.

            Measured with the reference functions in the cpu profile (60 steps, kl_coef 0.05, seed 0, 2026-11-30,
            against the cpu reward model of lab 2): held-out gold reward -0.21 ± 0.06 -> +1.07 ± 0.04 (+17.7
            standard errors), RM -0.87 -> +2.59, KL 6.14 nats per completion.

            The kl_coef sweep against the weak proxy RM (cpu profile, 80 steps, lr 1e-4, seed 0, 2026-11-30; the
            proxy RM: 73.6% held-out accuracy, Pearson r 0.75 with gold) shows the hack. Held-out evaluation on
            256 prompts at steps 0/20/40/60/80, kl_coef 0: RM -0.40, +1.77, +2.50, +2.75, +3.12 (it only climbs)
            while gold goes -0.21, +0.85, -0.18, -0.68, +0.04 (± 0.07): from step 20 to 60 gold falls by 1.5
            while the proxy gains 1.0. In the training batches the parse rate drops from 94% (step 21) to 6%
            (step 44): the policy writes misspelled reviews such as " the colr is lovely.", which the proxy scores
            like the grammatical one (+3.25 vs +3.26) and gold scores -1.5 (outside the grammar). The RM never saw
            ungrammatical text, so nothing taught it to penalise it. kl_coef 0.01 and 0.05 reach the same RM reward
            (+2.93, +3.09) with gold +0.82 ± 0.03 and +0.54 ± 0.05, and their parse rate never drops below 75%. All
            three runs also collapse onto one favourite, " the color is lovely." (gold 0.90, while the gold optimum
            is 2.2: one sentence with all four intensifiers and "great"): the proxy over-rates "lovely". That
            three-run sweep (899 s on 2 shared cores, load 4.6) is
            `python -m rlprep.demos.reward_hacking --profile cpu --steps 80 --lr 1e-4 --kl-coefs 0,0.01,0.05
            --eval-every 20 --plot hack.png` (docs/benchmarks.md, issue 4). The cell above runs kl_coef 0 and 0.05
            without the intermediate evaluations, so its runs draw different samples; in the cpu profile it printed
            (2026-11-30, 1 thread): kl_coef 0, RM -0.40 -> +3.16 while gold ends at -1.49 ± 0.01 (almost every
            completion outside the grammar) and KL 38.9 nats; kl_coef 0.05, RM +2.96, gold +0.82 ± 0.03, KL 4.8 nats.

            The KL printed is the k1 estimate, the sum over sampled tokens of $\log\pi - \log\pi_{ref}$ averaged
            over a batch: unbiased, but a single batch can give a small negative number while the true KL is near 0
            (Schulman 2020, "Approximating KL Divergence"). In the smoke profile the runs are a few steps long, so
            expect noise, not trends: the cpu and gpu profiles are the ones to read.

            *Try this:* set `entropy_coef=0.01` in the config; drop the score from `kl_penalized_rewards` and watch
            the policy learn only to stay near the reference; set `whiten_advantages=False`.
            """),
        *A.grade_yourself_cells(LAB),
    ]


def build(root=None):
    """Write ``solutions/<LAB>/<LAB>.ipynb`` under ``root`` (default: this checkout)."""
    return A.build_solution(LAB, cells(), root)


if __name__ == "__main__":
    print(build())
