"""Build ``solutions/lab05_grpo/lab05_grpo.ipynb`` (the nbgrader source) deterministically.

    PYTHONPATH=src python -m rlprep.grading.build_lab05      # then: rlprep release

Hidden tests hold expected values computed here, once, from the references in ``rlprep.algos.grpo`` and pasted
as literals (the gradebook stores hidden tests as text, so they must never contain an implementation).
"""

from __future__ import annotations

import torch

from rlprep.algos.grpo import group_advantages, grpo_loss, kl_k3
from rlprep.grading import authoring as A
from rlprep.grading.authoring import float_literal as flit
from rlprep.grading.authoring import tensor_literal as tlit

LAB = "lab05_grpo"


def hidden_fixtures() -> dict:
    """Seeded inputs and the reference's outputs on them, as literals."""
    g = torch.Generator().manual_seed(20261201)

    def rnd(*shape, scale=1.0, shift=0.0):
        return torch.round((shift + scale * torch.randn(*shape, generator=g, dtype=torch.float64)) * 1000) / 1000

    rewards = rnd(15)  # N = 3 groups of G = 5, continuous rewards
    B, T = 4, 6
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 0]],
                        dtype=torch.float64)  # ragged, every row has >= 1 valid token
    old = rnd(B, T, scale=0.8, shift=-1.5)
    new = torch.round((old + 0.3 * torch.randn(B, T, generator=g, dtype=torch.float64)) * 1000) / 1000
    ref = torch.round((old + 0.3 * torch.randn(B, T, generator=g, dtype=torch.float64)) * 1000) / 1000
    adv = rnd(B)
    logp_k3, ref_k3 = rnd(3, 4, shift=-1.0), rnd(3, 4, shift=-1.0)

    def loss(**kw):
        return flit(grpo_loss(new, old, adv, mask, **kw))

    return {
        "rewards": tlit(rewards),
        "ga_group": tlit(group_advantages(rewards, 5)), "ga_batch": tlit(group_advantages(rewards, 5, scale="batch")),
        "ga_none": tlit(group_advantages(rewards, 5, scale="none")),
        "ga_eps": tlit(group_advantages(rewards, 5, scale="group", eps=0.5)),
        "k3_logp": tlit(logp_k3), "k3_ref": tlit(ref_k3), "k3": tlit(kl_k3(logp_k3, ref_k3)),
        "new": tlit(new), "old": tlit(old), "ref": tlit(ref), "adv": tlit(adv), "mask": tlit(mask),
        "clip_token": loss(eps_low=0.2, eps_high=0.28, aggregation="token"),
        "clip_sequence": loss(eps_low=0.2, eps_high=0.28, aggregation="sequence"),
        "kl_token": flit(grpo_loss(new, old, adv, mask, beta=0.04, ref_logp=ref, aggregation="token")),
        "kl_sequence": flit(grpo_loss(new, old, adv, mask, beta=0.04, ref_logp=ref, aggregation="sequence")),
        "default": loss(),
    }


def cells():
    fx = hidden_fixtures()
    batch = f"{fx['new']}, {fx['old']}, {fx['adv']}, {fx['mask']}"
    return [
        A.md("title", """
            # Lab 5 · GRPO, DAPO and the zero loss

            Interview questions **W11** (如果同事训 GRPO 时发现 loss 变成 0，你觉得正常吗？如果不正常，可能原因和解决方案是什么？
            — a colleague's GRPO loss went to 0: is that normal? If not, what are the causes and fixes?),
            **W08** (DAPO 为什么不需要 KL 惩罚？它怎么维持策略稳定性？ — why does DAPO need no KL penalty, and what
            keeps it stable?), **W24** (大模型强化学习训练中，为什么会出现熵坍塌现象？熵坍塌的本质是什么？ — why does
            entropy collapse in LLM RL, and what is it really?), **W25** (字节的 DAPO 算法核心思路是非对称裁剪，为什么这样有效？
            — DAPO's asymmetric clipping: why does it work?), **W20** (DSPO 算法侧重序列级优化的设计逻辑与优势是什么？
            — the design and advantages of sequence-level optimisation; we show GSPO's sequence ratio), and
            W09/W10 in passing.

            You will write GRPO's four pieces — `group_advantages`, `kl_k3`, `grpo_loss` and `diagnose_zero_loss` —
            then train the course's tiny GPT-2 on arithmetic **with your functions**, reproduce every cause of a
            zero loss on the real policy, and switch DAPO's pieces on one at a time.
            """),
        A.md("theory", r"""
            ## The objective

            For each prompt $q$ sample a **group** of $G$ completions $o_1..o_G$ and score them (1 if the answer is
            right, else 0). GRPO (DeepSeekMath, arXiv 2402.03300, Sec. 4.1.2) needs no critic: each completion's
            advantage is its reward against its own group,

            $$\hat A_i = \frac{r_i - \mathrm{mean}(r_1..r_G)}{\mathrm{std}(r_1..r_G) + \epsilon},$$

            broadcast to every token of $o_i$ (std with Bessel's correction, $\epsilon = 10^{-4}$, as TRL). The loss
            per token is PPO's clipped surrogate with the ratio $\rho_{i,t} = \pi_\theta(o_{i,t}|\cdot)/\pi_\text{old}(o_{i,t}|\cdot)$,

            $$\ell_{i,t} = -\min\big(\rho_{i,t}\hat A_i,\ \mathrm{clip}(\rho_{i,t}, 1-\varepsilon_\text{low}, 1+\varepsilon_\text{high})\,\hat A_i\big)
              + \beta\,\underbrace{\Big(\tfrac{\pi_\text{ref}}{\pi_\theta} - \log\tfrac{\pi_\text{ref}}{\pi_\theta} - 1\Big)}_{k_3\ (\text{GRPO Eq. 4})}$$

            aggregated either **per sequence** (GRPO, Eq. 3: $\frac1G\sum_i \frac{1}{|o_i|}\sum_t \ell_{i,t}$) or
            **per token** (DAPO, arXiv 2503.14476, Eq. 8: $\frac{1}{\sum_i |o_i|}\sum_i\sum_t \ell_{i,t}$).
            DAPO also clips higher ($\varepsilon_\text{high} = 0.28 > \varepsilon_\text{low} = 0.2$), drops the KL term
            and samples dynamically (drops groups whose rewards are all equal). Dr. GRPO (arXiv 2503.20783) drops
            the std division (`scale="none"`); TRL's `scale_rewards="batch"` divides by the whole batch's std.
            """),
        A.setup("setup", """
            import math

            import torch

            from rlprep.grading.asserts import assert_close, assert_shape, check, value_and_grad
            """),
        A.md("task-ga", """
            ## Task 1 · `group_advantages`

            `rewards` is a flat `[N*G]` tensor of N **consecutive** groups. Centre each group on its own mean;
            divide by the group's std (`"group"`), the whole batch's std (`"batch"`) or nothing (`"none"`), adding
            `eps` to the std. A group whose rewards are all equal must get advantages 0, never NaN.
            """),
        A.answer("group_advantages", "rlprep.algos.grpo:group_advantages"),
        A.md("task-k3", """
            ## Task 2 · `kl_k3`

            Schulman's k3 estimator of $\\mathrm{KL}(\\pi\\|\\pi_\\text{ref})$ per sampled token: with
            $\\log r = \\log\\pi_\\text{ref} - \\log\\pi$, $k_3 = e^{\\log r} - \\log r - 1 \\ge 0$ ("Approximating KL
            Divergence", 2020). Unbiased on samples from $\\pi$, never negative, 0 exactly when the two agree.
            """),
        A.answer("kl_k3", "rlprep.algos.grpo:kl_k3"),
        A.md("task-loss", """
            ## Task 3 · `grpo_loss`

            The per-token clipped surrogate above (plus `beta * k3` when `beta > 0`), with `advantages` `[B]`
            broadcast over each row's tokens and `logp_old` treated as a constant. `"token"`: the sum over all
            valid tokens divided by their number (DAPO). `"sequence"`: each row's masked mean, then the mean over
            rows (GRPO). Padding (mask 0) must never count.

            Two options let the package's other GRPO loops share the function; neither is graded, and the demos
            below use the defaults. `advantages` may also be `[B, T]`, one per token (the multi-turn and
            stale-rollout trainers). `importance_level="sequence"` gives every token of a row GSPO's ratio,
            exp(masked mean of the row's log-ratios), while the k3 term keeps the real per-token `logp_new`.
            """),
        A.answer("grpo_loss", "rlprep.algos.grpo:grpo_loss"),
        A.md("task-dz", """
            ## Task 4 · `diagnose_zero_loss`

            A GRPO step logged `loss = 0`. From the step's stats, name the reason: `"no_valid_tokens"` (nothing
            is scored), `"zero_advantage"` (every group's rewards are equal), `"all_clipped"` (every token's ratio
            left the trust region on the side where `min` keeps the constant term: only possible off-policy), or
            `"expected"` (the on-policy first step: the ratio is 1 in value and the centred advantages sum to 0,
            yet the gradient is not 0). Check the causes in that order: the first one that holds wins.
            """),
        A.answer("diagnose_zero_loss", "rlprep.algos.grpo:diagnose_zero_loss"),
        A.md("tests-intro", """
            ## Tests

            The visible parts are worked by hand; the hidden parts run when you grade (`rlprep grade labs/lab05_grpo/lab05_grpo.ipynb` from the repository root,
            or the last cell of this notebook) and name the property that failed, never the expected values.
            """),
        A.test("test_ga_by_hand", 2, """
            # Group 1 = [1, 0, 0, 0]: mean 0.25, Bessel std sqrt((0.75^2 + 3 * 0.25^2) / 3) = 0.5.
            # Group 2 = [1, 1, 0, 0]: mean 0.5, Bessel std sqrt(4 * 0.25 / 3) = sqrt(1/3).
            adv = group_advantages(torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0], dtype=torch.float64), 4)
            assert_shape(adv, (8,), 'group_advantages must return one advantage per completion, shape [N*G]')
            s1, s2 = 0.5 + 1e-4, math.sqrt(1 / 3) + 1e-4
            assert_close(adv, [0.75 / s1, -0.25 / s1, -0.25 / s1, -0.25 / s1, 0.5 / s2, 0.5 / s2, -0.5 / s2, -0.5 / s2],
                         'advantages on the two-group example worked by hand (consecutive groups, Bessel std + eps)')
            """, hidden_code=(
                f"assert_close(group_advantages({fx['rewards']}, 5), {fx['ga_group']}, "
                "'advantages wrong on three groups of five continuous rewards (scale=\"group\")')")),
        A.test("test_ga_equal_group", 1, """
            # A group whose rewards are all equal has nothing to learn from: advantage 0, not NaN (eps!).
            adv = group_advantages(torch.tensor([1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0], dtype=torch.float64), 4)
            assert_close(adv[:4], [0.0, 0.0, 0.0, 0.0], 'a group with equal rewards must get advantages 0 (not NaN)')
            """),
        A.test("test_ga_scales", 2, """
            # scale="none" (Dr. GRPO): centre only. Groups [3, 1] and [2, 2] -> [1, -1, 0, 0].
            adv = group_advantages(torch.tensor([3.0, 1.0, 2.0, 2.0], dtype=torch.float64), 2, scale="none")
            assert_close(adv, [1.0, -1.0, 0.0, 0.0], 'scale="none" must only subtract the group mean')
            """, hidden_code=(
                f"assert_close(group_advantages({fx['rewards']}, 5, scale='batch'), {fx['ga_batch']}, "
                "'scale=\"batch\" wrong: centre per group, divide by the std of the whole batch + eps')\n"
                f"assert_close(group_advantages({fx['rewards']}, 5, scale='none'), {fx['ga_none']}, "
                "'scale=\"none\" wrong on three groups of five')\n"
                f"assert_close(group_advantages({fx['rewards']}, 5, scale='group', eps=0.5), {fx['ga_eps']}, "
                "'eps must be added to the std (not to the variance), and the eps argument used')")),
        A.test("test_k3_by_hand", 2, """
            # logp = 0 (pi = 1), ref = log 2: log r = log 2, k3 = 2 - log 2 - 1.  Equal log-probs give exactly 0.
            k3 = kl_k3(torch.tensor([[0.0, -1.5]], dtype=torch.float64), torch.tensor([[math.log(2.0), -1.5]], dtype=torch.float64))
            assert_close(k3, [[1.0 - math.log(2.0), 0.0]],
                         'k3 on the example worked by hand: exp(ref - logp) - (ref - logp) - 1, 0 when equal')
            """, hidden_code=(
                f"assert_close(kl_k3({fx['k3_logp']}, {fx['k3_ref']}), {fx['k3']}, "
                "'k3 wrong on random log-probs (direction of the ratio: pi_ref / pi)')")),
        A.test("test_k3_shape_nonnegative", 1, """
            k3 = kl_k3(torch.linspace(-3, 0, 24, dtype=torch.float64).reshape(2, 3, 4),
                       torch.linspace(0, -3, 24, dtype=torch.float64).reshape(2, 3, 4))
            assert_shape(k3, (2, 3, 4), 'kl_k3 must keep the input shape (no reduction, no masking)')
            check(bool((k3 >= 0).all()), 'k3 must be >= 0 everywhere')
            """),
        A.test("test_grpo_on_policy", 2, """
            # logp_new == logp_old: ratio 1, per-token loss -A. Row 0: three valid tokens with A = +1,
            # row 1: one valid token with A = -1 (the rest is padding).
            lp = torch.log(torch.tensor([[0.5, 0.25, 0.5], [0.2, 0.9, 0.9]], dtype=torch.float64))
            mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
            adv = torch.tensor([1.0, -1.0], dtype=torch.float64)
            assert_close(grpo_loss(lp, lp, adv, mask, aggregation="token"), (-3.0 + 1.0) / 4,
                         'token aggregation: sum over valid tokens / number of valid tokens')
            assert_close(grpo_loss(lp, lp, adv, mask, aggregation="sequence"), (-1.0 + 1.0) / 2,
                         "sequence aggregation: mean over rows of each row's masked mean")
            """),
        A.test("test_grpo_clip", 2, """
            # One token, logp_old = 0. Ratio 1.5 with A = +1: -min(1.5, 1.2) = -1.2 (or -1.28 with eps_high = 0.28).
            # Ratio 1.5 with A = -1: -min(-1.5, -1.2) = 1.5. Ratio 0.5 with A = -1: -min(-0.5, -0.8) = 0.8.
            one = lambda v: torch.tensor([[v]], dtype=torch.float64)
            m1, pos, neg = torch.tensor([[1.0]]), torch.tensor([1.0], dtype=torch.float64), torch.tensor([-1.0], dtype=torch.float64)
            up, down, zero = one(math.log(1.5)), one(math.log(0.5)), one(0.0)
            assert_close(grpo_loss(up, zero, pos, m1), -1.2, 'a ratio of 1.5 with A > 0 must be clipped at 1 + eps')
            assert_close(grpo_loss(up, zero, pos, m1, eps_low=0.2, eps_high=0.28), -1.28,
                         'clip-higher: the upper bound must be 1 + eps_high')
            assert_close(grpo_loss(up, zero, neg, m1), 1.5,
                         'min must keep the unclipped term when it is worse (ratio 1.5, A < 0)')
            assert_close(grpo_loss(down, zero, neg, m1, eps_low=0.2, eps_high=0.28), 0.8,
                         'a ratio of 0.5 with A < 0 must be clipped at 1 - eps_low')
            """, hidden_code=(
                f"assert_close(grpo_loss({batch}, eps_low=0.2, eps_high=0.28, aggregation='token'), "
                f"{fx['clip_token']}, 'clipped loss wrong on a random off-policy batch (token aggregation)')\n"
                f"assert_close(grpo_loss({batch}, eps_low=0.2, eps_high=0.28, aggregation='sequence'), "
                f"{fx['clip_sequence']}, 'clipped loss wrong on a random off-policy batch (sequence aggregation)')")),
        A.test("test_grpo_kl", 2, """
            # logp_new = logp_old = 0 and A = 0: only the KL term is left, beta * k3 = 0.1 * (2 - log 2 - 1).
            one = lambda v: torch.tensor([[v]], dtype=torch.float64)
            loss = grpo_loss(one(0.0), one(0.0), torch.zeros(1, dtype=torch.float64), torch.tensor([[1.0]]), beta=0.1,
                             ref_logp=one(math.log(2.0)))
            assert_close(loss, 0.1 * (1.0 - math.log(2.0)), 'beta * k3(pi || pi_ref) must be added to the loss')
            """, hidden_code=(
                f"assert_close(grpo_loss({batch}, beta=0.04, ref_logp={fx['ref']}, aggregation='token'), "
                f"{fx['kl_token']}, 'loss with the KL term wrong on a random batch (token aggregation)')\n"
                f"assert_close(grpo_loss({batch}, beta=0.04, ref_logp={fx['ref']}, aggregation='sequence'), "
                f"{fx['kl_sequence']}, 'loss with the KL term wrong on a random batch (sequence aggregation)')")),
        A.test("test_grpo_gradient", 2, """
            # On-policy the loss may be 0 but the gradient is not: d(-rho A)/d logp_new = -rho A = -A at rho = 1,
            # divided by the 4 valid tokens; padding gets 0, and logp_old gets no gradient (a constant).
            lp = torch.log(torch.tensor([[0.5, 0.25, 0.5], [0.2, 0.9, 0.9]], dtype=torch.float64))
            value, grads = value_and_grad(grpo_loss, wrt=('logp_new', 'logp_old'), logp_new=lp, logp_old=lp,
                                          advantages=torch.tensor([1.0, -1.0], dtype=torch.float64),
                                          mask=torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]]), aggregation='token')
            assert_close(grads['logp_new'], [[-0.25, -0.25, -0.25], [0.25, 0.0, 0.0]],
                         'on-policy gradient (token aggregation) must be -A / (number of valid tokens), 0 on padding')
            assert_close(grads['logp_old'], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
                         'no gradient may flow into logp_old (stop-gradient)')
            """),
        A.test("test_grpo_defaults", 1, """
            # Hidden: the defaults are eps_low = eps_high = 0.2, beta = 0, aggregation = "token".
            """, hidden_code=(
                f"assert_close(grpo_loss({batch}), {fx['default']}, "
                "'the defaults must be eps_low=eps_high=0.2, beta=0, aggregation=\"token\"')")),
        A.test("test_diagnose_zero_loss", 3, """
            base = dict(loss=0.0, grad_norm=0.0, frac_zero_std_groups=0.0, frac_valid_tokens=0.8, clip_frac=0.0,
                        beta=0.0, num_iterations=1)
            check(diagnose_zero_loss({**base, 'grad_norm': 1.7}) == 'expected',
                  'on-policy first step, beta = 0, gradient not zero: the zero loss is expected')
            check(diagnose_zero_loss({**base, 'frac_zero_std_groups': 1.0}) == 'zero_advantage',
                  'every group with equal rewards must be zero_advantage')
            check(diagnose_zero_loss({**base, 'frac_valid_tokens': 0.0}) == 'no_valid_tokens',
                  'no valid token must be no_valid_tokens')
            check(diagnose_zero_loss({**base, 'clip_frac': 1.0, 'num_iterations': 4}) == 'all_clipped',
                  'every token clipped (off-policy) must be all_clipped')
            """, hidden_code=(
                "check(diagnose_zero_loss({**base, 'frac_valid_tokens': 0.0, 'frac_zero_std_groups': 1.0}) == "
                "'no_valid_tokens', 'no_valid_tokens must be checked first (nothing else can be judged)')\n"
                "check(diagnose_zero_loss({**base, 'frac_zero_std_groups': 1.0, 'clip_frac': 1.0, 'num_iterations': 2})"
                " == 'zero_advantage', 'zero_advantage must be checked before all_clipped')\n"
                "check(diagnose_zero_loss({**base, 'frac_zero_std_groups': 0.5, 'grad_norm': 0.9}) == 'expected', "
                "'some (not all) groups with equal rewards still leave a gradient: expected')\n"
                "check(diagnose_zero_loss({**base, 'clip_frac': 0.75, 'grad_norm': 0.4, 'num_iterations': 2}) == "
                "'expected', 'some (not all) tokens clipped still leave a gradient: expected')\n"
                "check(diagnose_zero_loss({**base, 'beta': 0.04, 'grad_norm': 2.5, 'frac_valid_tokens': 1.0}) == "
                "'expected', 'beta > 0 on the first step (pi == pi_ref) is still expected')")),
        A.md("demo-intro", """
            ## Train the GPT-2 policy with your functions

            The cells below are demos (grading skips them). They load the arithmetic policy warm-started by SFT
            (`rlprep.tinyworld.warm_start.load_warm_start`; prompts like `07+45=`, reward 1 for the right answer) and train it
            with `rlprep.trainers.grpo`, **passing your `group_advantages`, `grpo_loss` and `kl_k3` into the
            trainer**. Budgets follow the profile: `RLPREP_PROFILE=smoke` runs in seconds, `cpu` (the default
            without a GPU) in about four minutes on two cores (220 s for the whole notebook from an empty cache,
            `docs/benchmarks.md`), `gpu` with the real targets.

            **Where RL starts.** The full SFT already answers ~98% of held-out additions (cpu profile): RL would
            have nothing left to learn, and almost every group would be all-correct (zero advantage, W11). So the
            warm start is the same SFT run **stopped early**, at the first check (every 25 steps) where its greedy
            accuracy on 256 *training* prompts reaches 0.5 (`GRPOConfig.sft_stop_accuracy`; the test prompts
            are never used to choose it). In the cpu profile that is step 250 of 700, in the middle of the
            stretch where the model learns carries, and most groups then mix right and wrong answers: the regime
            where GRPO learns. (Stopping a run early is not the same as a shorter run: a 350-step SFT with its
            own compressed schedule scored 0.14, a 500-step one 0.94.) Measured on two shared cores (load
            average 3.8-5.7), the cpu run below took held-out greedy accuracy (500 test prompts, ± one standard
            error) from **0.524 ± 0.022 to 0.774 ± 0.019** in 400 steps (about 2 minutes); a second seed went
            0.472 → 0.780. See `docs/benchmarks.md`, "GRPO accuracy target". Every run shows a
            progress bar and a live plot; press the stop button (■) at any time: the run ends after the step in
            flight, the model keeps what it trained, and a checkpoint, the history and the plot are saved in
            `runs/` under rlprep's data folder (`$RLPREP_HOME`).
            """),
        A.demo("demo-setup", """
            import copy
            from dataclasses import replace

            import matplotlib.pyplot as plt

            from rlprep.demos.grpo import ratio_spread
            from rlprep.profiles import get_profile
            from rlprep.tinyworld import get_task
            from rlprep.demos.zero_loss import ZERO_LOSS_CAUSES, reproduce_zero_loss
            from rlprep.tinyworld.warm_start import load_warm_start, warm_start_kwargs
            from rlprep.trainers.grpo import GRPOConfig, train_grpo

            PROFILE = get_profile()  # RLPREP_PROFILE=smoke|cpu|gpu; gpu when CUDA is present, else cpu
            config = GRPOConfig.for_profile(PROFILE)
            # The SFT warm start; cpu and gpu stop the SFT run early (config.sft_stop_accuracy) to leave RL headroom.
            policy, tokenizer = load_warm_start(PROFILE, **warm_start_kwargs(config))
            task = get_task("arithmetic")
            mine = dict(group_advantages=group_advantages, grpo_loss=grpo_loss, kl_k3=kl_k3)  # your functions
            # The DAPO comparisons below each train a fresh copy of the SFT policy for VARIANT_STEPS steps.
            VARIANT_STEPS = {"smoke": 2, "cpu": 25, "gpu": 160}[PROFILE.name]  # multiples of the main run's eval_every
            if PROFILE.name == "smoke":  # CI: a few seconds per run
                config = replace(config, steps=4, prompts_per_step=4, eval_every=2, eval_size=50)
            print(f"profile {PROFILE.name}: {config.steps} steps x {config.prompts_per_step} prompts x "
                  f"{config.group_size} samples; comparisons {VARIANT_STEPS} steps each")
            """),
        A.demo("demo-train", """
            # GRPO with your functions, DAPO's token aggregation, symmetric clipping, no KL in the loss.
            main_run = train_grpo(config, policy=copy.deepcopy(policy), tokenizer=tokenizer, task=task, **mine)
            m = main_run.meta
            se = lambda p: math.sqrt(p * (1 - p) / config.eval_size)  # binomial standard error of an accuracy
            print(f"held-out accuracy {m['accuracy_start']:.3f} ± {se(m['accuracy_start']):.3f} -> "
                  f"{m['accuracy_end']:.3f} ± {se(m['accuracy_end']):.3f} "
                  f"({100 * (m['accuracy_end'] - m['accuracy_start']):+.1f} points) in {m['wall_s']:.0f} s"
                  + (f" (stopped early; saved in {main_run.meta.get('run_dir')})" if main_run.interrupted else ""))
            _, zero_std = main_run.series("stats/frac_zero_std_groups")
            print(f"groups whose rewards were all equal (no gradient): {sum(zero_std) / max(1, len(zero_std)):.0%}")
            fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))
            ax.plot(*main_run.series("eval/accuracy"), "o-")
            ax.set_xlabel("step")
            ax.set_ylabel("held-out accuracy (greedy, fraction correct)")
            ax.set_title("GRPO on arithmetic with your functions")
            ax2.plot(*main_run.series("reward/mean"))
            ax2.set_xlabel("step")
            ax2.set_ylabel("mean reward of the samples (fraction correct)")
            ax2.set_title("training reward (temperature 1)")
            fig.tight_layout()
            plt.show()
            """),
        A.md("zero-intro", """
            ## W11 · "My GRPO loss is 0"

            Each cause below is reproduced with one real GRPO step on the SFT policy (its weights are restored
            afterwards), using your `group_advantages` and `grpo_loss`; **your** `diagnose_zero_loss` reads the
            logged stats. The signature of each cause is in the columns:

            * `on_policy`: ordinary prompts, one update per batch, β = 0, sequence aggregation. The ratio is 1 in
              value and centred advantages sum to 0, so the loss is exactly 0, **but `grad_norm` is not**: normal
              (huggingface/trl issues #2703 and #3452).
            * `too_easy` / `too_hard`: groups whose G samples are all right / all wrong. `frac_zero_std_groups = 1`,
              every advantage is 0 and so is the gradient. Fix: harder/easier prompts (a curriculum), or DAPO's
              dynamic sampling.
            * `all_truncated`: `max_new_tokens = 1` with truncated completions masked: `frac_valid_tokens = 0`.
              Fix: a longer budget (or do not mask truncated completions). A weak warm start sometimes emits eos
              as its very first token (an empty, wrong answer that is not truncated), so a few tokens stay valid;
              then every group is all wrong and, by the decision order, the diagnosis is `zero_advantage`.
            * `mask_bug`: a planted bug that inverts the truncation filter, so every completion that ended properly
              is dropped: again `frac_valid_tokens = 0`. Fix the mask (compare TRL issue #6369, fixed in #6439).
            """),
        A.demo("demo-zero-loss", """
            EXPECTED = {"on_policy": {"expected"}, "too_easy": {"zero_advantage"}, "too_hard": {"zero_advantage"},
                        "all_truncated": {"no_valid_tokens", "zero_advantage"}, "mask_bug": {"no_valid_tokens"}}
            header = f"{'cause':<14}{'loss':>9}{'grad_norm':>11}{'zero_std':>10}{'valid':>8}{'clip':>7}  diagnosis"
            print(header)
            zero_loss = {}  # cause -> (logged stats, your diagnosis)
            for cause in ZERO_LOSS_CAUSES:
                try:
                    stats = reproduce_zero_loss(cause, policy, tokenizer, task, config=config, **mine)  # your functions
                except ValueError as err:  # e.g. no all-correct group in the pool for a weak warm start
                    print(f"{cause:<14}could not be reproduced here: {err}")
                    continue
                verdict = diagnose_zero_loss(stats)
                zero_loss[cause] = (stats, verdict)
                mark = "ok" if verdict in EXPECTED[cause] else f"<- expected {' or '.join(sorted(EXPECTED[cause]))}"
                print(f"{cause:<14}{stats['loss']:>9.2g}{stats['grad_norm']:>11.3g}"
                      f"{stats['frac_zero_std_groups']:>10.2f}{stats['frac_valid_tokens']:>8.2f}"
                      f"{stats['clip_frac']:>7.2f}  {verdict} {mark}")
            """),
        A.md("dapo-intro", """
            ## DAPO's pieces, one at a time (W08, W24, W25)

            Each comparison trains a fresh copy of the SFT policy for the same number of steps with one knob
            changed, against the first steps of the run above (same seed, same prompts). One exception: with one
            update per batch (μ = `num_iterations` = 1) the ratio is exactly 1 and the clip never acts, so
            symmetric clipping and clip-higher are compared with μ = 2 updates per batch. On a model this small
            and runs this short the effects are small and noisy; read the direction, not the size. When the warm
            start already solves almost every prompt (the share of groups with equal rewards printed above is
            then close to 100%), most groups carry no gradient and the curves barely differ: that is W11's
            zero-advantage case at work, and the reason DAPO samples dynamically.
            """),
        A.demo("demo-variants", """
            variants = {  # the clip only acts off-policy: those two runs take mu = 2 updates per batch
                "symmetric clip (mu = 2)": dict(num_iterations=2),
                "clip-higher (eps_high = 0.28, mu = 2)": dict(num_iterations=2, eps_high=0.28),
                "dynamic sampling": dict(dynamic_sampling=True),
                "sequence aggregation (GRPO)": dict(aggregation="sequence"),
                "KL in the loss (beta = 0.04)": dict(beta=0.04),
            }
            short = replace(config, steps=VARIANT_STEPS, eval_every=max(1, VARIANT_STEPS // 2))
            runs = {"baseline (symmetric, token, no KL)": main_run}
            for name, knobs in variants.items():
                runs[name] = train_grpo(replace(short, **knobs), policy=copy.deepcopy(policy), tokenizer=tokenizer,
                                        task=task, live=False, **mine)
                if runs[name].interrupted:
                    break


            def compare(ax, key, names, ylabel):
                for name in names:
                    steps, values = runs[name].series(key)
                    keep = [i for i, s in enumerate(steps) if s <= VARIANT_STEPS]
                    ax.plot([steps[i] for i in keep], [values[i] for i in keep], label=name)
                ax.set_xlabel("step")
                ax.set_ylabel(ylabel)
                ax.legend(fontsize=8)


            base = "baseline (symmetric, token, no KL)"
            fig, axes = plt.subplots(2, 2, figsize=(12, 8))
            compare(axes[0, 0], "stats/entropy", ["symmetric clip (mu = 2)", "clip-higher (eps_high = 0.28, mu = 2)"],
                    "policy entropy (nats / token)")
            axes[0, 0].set_title("W24/W25: clip-higher against entropy collapse")
            compare(axes[0, 1], "stats/frac_zero_std_groups", [base, "dynamic sampling"],
                    "groups with equal rewards (fraction, before filtering)")
            axes[0, 1].set_title("dynamic sampling trains only on informative groups")
            compare(axes[1, 0], "stats/completion_len", [base, "sequence aggregation (GRPO)"],
                    "completion length (tokens)")
            axes[1, 0].set_title("token vs sequence aggregation: response length")
            compare(axes[1, 1], "stats/kl_k3_token", [base, "KL in the loss (beta = 0.04)"], "k3 KL to the SFT policy (nats / token)")
            axes[1, 1].set_title("W08: KL penalty vs none")
            fig.tight_layout()
            plt.show()
            for name, run in runs.items():  # every run at the same point: its last evaluation by VARIANT_STEPS
                at_steps, accuracy = run.series("eval/accuracy")
                last = max(i for i, s in enumerate(at_steps) if s <= VARIANT_STEPS)
                print(f"{name:<38} accuracy {accuracy[0]:.3f} -> {accuracy[last]:.3f} at step {at_steps[last]}")
            """),
        A.md("dapo-summary", """
            **What to look for, and why.**

            * **Clip-higher (W25).** With ε = 0.2 a token of probability 0.01 can only rise to 0.012 in one
              update, while one at 0.9 can reach 1.08 (DAPO, arXiv 2503.14476, Sec. 3.1): the clip starves the
              unlikely tokens that exploration needs. Raising only the upper bound (ε_high = 0.28) lets them grow
              while keeping the lower bound that guards against collapse; the entropy curve falls more slowly.
            * **Entropy collapse (W24).** Under policy gradient the entropy changes with
              $-\\mathrm{Cov}(\\log\\pi(a), A(a))$: confident tokens that get positive advantage sharpen the
              distribution further ("The Entropy Mechanism of RL for Reasoning LMs", arXiv 2505.22617, which
              measured a 73% entropy drop in the first ~200 steps). Once entropy is gone, the groups stop varying
              and learning stalls.
            * **Dynamic sampling.** Groups with equal rewards contribute nothing (the zero-advantage case above);
              DAPO over-samples and keeps only groups with 0 < #correct < G, so every batch is informative.
            * **Token vs sequence aggregation.** Per-sequence means give each *sequence* the same weight, so a long
              wrong answer is penalised less per token and long rambling is cheap (Dr. GRPO, arXiv 2503.20783,
              calls this length bias); per-token aggregation weighs every token equally. Arithmetic answers are a
              few tokens long, so expect little difference in length here.
            * **KL vs no KL (W08).** DAPO drops the KL term: for long chain-of-thought RL the policy is *meant* to
              move far from the SFT model, and the clipped ratio against π_old already bounds each update (a
              trust region per step). Stability comes from clip-higher, dynamic sampling, token-level loss and
              overlong shaping instead. With β > 0 the KL curve should stay lower, but β = 0.04 is a weak pull:
              over 120 steps notebook 06 measured a mean k3 KL of 0.056 nats/token with it and 0.047-0.062 without.
            """),
        A.md("gspo-intro", """
            ## GSPO: one ratio per sequence (W20)

            The reward is given per sequence, yet GRPO's ratio is per token: one noisy token can be clipped (or
            not) independently of its sequence. GSPO (Qwen, arXiv 2507.18071) uses the length-normalised sequence
            ratio $s_i = (\\pi_\\theta(o_i|q)/\\pi_\\text{old}(o_i|q))^{1/|o_i|}$ — the geometric mean of the token
            ratios — and clips it per sequence (with ranges around 3e-4/4e-4 instead of 0.2). Below: after a few
            gradient steps on one batch (your `grpo_loss`), the spread of the per-token ratios against the
            sequence ratios of the same samples. (The trainer also runs GSPO: `GRPOConfig(importance_level="sequence")`.
            The "DSPO" of the interview question is a related sequence-level method for agentic search,
            arXiv 2510.09255.)
            """),
        A.demo("demo-gspo", """
            token_ratios, seq_ratios = ratio_spread(copy.deepcopy(policy), tokenizer, task, config, **mine)
            fig, ax = plt.subplots(figsize=(7, 4))
            ax.hist(token_ratios.log().numpy(), bins=50, alpha=0.6, density=True, label="per token: log ρ_t")
            ax.hist(seq_ratios.log().numpy(), bins=50, alpha=0.6, density=True, label="per sequence: log s_i (GSPO)")
            ax.set_xlabel("log importance ratio (nats)")
            ax.set_ylabel("density")
            ax.set_title("Token ratios vs GSPO's sequence ratio after a few updates on one batch")
            ax.legend()
            plt.show()
            print(f"std of log ratio: per token {token_ratios.log().std():.4f}, per sequence {seq_ratios.log().std():.4f}")
            """),
        A.md("reproduce", """
            ## Reproduce from a terminal

            * the training run, with the reference functions: `python -m rlprep.trainers.grpo --profile cpu`
              (prints the held-out accuracy curve, and the start and end accuracy ± one standard error;
              measured: 0.524 ± 0.022 → 0.774 ± 0.019 in 400 steps; override any setting with
              `--set KEY=VALUE`, e.g. `--set seed=1`);
            * this whole notebook's demos, unattended: `RLPREP_PROFILE=cpu jupyter nbconvert --to notebook
              --execute solutions/lab05_grpo/lab05_grpo.ipynb --output /tmp/lab05_cpu.ipynb` (the reference answers);
            * the grading of your copy: `rlprep grade labs/lab05_grpo/lab05_grpo.ipynb`.
            """),
        *A.grade_yourself_cells(LAB),
    ]


def build(root=None):
    """Write ``solutions/<LAB>/<LAB>.ipynb`` under ``root`` (default: this checkout)."""
    return A.build_solution(LAB, cells(), root)


if __name__ == "__main__":
    print(build())
