"""GRPO/DAPO trainer on the smoke arithmetic policy: smoke run, it learns, injection is wired, W11 causes, interrupts."""

from __future__ import annotations

import copy

import pytest
import torch

from rlprep.algos.grpo import diagnose_zero_loss, grpo_loss
from rlprep.live import History
from rlprep.tinyworld import get_task, load_policy
from rlprep.demos.zero_loss import reproduce_zero_loss, zero_loss_stats
from rlprep.tinyworld.tasks.arithmetic import sample_success_rates
from rlprep.trainers.grpo import GRPOConfig, train_grpo

LOGGED = ("reward/mean", "loss/policy", "stats/grad_norm", "stats/frac_zero_std_groups", "stats/frac_valid_tokens",
          "stats/clipfrac_one_sided", "stats/entropy", "stats/kl_k3_token", "stats/completion_len")


@pytest.fixture(scope="module")
def sft():
    policy, tokenizer = load_policy("arithmetic", "smoke")
    return policy, tokenizer


@pytest.fixture(scope="module")
def fixed_prompts(sft):
    """The 8 training prompts (of 128) the warm start is least sure of, among those it sometimes gets right."""
    policy, tokenizer = sft
    task = get_task("arithmetic")
    pool = [e.prompt for e in task.sample(128, split="train", seed=11)]
    rates = sample_success_rates(policy, tokenizer, task, pool, 16, max_new_tokens=6, seed=0)
    ranked = sorted((r, p) for r, p in zip(rates, pool) if 0 < r < 1)
    assert len(ranked) >= 8, "the warm start is too sure of itself for this test; enlarge the pool"
    return [p for _, p in ranked[:8]]


def _fresh(sft):
    policy, tokenizer = sft
    return copy.deepcopy(policy), tokenizer


def _reward_trend(history: History, k: int = 4) -> tuple[float, float]:
    _, rewards = history.series("reward/mean")
    return sum(rewards[:k]) / k, sum(rewards[-k:]) / k


def test_config_validation_names_the_fix():
    with pytest.raises(ValueError, match="group_size must be >= 2"):
        GRPOConfig(group_size=1)
    with pytest.raises(ValueError, match="aggregation must be None or one of"):
        GRPOConfig(aggregation="tokens")
    with pytest.raises(ValueError, match="importance_level"):
        GRPOConfig(importance_level="seq")
    assert GRPOConfig.for_profile("smoke").batch_size == 64
    assert GRPOConfig.for_profile("cpu").steps > GRPOConfig.for_profile("smoke").steps


def test_smoke_run_logs_every_stat_and_diagnoses_on_policy_step_as_expected(sft):
    policy, tokenizer = _fresh(sft)
    cfg = GRPOConfig.for_profile("smoke", steps=2, eval_every=2, eval_size=16)
    h = train_grpo(cfg, policy=policy, tokenizer=tokenizer, live=False)
    assert not h.interrupted and [r["step"] for r in h] == [0, 1, 2]
    for key in LOGGED:
        assert all(key in r for r in h[1:]), key
    assert "eval/accuracy" in h[0] and "eval/accuracy" in h[-1]
    first = h[1]
    # on-policy, mu = 1, beta = 0: the ratio is exactly 1, nothing is clipped, and the gradient is not zero.
    # The reference is the policy's frozen copy: same weights, but torch 2.13 on CPU picks another matmul kernel
    # for parameters without requires_grad, so its log-probs differ in the 6th digit and k3 is 0 only to ~1e-9.
    assert first["stats/clipfrac_one_sided"] == 0.0 and first["stats/approx_kl"] == 0.0
    assert first["stats/kl_k3_token"] == pytest.approx(0.0, abs=1e-8)
    assert diagnose_zero_loss(zero_loss_stats(first, cfg)) == "expected"


def test_grpo_raises_reward_on_a_fixed_prompt_set_and_a_sign_flip_lowers_it(sft, fixed_prompts):
    cfg = GRPOConfig.for_profile("smoke", steps=16, lr=3e-4, eval_every=100, eval_size=8, log_kl=False)
    source = lambda n, i: fixed_prompts  # noqa: E731
    policy, tokenizer = _fresh(sft)
    h = train_grpo(cfg, policy=policy, tokenizer=tokenizer, prompt_source=source, live=False)
    start, end = _reward_trend(h)
    assert end > start + 0.1, (start, end)

    def flipped(*args, **kwargs):  # a learner's sign error: ascends the loss instead of descending it
        return -grpo_loss(*args, **kwargs)

    policy, tokenizer = _fresh(sft)
    h_bad = train_grpo(cfg, policy=policy, tokenizer=tokenizer, prompt_source=source, grpo_loss=flipped,
                       live=False)
    bad_start, bad_end = _reward_trend(h_bad)
    assert bad_end < bad_start and bad_end < end - 0.15, (bad_start, bad_end, end)


def test_injected_group_advantages_is_used(sft, fixed_prompts):
    calls = []

    def zero_advantages(rewards, group_size, scale="group", eps=1e-4):
        calls.append((rewards.shape, group_size, scale))
        return torch.zeros_like(rewards)

    policy, tokenizer = _fresh(sft)
    before = [p.detach().clone() for p in policy.parameters()]
    cfg = GRPOConfig.for_profile("smoke", steps=2, eval_every=100, eval_size=4, scale_rewards="batch")
    h = train_grpo(cfg, policy=policy, tokenizer=tokenizer, group_advantages=zero_advantages,
                   prompt_source=lambda n, i: fixed_prompts, live=False)
    assert calls == [(torch.Size([64]), 8, "batch")] * 2
    assert all(r["stats/grad_norm"] == 0.0 for r in h[1:])  # zero advantages, beta 0: no gradient at all
    assert all(torch.equal(a, b) for a, b in zip(before, policy.parameters()))


def test_options_mu_gspo_dynamic_sampling_and_kl_run(sft):
    policy, tokenizer = _fresh(sft)
    cfg = GRPOConfig.for_profile("smoke", steps=2, num_iterations=2, importance_level="sequence", beta=0.04,
                                 dynamic_sampling=True, eps_high=0.28, aggregation="sequence", eval_every=100,
                                 eval_size=4, lr=1e-3)
    h = train_grpo(cfg, policy=policy, tokenizer=tokenizer, live=False)
    rows = h[1:]
    assert all(r["stats/groups_used"] <= cfg.prompts_per_step for r in rows)
    # mu = 2: the second pass is off-policy, so the policy has moved away from the sampler and the reference
    assert any(r["stats/approx_kl"] > 0 for r in rows)
    assert rows[-1]["stats/kl_k3_token"] > 0


@pytest.mark.parametrize("cause, label", [
    ("on_policy", "expected"),
    ("all_truncated", "no_valid_tokens"),
    ("mask_bug", "no_valid_tokens"),
    ("too_hard", "zero_advantage"),
    ("too_easy", "zero_advantage"),
])
def test_each_zero_loss_cause_shows_its_signature_on_the_real_policy(sft, cause, label):
    policy, tokenizer = sft
    before = [p.detach().clone() for p in policy.parameters()]
    stats = reproduce_zero_loss(cause, policy, tokenizer, config=GRPOConfig.for_profile("smoke"))
    assert diagnose_zero_loss(stats) == label, stats
    assert abs(stats["loss"]) < 1e-6
    if label == "no_valid_tokens":  # W11: TRL's completions/clipped_ratio tells the truncation from the mask bug
        assert (stats["frac_truncated"] == 1.0) == (cause == "all_truncated"), stats
    assert all(torch.equal(a, b) for a, b in zip(before, policy.parameters()))  # the helper restores weights


def test_reproduce_zero_loss_runs_the_functions_it_is_given(sft):
    """A lab passes the learner's graded functions; the reproduction must use them, not the references."""
    from rlprep.algos.grpo import group_advantages

    policy, tokenizer = sft
    calls = {"group_advantages": 0, "grpo_loss": 0}

    def my_advantages(*args, **kwargs):
        calls["group_advantages"] += 1
        return group_advantages(*args, **kwargs)

    def my_loss(*args, **kwargs):
        calls["grpo_loss"] += 1
        return grpo_loss(*args, **kwargs)

    stats = reproduce_zero_loss("all_truncated", policy, tokenizer, config=GRPOConfig.for_profile("smoke"),
                                group_advantages=my_advantages, grpo_loss=my_loss)
    assert calls["group_advantages"] >= 1 and calls["grpo_loss"] >= 1, calls
    assert diagnose_zero_loss(stats) == "no_valid_tokens", stats

    def broken_loss(*args, **kwargs):
        raise RuntimeError("the learner's grpo_loss")

    with pytest.raises(RuntimeError, match="learner's grpo_loss"):
        reproduce_zero_loss("all_truncated", policy, tokenizer, config=GRPOConfig.for_profile("smoke"),
                            grpo_loss=broken_loss)


def test_interrupt_keeps_weights_and_saves_checkpoint_and_history(sft, tmp_path):
    policy, tokenizer = _fresh(sft)
    before = [p.detach().clone() for p in policy.parameters()]

    def stop(step, metrics, history):
        if step == 2:
            raise KeyboardInterrupt

    cfg = GRPOConfig.for_profile("smoke", steps=50, eval_every=100, eval_size=4, run_dir=str(tmp_path))
    h = train_grpo(cfg, policy=policy, tokenizer=tokenizer, callbacks=[stop], live=False)
    assert h.interrupted and h[-1]["step"] == 2
    assert not all(torch.equal(a, b) for a, b in zip(before, policy.parameters()))
    state = torch.load(tmp_path / "checkpoint.pt")["model"]
    assert all(torch.equal(state[k], v) for k, v in policy.state_dict().items())
    assert History.from_json(tmp_path / "history.json").interrupted and (tmp_path / "plot.png").exists()


@pytest.mark.slow
def test_cpu_profile_gains_ten_points_of_held_out_accuracy():
    """Slow (minutes, cpu profile): ``python -m rlprep.trainers.grpo --profile cpu`` prints the same figures."""
    h = train_grpo(GRPOConfig.for_profile("cpu"), live=False)
    assert h.meta["accuracy_end"] - h.meta["accuracy_start"] >= 0.10, h.meta


def test_warm_start_is_chosen_one_way_and_cli_overrides_are_typed():
    from rlprep.errors import RlprepError
    from rlprep.trainers.cli import parse_overrides

    with pytest.raises(ValueError, match="at most one of sft_steps"):
        GRPOConfig(sft_steps=100, sft_stop=50)
    with pytest.raises(ValueError, match="sft_stop_accuracy must be"):
        GRPOConfig(sft_stop_accuracy=1.5)
    assert GRPOConfig.for_profile("cpu").sft_stop_accuracy is not None
    picked = GRPOConfig.for_profile("cpu", sft_stop=275)  # an explicit choice replaces the profile's
    assert picked.sft_stop == 275 and picked.sft_stop_accuracy is None
    assert parse_overrides(GRPOConfig, ["lr=2e-4", "dynamic_sampling=true", "sft_steps=none", "steps=3",
                                        "plot_keys=reward/mean,eval/accuracy"]) == {
        "lr": 2e-4, "dynamic_sampling": True, "sft_steps": None, "steps": 3,
        "plot_keys": ("reward/mean", "eval/accuracy")}
    with pytest.raises(RlprepError, match="GRPOConfig has no field 'learning_rate'"):
        parse_overrides(GRPOConfig, ["learning_rate=1"])
    for bad in ("steps=2.5", "steps=none", "dynamic_sampling=maybe", "lr=abc"):  # typed from the field, not guessed
        with pytest.raises(RlprepError, match="must be"):
            parse_overrides(GRPOConfig, [bad])


def test_sft_stop_is_a_snapshot_of_the_full_run_not_a_shorter_run():
    """stop_after=k and stop_when(step k-1) give the same weights (the first k steps of the long schedule);
    a k-step run compresses its schedule and ends elsewhere."""
    from rlprep.profiles import get_profile
    from rlprep.tinyworld import build_tokenizer
    from rlprep.tinyworld.model import build_model
    from rlprep.tinyworld.sft import SFTConfig, train_sft

    tok, task = build_tokenizer(), get_task("arithmetic")

    def trained(config, **kw):
        model = build_model(get_profile("smoke"), tok, seed=0)
        metrics = train_sft(model, tok, task, config, **kw)
        return model.state_dict(), metrics["sft/steps"]

    base = dict(batch=8, lr=3e-3, warmup=2, seed=0)
    cut, n_cut = trained(SFTConfig(steps=10, stop_after=4, **base))
    when, n_when = trained(SFTConfig(steps=10, **base), stop_when=lambda step: step == 3)
    short, n_short = trained(SFTConfig(steps=4, **base))
    assert n_cut == n_when == n_short == 4
    assert all(torch.equal(cut[k], when[k]) for k in cut)
    assert not all(torch.equal(cut[k], short[k]) for k in cut)
    with pytest.raises(ValueError, match="stop_after"):
        SFTConfig(steps=10, stop_after=11, **base)


def test_sft_curve_reports_what_a_warm_start_would_offer():
    from rlprep.profiles import get_profile
    from rlprep.tinyworld.warm_start import sft_curve

    rows = sft_curve(get_profile("smoke"), stop=20, every=10)
    assert [r["step"] for r in rows] == [10, 20]
    for row in rows:
        assert all(0.0 <= row[k] <= 1.0 for k in ("test", "train_probe", "sampled", "mixed")), row


def test_trainer_without_a_given_policy_starts_from_the_warm_start_and_its_tokenizer():
    """train_grpo(config) with no policy (the notebooks' usual call) must take EOS from the loaded warm start's
    tokenizer, not from the ``tokenizer`` argument, which is None then (an AttributeError before the fix)."""
    from rlprep.trainers.grpo import GRPOTrainer

    trainer = GRPOTrainer(GRPOConfig.for_profile("smoke"))
    assert trainer.tokenizer is not None
    assert trainer.eos_id == trainer.tokenizer.eos_token_id
