"""The metric names the trainers log, one name per quantity, with units: the table behind ``docs/metrics.md`` and
the axis labels of :meth:`rlprep.live.History.plot`.

    python -m rlprep.metrics > docs/metrics.md      # after editing the table (a test checks they agree)

KL estimators follow Schulman 2020, "Approximating KL Divergence": k1 = log π/π_ref, k2 = ½ (log π/π_ref)²,
k3 = (r - 1) - log r with r = π_ref/π. A name says the estimator and what it is averaged over.
"""

from __future__ import annotations

METRICS: dict[str, tuple[str, str]] = {
    # name: (unit, what it is; which trainers log it)
    "loss/policy": ("loss units", "policy-gradient surrogate that was minimised (PPO, GRPO and the loops built on it)"),
    "loss/value": ("squared reward units", "critic's clipped value loss (PPO)"),
    "loss/dpo": ("nats", "DPO loss, -log σ(β Δ) averaged over pairs (ln 2 at step 0)"),
    "loss/bt": ("nats", "Bradley-Terry loss of the reward model, -log σ(r_c - r_r)"),
    "reward/mean": ("reward units", "mean verifier reward of the sampled completions (GRPO: fraction correct)"),
    "reward/rm": ("RM logits", "mean reward-model score of the sampled completions (PPO)"),
    "reward/gold": ("gold units", "mean hidden gold score of sampled completions (PPO, DPO); agentic: success rate"),
    "reward/gold_se": ("gold units", "standard error of reward/gold (DPO)"),
    "reward/total": ("RM logits", "per-sequence return PPO optimises: RM score minus the KL penalty"),
    "reward/proxy": ("reward units", "mean episode return under the reward spec being optimised (agentic)"),
    "reward/implicit_accuracy": ("fraction", "DPO pairs whose implicit reward β log π/π_ref ranks chosen first"),
    "reward/implicit_margin": ("nats", "mean implicit-reward margin, chosen minus rejected (DPO)"),
    "reward/implicit_chosen": ("nats", "mean implicit reward β log π/π_ref of the chosen completions (DPO)"),
    "reward/implicit_rejected": ("nats", "mean implicit reward of the rejected completions (DPO)"),
    "reward/rm_accuracy": ("fraction", "training pairs the reward model ranks chosen first (reward model)"),
    "reward/rm_margin": ("RM logits", "mean score margin r_c - r_r on the training batch (reward model)"),
    "logps/chosen": ("nats / sequence", "summed log π of the chosen completions (DPO)"),
    "logps/rejected": ("nats / sequence", "summed log π of the rejected completions (DPO)"),
    "stats/kl_k1_seq": ("nats / sequence", "KL(π‖π_ref): k1 summed over each sampled sequence, mean over sequences "
                                           "(PPO, DPO)"),
    "stats/kl_k1_seq_se": ("nats / sequence", "standard error of stats/kl_k1_seq (DPO)"),
    "stats/kl_k3_token": ("nats / token", "KL(π‖π_ref): k3 per token, mean over valid tokens (GRPO)"),
    "stats/kl_behavior": ("nats / token", "KL(μ‖π_θ) of the stale sampler μ: k1 per token, mean over valid tokens"),
    "stats/approx_kl": ("nats / token", "KL from the sampling policy to the updated one: k2 per token, mean over "
                                        "valid tokens (PPO, GRPO)"),
    "stats/clipfrac_two_sided": ("fraction", "tokens whose ratio left [1-ε, 1+ε] on either side (PPO)"),
    "stats/clipfrac_one_sided": ("fraction", "tokens whose gradient the running loss's own clip stops: ratio (the "
                                             "token's, or its row's for GSPO and RLOO) < 1-ε_low with A < 0, or "
                                             "> 1+ε_high with A > 0; 0 for CISPO, SAPO, REINFORCE (GRPO)"),
    "stats/entropy": ("nats / token", "entropy of the policy's next-token distribution, mean over valid tokens"),
    "stats/grad_norm": ("L2 norm", "gradient norm before clipping"),
    "stats/explained_var": ("fraction", "1 - Var(return - value) / Var(return) of the critic (PPO)"),
    "stats/completion_len": ("tokens", "mean completion length, eos included"),
    "stats/frac_zero_std_groups": ("fraction", "groups whose rewards are all equal: zero advantage (GRPO)"),
    "stats/frac_valid_tokens": ("fraction", "share of completion positions the loss scores"),
    "stats/frac_truncated": ("fraction", "completions that never emitted eos (GRPO)"),
    "stats/groups_used": ("groups", "prompt groups in the update after dynamic sampling (GRPO)"),
    "stats/ess": ("fraction", "effective sample size (Σw)² / (n Σw²) of the untruncated token weights (stale GRPO)"),
    "stats/weight_max": ("ratio", "largest untruncated token importance weight π_θ/μ (stale GRPO)"),
    "stats/truncfrac": ("fraction", "token weights truncated at the clip level C (stale GRPO)"),
    "stats/turns": ("turns", "mean turns per episode (agentic)"),
    "stats/valid_actions": ("fraction", "actions the environment could parse (agentic)"),
    "eval/accuracy": ("fraction", "held-out accuracy: greedy exact match (GRPO, colour QA) or pairwise preference "
                                  "(reward model)"),
    "eval/counterfactual_accuracy": ("fraction", "held-out accuracy on items whose colour is not the typical one"),
    "eval/accuracy_se": ("fraction", "binomial standard error of eval/accuracy (reward model)"),
    "eval/accuracy_gold": ("fraction", "held-out pairs the reward model orders as the gold scorer does"),
    "eval/pearson_gold": ("correlation", "Pearson r between reward-model and gold scores on held-out completions"),
    "eval/gold": ("gold units", "mean gold score of completions sampled for held-out prompts (PPO)"),
    "eval/gold_se": ("gold units", "standard error of eval/gold (PPO)"),
    "eval/rm": ("RM logits", "mean reward-model score of those completions (PPO)"),
    "eval/rm_se": ("RM logits", "standard error of eval/rm (PPO)"),
    "time/rollout_s": ("s", "wall time of the step's sampling"),
    "time/update_s": ("s", "wall time of the step's gradient updates"),
}
"""Metric name -> (unit, meaning)."""


def unit(key: str) -> str:
    """The unit of metric ``key`` ('' when the table does not list it)."""
    return METRICS.get(key, ("", ""))[0]


def markdown() -> str:
    """``docs/metrics.md``: the table as Markdown."""
    lines = ["# Metric names and units", "",
             "Every trainer logs flat, namespaced metrics (`rlprep.live.History`); one name means one quantity.",
             "This table is `rlprep.metrics.METRICS` (regenerate with `python -m rlprep.metrics > docs/metrics.md`);",
             "plot axes take their units from it. KL estimators: Schulman 2020, \"Approximating KL Divergence\".", "",
             "| name | unit | what it is |", "|---|---|---|"]
    lines += [f"| `{name}` | {u} | {meaning} |" for name, (u, meaning) in METRICS.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
