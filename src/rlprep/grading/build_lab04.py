"""Build ``solutions/lab04_dpo/lab04_dpo.ipynb`` (the nbgrader source) deterministically.

    PYTHONPATH=src python -m rlprep.grading.build_lab04      # then: rlprep release

Hidden tests hold expected values computed here, once, from the references in ``rlprep.algos.dpo`` and pasted
as literals (the gradebook stores hidden tests as text, so they must never contain an implementation).
"""

from __future__ import annotations

import torch

from rlprep.algos.dpo import dpo_loss, sequence_logprobs
from rlprep.grading import authoring as A
from rlprep.grading.authoring import float_literal as flit
from rlprep.grading.authoring import tensor_literal as tlit

LAB = "lab04_dpo"


def hidden_fixtures() -> dict:
    """Seeded inputs and the reference's outputs on them, as literals."""
    g = torch.Generator().manual_seed(20261130)
    B, T, V = 3, 5, 6
    logits = torch.round(torch.randn(B, T, V, generator=g, dtype=torch.float64) * 1000) / 1000  # (B, T, V)
    labels = torch.randint(0, V, (B, T), generator=g)  # (B, T)
    full = torch.ones(B, T, dtype=torch.long)
    ragged = torch.tensor([[0, 0, 1, 1, 1], [0, 1, 1, 1, 0], [1, 1, 1, 1, 1]])  # prompt zeros, right padding
    labels_ragged = torch.where(ragged.bool(), labels, torch.full_like(labels, -100))

    def pairs(seed):
        gg = torch.Generator().manual_seed(seed)
        return [torch.round((-10 + 4 * torch.randn(4, generator=gg, dtype=torch.float64)) * 100) / 100
                for _ in range(4)]

    p = pairs(1)
    q = pairs(2)
    return {
        "logits": tlit(logits), "labels": tlit(labels), "full": tlit(full), "ragged": tlit(ragged),
        "labels_ragged": tlit(labels_ragged),
        "slp_full": tlit(sequence_logprobs(logits, labels, full)),
        "slp_ragged": tlit(sequence_logprobs(logits, labels_ragged, ragged)),
        "p": [tlit(t) for t in p], "q": [tlit(t) for t in q],
        "dpo_p_01": flit(dpo_loss(*p, beta=0.1)), "dpo_p_05": flit(dpo_loss(*p, beta=0.5)),
        "dpo_q_default": flit(dpo_loss(*q)),
    }


def cells():
    fx = hidden_fixtures()
    p_args = ", ".join(fx["p"])
    q_args = ", ".join(fx["q"])
    return [
        A.md("title", """
            # Lab 4 · Direct Preference Optimization (DPO) and its β

            Interview questions **W12** (DPO 损失函数怎么写？beta 的作用是什么？ — write the DPO loss; what does β
            do?), **W13** (PPO、DPO、GRPO 三者的适用场景分别是什么？ — when is each of PPO, DPO, GRPO the right
            tool?), **G02** (DPO 相比 PPO 的优势在哪里？（离线 vs 在线；DPO 如何把奖励最大化转化为策略的最大似然问题）
            — DPO's advantages over PPO: offline vs online, and how DPO turns reward maximisation into maximum
            likelihood) and **G14** (DPO 的核心思想、优势与劣势是什么？ — DPO's core idea, strengths and weaknesses).

            You will write the two functions every DPO implementation is built from, `sequence_logprobs` and
            `dpo_loss`, then train the course's tiny GPT-2 on the reviews preference pairs **with your
            functions**, for five values of β, and draw the gold-reward-versus-KL frontier of the DPO paper.
            """),
        A.md("theory", r"""
            ## The loss

            RLHF maximises $\mathbb{E}_{y\sim\pi}[r(x,y)] - \beta\,\mathrm{KL}(\pi\,\|\,\pi_\text{ref})$. Its optimum
            is $\pi^*(y|x) \propto \pi_\text{ref}(y|x)\,e^{r(x,y)/\beta}$, so any reward can be written through
            its optimal policy: $r(x,y) = \beta \log\frac{\pi^*(y|x)}{\pi_\text{ref}(y|x)} + \beta\log Z(x)$
            (DPO paper, arXiv 2305.18290, Eq. 4–5). Put that into the Bradley–Terry likelihood of a preference
            $y_w \succ y_l$: $Z(x)$ cancels, and fitting the reward becomes maximum likelihood on the policy itself:

            $$\mathcal{L}_\text{DPO} = -\,\mathbb{E}\Big[\log\sigma\Big(\beta\big[\underbrace{(\log\pi_\theta(y_w|x)
              - \log\pi_\text{ref}(y_w|x))}_{\text{chosen log-ratio}}
              - \underbrace{(\log\pi_\theta(y_l|x) - \log\pi_\text{ref}(y_l|x))}_{\text{rejected log-ratio}}\big]\Big)\Big]
              \qquad\text{(Eq. 7)}$$

            $\log\pi(y|x)$ is a **sum** over the completion's tokens of the per-token log-probabilities; the
            prompt and the padding are not scored. $\hat r(x,y) = \beta\log\frac{\pi_\theta(y|x)}{\pi_\text{ref}(y|x)}$
            is the **implicit reward**; the reference log-probs are constants (no gradient flows into $\pi_\text{ref}$).
            At step 0 the policy *is* the reference, both log-ratios are 0, and the loss is $-\log\sigma(0) = \ln 2$.
            """),
        A.setup("setup", """
            import math

            import torch
            import torch.nn.functional as F

            from rlprep.grading.asserts import assert_close, assert_shape, check, value_and_grad
            """),
        A.md("task-slp", """
            ## Task 1 · `sequence_logprobs`

            `logits[:, t]` already scores `labels[:, t]` (the caller shifted them). Take `log_softmax` over the
            vocabulary, pick each label's log-prob (`gather`), and sum over the positions where `mask` is 1.
            Labels may be `-100` where the mask is 0: make sure such positions neither crash nor count.
            """),
        A.answer("sequence_logprobs", "rlprep.algos.dpo:sequence_logprobs"),
        A.md("task-dpo", """
            ## Task 2 · `dpo_loss`

            The mean over the batch of $-\\log\\sigma(\\beta\\,[(\\pi_c - \\text{ref}_c) - (\\pi_r - \\text{ref}_r)])$, where
            each argument is a `[B]` tensor of sequence log-probs. Use `F.logsigmoid` (stable for large margins)
            and keep the reference terms out of the graph.
            """),
        A.answer("dpo_loss", "rlprep.algos.dpo:dpo_loss"),
        A.md("tests-intro", """
            ## Tests

            The visible parts are worked by hand; the hidden parts run when you grade (`rlprep grade labs/lab04_dpo/lab04_dpo.ipynb` from the repository root,
            or the last cell of this notebook) and name the property that failed, never the expected values.
            """),
        A.test("test_slp_by_hand", 2, """
            # V = 3 and logits = log([1, 2, 1]) at both positions, so softmax = [0.25, 0.5, 0.25].
            # labels [1, 0] -> log 0.5 + log 0.25.
            logits = torch.log(torch.tensor([[[1.0, 2.0, 1.0], [1.0, 2.0, 1.0]]], dtype=torch.float64))  # (1, 2, 3)
            lp = sequence_logprobs(logits, torch.tensor([[1, 0]]), torch.tensor([[1.0, 1.0]]))
            assert_shape(lp, (1,), 'sequence_logprobs must return one value per row, shape [B]')
            assert_close(lp, [math.log(0.5) + math.log(0.25)],
                         'sequence log-prob on the 2-token example worked by hand (a sum of log softmax over V)')
            """, hidden_code=(
                f"assert_close(sequence_logprobs({fx['logits']}, {fx['labels']}, {fx['full']}), {fx['slp_full']}, "
                "'sequence log-probs wrong on a random batch with every position valid')")),
        A.test("test_slp_mask", 2, """
            # Uniform logits over V = 4: each scored token has log-prob log(1/4). The first position is the prompt
            # (mask 0, label -100): it must not be scored and must not crash the gather.
            lp = sequence_logprobs(torch.zeros(1, 3, 4, dtype=torch.float64), torch.tensor([[-100, 2, 1]]),
                                   torch.tensor([[0.0, 1.0, 1.0]]))
            assert_close(lp, [2 * math.log(0.25)], 'masked positions (mask 0, label -100) must not be scored')
            """, hidden_code=(
                f"assert_close(sequence_logprobs({fx['logits']}, {fx['labels_ragged']}, {fx['ragged']}), "
                f"{fx['slp_ragged']}, 'sequence log-probs wrong when prompt and padding positions are masked "
                "(rows of different lengths)')")),
        A.test("test_slp_gradient", 1, """
            # d/dlogits of log softmax(logits)[label] = onehot(label) - softmax: uniform over V = 4 gives
            # [-0.25, -0.25, 0.75, -0.25] at the scored position and 0 at the masked one.
            value, grads = value_and_grad(sequence_logprobs, wrt=('logits',),
                                          logits=torch.zeros(1, 2, 4, dtype=torch.float64),
                                          labels=torch.tensor([[-100, 2]]), mask=torch.tensor([[0.0, 1.0]]))
            assert_close(grads['logits'], [[[0.0, 0.0, 0.0, 0.0], [-0.25, -0.25, 0.75, -0.25]]],
                         'the gradient must flow to the logits of scored positions only (onehot - softmax)')
            """),
        A.test("test_dpo_ln2_at_start", 1, """
            # policy == reference: both log-ratios are 0 and the loss is -log sigma(0) = ln 2, whatever beta.
            logps = torch.tensor([-12.0, -30.5, -7.25], dtype=torch.float64)
            others = torch.tensor([-14.0, -29.0, -9.0], dtype=torch.float64)
            for beta in (0.1, 1.0):
                assert_close(dpo_loss(logps, others, logps, others, beta=beta), math.log(2),
                             'the loss must be ln 2 when the policy equals the reference')
            """),
        A.test("test_dpo_by_hand", 2, """
            # pi_c = -1, pi_r = -3, ref_c = ref_r = -2, beta = 0.5: chosen log-ratio +1, rejected -1,
            # beta * (1 - (-1)) = 1, loss = -log sigma(1) = log(1 + e^-1).
            one = lambda v: torch.tensor([v], dtype=torch.float64)
            assert_close(dpo_loss(one(-1.0), one(-3.0), one(-2.0), one(-2.0), beta=0.5), math.log1p(math.exp(-1.0)),
                         'DPO loss on the one-pair example worked by hand')
            """, hidden_code=(
                f"assert_close(dpo_loss({p_args}, beta=0.1), {fx['dpo_p_01']}, "
                "'DPO loss wrong on a batch where the reference log-probs of chosen and rejected differ')\n"
                f"assert_close(dpo_loss({p_args}, beta=0.5), {fx['dpo_p_05']}, "
                "'DPO loss wrong for beta=0.5 (beta scales the logit inside the sigmoid)')")),
        A.test("test_dpo_batch_mean", 1, """
            # The loss is a mean over pairs: repeating the batch must not change it.
            pc, pr = torch.tensor([-5.0, -9.0], dtype=torch.float64), torch.tensor([-6.0, -4.0], dtype=torch.float64)
            rc, rr = torch.tensor([-5.5, -8.0], dtype=torch.float64), torch.tensor([-6.5, -5.0], dtype=torch.float64)
            once = dpo_loss(pc, pr, rc, rr, beta=0.2)
            twice = dpo_loss(pc.repeat(2), pr.repeat(2), rc.repeat(2), rr.repeat(2), beta=0.2)
            assert_close(twice, float(once), 'the loss must be the mean over the batch, not the sum')
            """),
        A.test("test_dpo_gradients", 2, """
            # At policy == reference: d loss / d pi_c = -beta * sigma(0) / B = -beta / (2B), d / d pi_r = +beta / (2B),
            # and no gradient reaches the reference log-probs (they are constants).
            x = torch.tensor([-3.0, -8.0], dtype=torch.float64)
            y = torch.tensor([-4.0, -6.0], dtype=torch.float64)
            value, grads = value_and_grad(dpo_loss, wrt=('policy_chosen_logps', 'policy_rejected_logps',
                                                         'ref_chosen_logps', 'ref_rejected_logps'),
                                          policy_chosen_logps=x, policy_rejected_logps=y,
                                          ref_chosen_logps=x, ref_rejected_logps=y, beta=0.4)
            assert_close(grads['policy_chosen_logps'], [-0.1, -0.1], 'the gradient must raise the chosen log-probs')
            assert_close(grads['policy_rejected_logps'], [0.1, 0.1], 'the gradient must lower the rejected log-probs')
            assert_close(grads['ref_chosen_logps'], [0.0, 0.0],
                         'no gradient may flow into the reference log-probs (stop-gradient)')
            assert_close(grads['ref_rejected_logps'], [0.0, 0.0],
                         'no gradient may flow into the reference log-probs (stop-gradient)')
            """),
        A.test("test_dpo_default_beta", 1, """
            # Hidden: the default beta is 0.1.
            """, hidden_code=(
                f"assert_close(dpo_loss({q_args}), {fx['dpo_q_default']}, 'the default must be beta=0.1')")),
        A.md("demo-intro", """
            ## Train the GPT-2 policy with your functions

            The cells below are demos (grading skips them). They load the reviews policy warm-started by SFT
            (`rlprep.tinyworld.load_policy`) and train it with `rlprep.trainers.dpo`, **passing your
            `sequence_logprobs` and `dpo_loss` into the trainer**. Budgets follow the profile:
            `RLPREP_PROFILE=smoke` runs in seconds, `cpu` (the default without a GPU) in minutes, `gpu` longer.
            Every run shows a progress bar and a live plot; press the stop button (■) at any time: the run ends
            after the step in flight, the model keeps what it trained,
            and a checkpoint, the history and the plot are saved in `runs/` under rlprep's data folder (`$RLPREP_HOME`).

            Each review prompt has a preference pair `(chosen, rejected)` ranked by a hidden **gold** scorer; DPO
            only sees the pairs. After training we sample from the policy and score the samples with the gold
            scorer, and measure how far the policy moved: $\\mathrm{KL}(\\pi\\,\\|\\,\\pi_\\text{ref})$ per sequence,
            in nats, averaged over samples.
            """),
        A.demo("demo-setup", """
            import copy
            from dataclasses import replace

            import matplotlib.pyplot as plt

            from rlprep.profiles import get_profile
            from rlprep.tinyworld import get_task, load_policy
            from rlprep.trainers.dpo import SWEEP_BETAS, DPOConfig, DPOTrainer, beta_sweep

            PROFILE = get_profile()  # RLPREP_PROFILE=smoke|cpu|gpu; gpu when CUDA is present, else cpu
            policy, tokenizer = load_policy("reviews", PROFILE)
            task = get_task("reviews")
            mine = dict(sequence_logprobs=sequence_logprobs, dpo_loss=dpo_loss)  # your functions, for the trainer
            config = DPOConfig.for_profile(PROFILE)
            if PROFILE.name == "smoke":  # CI: a few seconds per beta
                config = replace(config, steps=4, eval_every=4, eval_prompts=16, n_train_pairs=64)
            pair = task.preference_pairs(1, split="train", seed=0)[0]
            print(f"profile {PROFILE.name}: {config.steps} steps x {config.batch_size} pairs per beta")
            print(f"prompt   {pair.prompt!r}\\nchosen   {pair.chosen!r}\\nrejected {pair.rejected!r}")
            """),
        A.demo("demo-step0", """
            # Step 0: the policy equals the reference, so the first loss must be ln 2 (up to float32 rounding).
            trainer = DPOTrainer(config, copy.deepcopy(policy), tokenizer, task, **mine)
            first = trainer.step(0)
            print(f"loss at step 0 = {first['loss/dpo']:.6f}   ln 2 = {math.log(2):.6f}")
            assert abs(first["loss/dpo"] - math.log(2)) < 1e-3, "at step 0 the loss must be ln 2: check dpo_loss"
            del trainer
            """),
        A.demo("demo-sweep", """
            # One fresh copy of the SFT policy per beta, trained with your functions (stop at any time: the betas
            # finished so far are kept in `rows`).
            rows = beta_sweep(SWEEP_BETAS, config=config, policy=policy, tokenizer=tokenizer, task=task, live=None,
                              **mine)
            for r in rows:
                print(f"beta={r['beta']:<5g} KL(pi||ref) {r['kl']:7.3f} ± {r['kl_se']:.3f} nats   "
                      f"gold {r['gold']:+.3f} ± {r['gold_se']:.3f} (SFT {r['gold_start']:+.3f})   "
                      f"implicit-reward accuracy {r['reward/implicit_accuracy']:.2f}")
            if rows and rows[-1]["interrupted"]:
                print(f"stopped early: {len(rows)} of {len(SWEEP_BETAS)} betas; the last one is saved in "
                      f"{rows[-1]['history'].meta.get('run_dir')}")
            """),
        A.demo("demo-frontier", """
            def plot_sweep(rows):
                \"\"\"Gold reward vs KL (the DPO paper's Fig. 2, left, in miniature) and the training curves per beta.\"\"\"
                fig, (ax, ax_acc, ax_lp) = plt.subplots(1, 3, figsize=(16, 4.5))
                colors = plt.cm.viridis([i / max(1, len(rows) - 1) for i in range(len(rows))])
                for r, c in zip(rows, colors):
                    ax.errorbar(r["kl"], r["gold"], xerr=r["kl_se"], yerr=r["gold_se"], fmt="o", color=c,
                                label=f"β = {r['beta']:g}")
                    ax.annotate(f"β={r['beta']:g}", (r["kl"], r["gold"]), textcoords="offset points", xytext=(6, 4))
                    h = r["history"]
                    ax_acc.plot(*h.series("reward/implicit_accuracy"), color=c, label=f"β = {r['beta']:g}")
                    ax_lp.plot(*h.series("logps/chosen"), color=c, label=f"chosen, β = {r['beta']:g}")
                    ax_lp.plot(*h.series("logps/rejected"), color=c, ls="--")
                ax.axhline(rows[0]["gold_start"], color="gray", ls=":", label="SFT start")
                ax.set_xlabel("KL(π ‖ π_ref) per sequence (nats)")
                ax.set_ylabel("gold reward of policy samples (gold-scorer units)")
                ax.set_title("Reward vs KL frontier, one point per β")
                ax.legend(fontsize=8)
                ax_acc.set_xlabel("step")
                ax_acc.set_ylabel("implicit-reward accuracy (fraction of pairs)")
                ax_acc.set_title("β·log π/π_ref ranks chosen above rejected")
                ax_lp.set_xlabel("step")
                ax_lp.set_ylabel("log π(y|x) of the batch (nats)")
                ax_lp.set_title("chosen (solid) and rejected (dashed) log-probs")
                ax_lp.legend(fontsize=7)
                fig.tight_layout()
                return fig


            fig = plot_sweep(rows)
            plt.show()
            kls = [r["kl"] for r in rows]
            falls = sum(a > b for a, b in zip(kls, kls[1:]))
            print(f"KL falls between {falls} of {len(kls) - 1} neighbouring betas (expected: all, within noise)")
            """),
        A.md("beta-summary", """
            ## What β does (W12)

            * **β is the strength of the KL leash.** DPO solves the KL-regularised objective
              $\\max \\mathbb{E}[r] - \\beta\\,\\mathrm{KL}(\\pi\\|\\pi_\\text{ref})$ in closed form (arXiv 2305.18290,
              Eq. 4). A small β makes the same preference margin cheap to reach with a large log-ratio, so the
              policy moves far from the reference (large KL); a large β keeps it close. In the sweep above the KL
              should fall as β grows, as in the paper's frontier plot (its Fig. 2 spans many β and seeds).
            * **β sets the implicit reward's scale and the gradient's weight.** $\\hat r = \\beta\\log\\pi/\\pi_\\text{ref}$,
              and the gradient of each pair is weighted by $\\sigma(-\\beta\\,\\Delta)$, with $\\Delta$ the log-ratio
              margin: once a pair is ranked with a margin of a few $1/\\beta$ it stops contributing.
            * **Typical values:** β = 0.1 for dialogue and 0.5 for TL;DR summarisation in the DPO paper
              (arXiv 2305.18290, App. B).
            * **The leash is weaker than it looks.** With near-deterministic preferences the optimum pushes the
              margin to infinity whatever β, and DPO's KL regularisation vanishes; IPO (arXiv 2310.12036) replaces
              the log-sigmoid by a squared loss on the margin for this reason. In the log-prob curves you can also
              see the classic DPO symptom: the *chosen* log-prob often falls too, only less than the rejected one.
            """),
        A.md("choice", """
            ## DPO, PPO or GRPO? (W13, G02, G14)

            | | DPO | PPO (RLHF) | GRPO |
            |---|---|---|---|
            | data | a fixed set of preference pairs (offline) | prompts; samples from the current policy (online) | prompts with a verifier or reward; G samples per prompt (online) |
            | models in memory | policy + frozen reference | policy, reference, reward model, critic | policy (+ reference when β > 0) |
            | signal | pairwise preferences, turned into maximum likelihood | a learned reward, per-token advantages from a critic (GAE) | group-relative advantage $(r-\\bar r)/\\sigma$, no critic |
            | strengths | simple, stable, cheap: no sampling, no reward model | explores; optimises any scalar reward; the strongest results when tuned | no critic; ideal for verifiable rewards (math, code) |
            | weaknesses | no exploration, limited to the data's support; can put mass on out-of-distribution responses | four models, many hyper-parameters, reward hacking | needs several samples per prompt; learns nothing from groups whose rewards are all equal |

            * **G02 / G14.** DPO's core idea is that the reward can be reparameterised by the optimal policy,
              so the Bradley–Terry fit of the reward becomes a classification loss on the policy's log-ratios
              (arXiv 2305.18290, Eq. 5–7): no reward model, no sampling during training. The price is that it is
              offline: it never sees its own samples, and "Is DPO Superior to PPO for LLM Alignment?"
              (arXiv 2404.10719) shows DPO can exploit out-of-distribution responses, while a well-tuned PPO
              (advantage normalisation, large batches, an EMA reference) beat it on their benchmarks.
            * **W13.** Pick **DPO** when you have (or can cheaply collect) preference pairs and want a stable,
              cheap alignment step; **PPO** when you have a reward model and need online exploration or a reward
              that is not pairwise; **GRPO** when the reward is verifiable (a checker for math or code) and you
              want online RL without training a critic (DeepSeekMath, arXiv 2402.03300). Lab 5 trains GRPO.

            *Try this:* rerun the sweep with `config = DPOConfig.for_profile(PROFILE, steps=2 * config.steps)` and
            watch the small-β points move right (more KL) faster than they move up (gold reward).
            """),
        A.md("reproduce", """
            ## Reproduce from a terminal

            * the β sweep, with the reference functions: `python -m rlprep.trainers.dpo --profile cpu --sweep`
              (prints KL, gold reward and implicit-reward accuracy per β, and whether KL falls as β grows);
            * this whole notebook's demos, unattended: `RLPREP_PROFILE=cpu jupyter nbconvert --to notebook
              --execute solutions/lab04_dpo/lab04_dpo.ipynb --output /tmp/lab04_cpu.ipynb` (the reference answers);
            * the grading of your copy: `rlprep grade labs/lab04_dpo/lab04_dpo.ipynb`.
            """),
        *A.grade_yourself_cells(LAB),
    ]


def build(root=None):
    """Write ``solutions/<LAB>/<LAB>.ipynb`` under ``root`` (default: this checkout)."""
    return A.build_solution(LAB, cells(), root)


if __name__ == "__main__":
    print(build())
