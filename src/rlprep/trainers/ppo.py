"""PPO-RLHF on the reviews task against the reward model, with a per-token KL penalty to the SFT reference.

The loop (InstructGPT, Ouyang et al. 2022, arXiv 2203.02155, Eq. 2; PPO, Schulman et al. 2017, arXiv
1707.06347, Eq. 7 and 9; GAE, Schulman et al. 2015, arXiv 1506.02438, Eq. 16):

1. **rollouts**: sample one completion per prompt from the policy;
2. **score**: RM score of ``prompt + completion + eos``; the gold score is logged, never trained on;
3. ``kl_penalized_rewards``: −kl_coef·(log π − log π_ref) on every valid token (the k1 estimate), plus the RM
   score on the last valid token;
4. **values** from the critic; ``compute_gae_tokens`` turns rewards and values into advantages and returns;
5. ``ppo_epochs`` passes over shuffled minibatches: ``ppo_clip_loss`` + ``vf_coef`` · ``value_loss``
   − ``entropy_coef`` · entropy, with gradient clipping.

**Critic design**: a *separate* GPT-2 trunk with a scalar head per token (:class:`ValueModel`), initialised from
the reward model's trunk as in InstructGPT (Sec. 3.5: "we initialize the value function from the RM"). A separate
trunk keeps the value regression from pulling on the policy's features; at this size the extra forward pass is
cheap. The value of completion token t is read at the position that *predicts* token t (the state before it).

The five graded functions are injectable keyword arguments (default: ``rlprep.algos.ppo``). For lab01, a
row-wise numpy ``compute_gae(rewards, values, dones, last_value, gamma, lam)`` can replace
``compute_gae_tokens`` (see :func:`gae_tokens_from_rowwise`).

Run: ``python -m rlprep.trainers.ppo --profile cpu [--kl-sweep]``.
"""

from __future__ import annotations

import copy
import functools
import math
import time
from dataclasses import asdict, dataclass, replace
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from rlprep.algos import ppo as algos_ppo
from rlprep.live import History, run_steps
from rlprep.profiles import Profile
from rlprep.model_inputs import position_ids_from_mask
from rlprep.trainers.config import TrainerConfig
from rlprep.trainers.sequences import (autocast, completion_logprobs, frozen_copy, held_out_prompts,
                                       start_policy, unwrap_model)


class ValueModel(nn.Module):
    """The critic: a GPT-2 trunk and a scalar head per position. ``forward(ids [B, L], attn [B, L], C) -> [B, C]``:
    the value of each of the last C tokens, read at the position that predicts it."""

    def __init__(self, trunk: nn.Module, hidden_size: int):
        super().__init__()
        self.trunk = trunk
        self.head = nn.Linear(hidden_size, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    @classmethod
    def from_trunk(cls, trunk: nn.Module, hidden_size: int) -> "ValueModel":
        return cls(copy.deepcopy(trunk), hidden_size)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, n_completion: int) -> torch.Tensor:
        with autocast(input_ids.device):
            hidden = self.trunk(input_ids=input_ids, attention_mask=attention_mask,
                                position_ids=position_ids_from_mask(attention_mask)).last_hidden_state  # (B, L, H)
        hidden = hidden[:, -n_completion - 1:-1]  # (B, C, H): the state before each completion token
        return self.head(hidden.float()).squeeze(-1)  # (B, C)


def gae_tokens_from_rowwise(compute_gae: Callable) -> Callable:
    """Adapt lab01's numpy ``compute_gae(rewards, values, dones, last_value, gamma, lam) -> (adv, ret)`` (1-D
    arrays) to the token-level contract ``(rewards [B, T], values [B, T], mask [B, T], gamma, lam)``.

    Each row's valid tokens form one episode that ends at its last valid token (``dones[-1] = 1``, nothing
    bootstrapped); invalid positions get advantage 0 and return = value.
    """

    def compute_gae_tokens(rewards, values, mask, gamma=1.0, lam=0.95):
        advantages = torch.zeros_like(rewards)
        r_np = rewards.detach().float().cpu().numpy()
        v_np = values.detach().float().cpu().numpy()
        m_np = mask.detach().cpu().numpy() > 0
        for b in range(rewards.shape[0]):
            idx = np.nonzero(m_np[b])[0]
            if len(idx) == 0:
                continue
            dones = np.zeros(len(idx))
            dones[-1] = 1.0
            adv, _ = compute_gae(r_np[b, idx].astype(np.float64), v_np[b, idx].astype(np.float64), dones, 0.0,
                                 gamma=gamma, lam=lam)
            advantages[b, torch.as_tensor(idx, device=rewards.device)] = torch.as_tensor(
                np.asarray(adv, dtype=np.float32), device=rewards.device)
        return advantages, advantages + values * mask

    return compute_gae_tokens


@dataclass
class PPOConfig(TrainerConfig):
    """Budget and knobs of one PPO-RLHF run. ``PPOConfig.for_profile("cpu")`` gives the lab's defaults."""

    steps: int = 4
    """PPO rounds (rollouts + ``ppo_epochs`` passes)."""
    batch_size: int = 16
    """Rollouts (prompts) per round."""
    minibatch_size: int = 8
    """Rollouts per gradient step; must divide ``batch_size``."""
    ppo_epochs: int = 2
    """Passes over each round's rollouts."""
    max_new_tokens: int = 24
    """Completion budget in tokens."""
    temperature: float = 1.0
    """Sampling temperature (1.0: the ratio's behaviour policy is the policy itself)."""
    lr: float = 5e-5
    """AdamW learning rate of the policy."""
    critic_lr: float = 1e-4
    """AdamW learning rate of the critic."""
    kl_coef: float = 0.05
    """β of the per-token k1 KL penalty to the SFT reference (InstructGPT Eq. 2, spread over tokens; TRL's PPO default 0.05)."""
    clip_eps: float = 0.2
    """PPO ratio clip ε (Schulman et al. 2017 found 0.2 best)."""
    value_clip: float = 0.2
    """Value clip range around the old values."""
    vf_coef: float = 0.5
    """Weight of the value loss in the summed loss."""
    entropy_coef: float = 0.0
    """Weight of the entropy bonus (0 = off)."""
    gamma: float = 1.0
    """Discount per token (1.0: the RM score is an undiscounted episode return)."""
    gae_lambda: float = 0.95
    """GAE λ (0 = one-step TD, 1 = Monte-Carlo return minus baseline)."""
    whiten_advantages: bool = True
    """Normalise advantages to zero mean, unit variance over valid tokens in each round."""
    max_grad_norm: float = 1.0
    """Gradient clipping threshold (policy and critic separately)."""
    eval_every: int = 0
    """Held-out gold-reward evaluation every this many steps (0: only at start and end)."""
    eval_prompts: int = 128
    """Held-out prompts for the start/end gold-reward comparison."""
    plot_keys: tuple[str, ...] = ("reward/rm", "reward/gold", "stats/kl_k1_seq", "stats/clipfrac_two_sided", "stats/entropy",
                                  "loss/value")
    """Metrics on the live plot."""
    plot_every: int = 5
    """Redraw the live plot every this many steps."""

    def checks(self) -> list[tuple[bool, str]]:
        return super().checks() + [
            (self.steps >= 0, f"steps must be >= 0, got {self.steps}"),
            (self.batch_size >= 1, f"batch_size must be >= 1, got {self.batch_size}"),
            (1 <= self.minibatch_size <= self.batch_size and self.batch_size % self.minibatch_size == 0,
             f"minibatch_size ({self.minibatch_size}) must divide batch_size ({self.batch_size})"),
            (self.ppo_epochs >= 1, f"ppo_epochs must be >= 1, got {self.ppo_epochs}"),
            (self.max_new_tokens >= 1, f"max_new_tokens must be >= 1, got {self.max_new_tokens}"),
            (self.temperature > 0, f"temperature must be > 0, got {self.temperature}"),
            (self.lr > 0 and self.critic_lr > 0, "lr and critic_lr must be > 0"),
            (self.kl_coef >= 0, f"kl_coef must be >= 0, got {self.kl_coef}"),
            (0 < self.clip_eps < 1, f"clip_eps must be in (0, 1), got {self.clip_eps}"),
            (self.value_clip > 0, f"value_clip must be > 0, got {self.value_clip}"),
            (self.vf_coef >= 0 and self.entropy_coef >= 0, "vf_coef and entropy_coef must be >= 0"),
            (0 <= self.gamma <= 1, f"gamma must be in [0, 1], got {self.gamma}"),
            (0 <= self.gae_lambda <= 1, f"gae_lambda must be in [0, 1], got {self.gae_lambda}"),
            (self.max_grad_norm > 0, f"max_grad_norm must be > 0, got {self.max_grad_norm}"),
            (self.eval_every >= 0, f"eval_every must be >= 0, got {self.eval_every}"),
            (self.eval_prompts >= 2, f"eval_prompts must be >= 2, got {self.eval_prompts}"),
        ]

    @classmethod
    def budget(cls, p: Profile) -> dict:
        """smoke: seconds; cpu: a few minutes on 2 cores (the lab's gold-reward target); gpu: larger batches."""
        if p.name == "smoke":
            base = dict(steps=4, batch_size=16, minibatch_size=8, lr=1e-4, eval_prompts=32)
        elif p.name == "cpu":
            base = dict(steps=60, batch_size=32, minibatch_size=16, lr=5e-5, eval_prompts=256, eval_every=20)
        else:
            base = dict(steps=int(50 * p.scale), batch_size=128, minibatch_size=32, lr=2e-5, eval_prompts=1024,
                        eval_every=50)
        return dict(base, max_new_tokens=min(48, p.n_positions - 24))  # prompt <= 21 chars + completion


class PPOTrainer:
    """Policy, reference, critic, reward model, optimizers and the injected functions; ``step()`` = one round."""

    def __init__(self, config: PPOConfig, policy=None, tokenizer=None, reward_model=None, task=None, *,
                 masked_mean: Callable | None = None, kl_penalized_rewards: Callable | None = None,
                 compute_gae_tokens: Callable | None = None, ppo_clip_loss: Callable | None = None,
                 value_loss: Callable | None = None, compute_gae: Callable | None = None,
                 text_metrics: Callable | None = None):
        from rlprep.tinyworld import get_task, load_policy
        from rlprep.trainers.reward_model import load_reward_model

        self.config = config
        self.profile, self.device, self.policy, self.tokenizer = start_policy(config, policy, tokenizer,
                                                                                    lambda p: load_policy("reviews", p))
        if reward_model is None:
            reward_model = load_reward_model(self.profile, tokenizer=self.tokenizer)
        self.task = task if task is not None else get_task("reviews")
        self.reference = frozen_copy(self.policy)
        self.reward_model = reward_model.to(self.device).eval()
        self.critic = ValueModel.from_trunk(reward_model.trunk, self.policy.config.n_embd).to(self.device).train()
        self.masked_mean = masked_mean or algos_ppo.masked_mean
        self.kl_penalized_rewards = kl_penalized_rewards or algos_ppo.kl_penalized_rewards
        if compute_gae is not None and compute_gae_tokens is not None:
            raise ValueError("pass compute_gae (row-wise, numpy) or compute_gae_tokens, not both")
        self.compute_gae_tokens = (gae_tokens_from_rowwise(compute_gae) if compute_gae is not None
                                   else compute_gae_tokens or algos_ppo.compute_gae_tokens)
        # The references validate their input by reading values on the host (a device sync per call); the loop
        # feeds them its own tensors, so it turns that off. A learner's injected function is called as written.
        self.ppo_clip_loss = ppo_clip_loss or functools.partial(algos_ppo.ppo_clip_loss, validate=False)
        self.value_loss = value_loss or functools.partial(algos_ppo.value_loss, validate=False)
        self.text_metrics = text_metrics
        """Optional ``text_metrics(prompts, texts) -> flat dict`` logged every round (what the policy writes)."""
        self.optimizer = torch.optim.AdamW(self.policy.parameters(), lr=config.lr, weight_decay=0.0)
        self.critic_optimizer = torch.optim.AdamW(self.critic.parameters(), lr=config.critic_lr, weight_decay=0.0)
        self.rng = np.random.default_rng(config.seed)
        self.eval_prompts = held_out_prompts(self.task, config.eval_prompts, seed=config.seed + 1)
        self._round = 0

    def _train_prompts(self, n: int) -> list[str]:
        examples = self.task.sample(n, split="train", seed=int(self.config.seed * 1_000_003 + self._round))
        self._round += 1
        return [ex.prompt if hasattr(ex, "prompt") else ex for ex in examples]

    @torch.no_grad()
    def evaluate(self, prompts: list[str] | None = None, seed: int = 0) -> dict[str, float]:
        """Gold and RM reward of one sample per held-out prompt, with standard errors."""
        from rlprep.rollout import generate

        prompts = prompts or self.eval_prompts
        self.policy.eval()
        out = generate(unwrap_model(self.policy), self.tokenizer, prompts, max_new_tokens=self.config.max_new_tokens,
                       temperature=self.config.temperature, seed=seed)
        self.policy.train()
        gold = torch.tensor([self.task.gold_score(p, t) for p, t in zip(prompts, out.texts)], dtype=torch.float32)
        rm = self.reward_model.score(self.tokenizer, prompts, out.texts)
        n = len(prompts)
        return {"eval/gold": float(gold.mean()), "eval/gold_se": float(gold.std() / math.sqrt(n)),
                "eval/rm": float(rm.mean()), "eval/rm_se": float(rm.std() / math.sqrt(n))}

    def step(self) -> dict[str, float]:
        from rlprep.rollout import generate

        cfg = self.config
        t0 = time.perf_counter()
        prompts = self._train_prompts(cfg.batch_size)
        self.policy.eval()
        with torch.no_grad():
            out = generate(unwrap_model(self.policy), self.tokenizer, prompts, max_new_tokens=cfg.max_new_tokens,
                           temperature=cfg.temperature, seed=int(self.rng.integers(2**31)))
        self.policy.train()
        C = out.completion_ids.shape[1]
        ids, attn = out.input_ids.to(self.device), out.attention_mask.to(self.device)  # (B, P+C)
        mask = out.completion_mask.to(self.device).float()  # (B, C)
        with torch.no_grad():
            logp_old = completion_logprobs(self.policy, ids, attn, C)  # (B, C)
            ref_logp = completion_logprobs(self.reference, ids, attn, C)  # (B, C)
            old_values = self.critic(ids, attn, C) * mask  # (B, C)
            score = self.reward_model.score(self.tokenizer, prompts, out.texts).to(self.device)  # (B,)
            gold = torch.tensor([self.task.gold_score(p, t) for p, t in zip(prompts, out.texts)])
            rewards = self.kl_penalized_rewards(score, logp_old, ref_logp, mask, cfg.kl_coef)  # (B, C)
            advantages, returns = self.compute_gae_tokens(rewards, old_values, mask, gamma=cfg.gamma, lam=cfg.gae_lambda)
            if cfg.whiten_advantages:
                mean = self.masked_mean(advantages, mask)
                var = self.masked_mean((advantages - mean) ** 2, mask)
                advantages = (advantages - mean) * torch.rsqrt(var + 1e-8) * mask
            kl_seq = ((logp_old - ref_logp) * mask).sum(-1)  # (B,) k1 per sequence
            ret_valid, val_valid = returns[mask.bool()], old_values[mask.bool()]
            explained_var = float(1 - (ret_valid - val_valid).var() / ret_valid.var().clamp(min=1e-8))
        t_rollout = time.perf_counter() - t0
        sums: dict[str, float] = {}
        n_updates = 0
        for _ in range(cfg.ppo_epochs):
            perm = torch.randperm(cfg.batch_size, generator=torch.Generator().manual_seed(int(self.rng.integers(2**31))))
            for start in range(0, cfg.batch_size, cfg.minibatch_size):
                mb = perm[start:start + cfg.minibatch_size].to(self.device)
                stats = self._update(ids[mb], attn[mb], mask[mb], C, logp_old[mb], old_values[mb],
                                     advantages[mb], returns[mb])
                for k, v in stats.items():
                    sums[k] = sums.get(k, 0.0) + v
                n_updates += 1
        metrics = {k: v / n_updates for k, v in sums.items()}
        metrics.update({"reward/rm": float(score.mean()), "reward/gold": float(gold.mean()),
                        "reward/total": float((rewards * mask).sum(-1).mean()),
                        "stats/kl_k1_seq": float(kl_seq.mean()), "stats/explained_var": explained_var,
                        "stats/completion_len": float(mask.sum(-1).mean()),
                        "time/rollout_s": t_rollout, "time/update_s": time.perf_counter() - t0 - t_rollout})
        if self.text_metrics is not None:
            metrics.update(self.text_metrics(prompts, out.texts))
        return metrics

    def _update(self, ids, attn, mask, C, logp_old, old_values, advantages, returns) -> dict[str, float]:
        cfg = self.config
        logp, entropy = completion_logprobs(self.policy, ids, attn, C, with_entropy=True)  # (b, C) each
        values = self.critic(ids, attn, C)  # (b, C)
        pg_loss = self.ppo_clip_loss(logp, logp_old, advantages, mask, clip_eps=cfg.clip_eps)
        vf_loss = self.value_loss(values, old_values, returns, mask, clip_range=cfg.value_clip)
        entropy_mean = self.masked_mean(entropy, mask)
        loss = pg_loss + cfg.vf_coef * vf_loss - cfg.entropy_coef * entropy_mean
        self.optimizer.zero_grad(set_to_none=True)
        self.critic_optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.policy.parameters(), cfg.max_grad_norm))
        torch.nn.utils.clip_grad_norm_(self.critic.parameters(), cfg.max_grad_norm)
        self.optimizer.step()
        self.critic_optimizer.step()
        with torch.no_grad():
            log_ratio = logp.detach() - logp_old  # (b, C)
            clipped = (log_ratio.exp() - 1).abs() > cfg.clip_eps
            return {"loss/policy": float(pg_loss.detach()), "loss/value": float(vf_loss.detach()),
                    "stats/entropy": float(entropy_mean.detach()),
                    "stats/clipfrac_two_sided": float(self.masked_mean(clipped.float(), mask)),
                    "stats/approx_kl": float(self.masked_mean(0.5 * log_ratio ** 2, mask)),
                    "stats/grad_norm": grad_norm}


def train_ppo(config: PPOConfig | None = None, *, policy=None, tokenizer=None, reward_model=None, task=None,
              masked_mean: Callable | None = None, kl_penalized_rewards: Callable | None = None,
              compute_gae_tokens: Callable | None = None, ppo_clip_loss: Callable | None = None,
              value_loss: Callable | None = None, compute_gae: Callable | None = None,
              text_metrics: Callable | None = None, callbacks: Sequence[Callable] = (),
              live: bool | None = None, label: str | None = None) -> History:
    """PPO-RLHF on reviews, training ``policy`` (default: the reviews SFT policy) in place against
    ``reward_model`` (default: :func:`~rlprep.trainers.reward_model.load_reward_model`, cached).

    The graded functions default to ``rlprep.algos.ppo``; ``compute_gae`` (lab01's numpy row-wise function)
    replaces ``compute_gae_tokens`` when given. ``text_metrics(prompts, texts) -> dict`` (optional) adds
    metrics about the sampled text to every round (e.g. :func:`rlprep.demos.reward_hacking.review_features`).
    ``label`` names the run on its progress bar and plot (default ``ppo kl=<kl_coef>``).
    ``history.meta`` holds the held-out gold reward of the SFT start
    and of the trained policy with standard errors, and ``gold_gain_se`` = their difference in standard errors.
    """
    config = config or PPOConfig.for_profile()
    trainer = PPOTrainer(config, policy, tokenizer, reward_model, task, masked_mean=masked_mean,
                         kl_penalized_rewards=kl_penalized_rewards, compute_gae_tokens=compute_gae_tokens,
                         ppo_clip_loss=ppo_clip_loss, value_loss=value_loss, compute_gae=compute_gae,
                         text_metrics=text_metrics)
    history = History(meta={"config": asdict(config), "trainer": "ppo"})
    t0 = time.perf_counter()
    eval_seed = config.seed + 12345  # the same sampling seed at start and end: a paired comparison
    history.append({"step": 0, **trainer.evaluate(seed=eval_seed)})

    def step_fn(step: int) -> dict:
        metrics = trainer.step()
        if config.eval_every and step % config.eval_every == 0 and step != config.steps:
            metrics.update(trainer.evaluate(seed=eval_seed))
        return metrics

    run_steps(step_fn, config.steps, model=trainer.policy, run_dir=config.run_dir, plot_keys=config.plot_keys,
              plot_every=config.plot_every, callbacks=callbacks, desc=label or f"ppo kl={config.kl_coef:g}", live=live,
              history=history, start_step=1)
    end = trainer.evaluate(seed=eval_seed)
    history[-1].update(end)
    start = history[0]
    se = math.sqrt(start["eval/gold_se"] ** 2 + end["eval/gold_se"] ** 2)
    history.meta.update({"gold_start": start["eval/gold"], "gold_start_se": start["eval/gold_se"],
                         "gold_end": end["eval/gold"], "gold_end_se": end["eval/gold_se"],
                         "rm_start": start["eval/rm"], "rm_end": end["eval/rm"],
                         "gold_gain_se": (end["eval/gold"] - start["eval/gold"]) / se if se > 0 else float("nan"),
                         "kl_end": history.last("stats/kl_k1_seq"), "wall_s": time.perf_counter() - t0})
    history.trainer = trainer
    return history


def kl_sweep(kl_coefs: Sequence[float] = (0.0, 0.01, 0.05, 0.2), config: PPOConfig | None = None, *,
             policy=None, tokenizer=None, reward_model=None, live: bool | None = False, **functions) -> list[dict]:
    """One PPO run per kl_coef from a fresh copy of the SFT policy: final RM reward, gold reward and KL per row.
    Reward hacking shows as RM reward rising while gold falls at low kl_coef (Gao et al. 2022, arXiv 2210.10760);
    :func:`rlprep.demos.reward_hacking.hacking_sweep` runs it against a weak proxy RM and names the hack."""
    from rlprep.tinyworld import load_policy
    from rlprep.trainers.reward_model import load_reward_model

    config = config or PPOConfig.for_profile()
    if policy is None:
        policy, tokenizer = load_policy("reviews", config.profile)
    reward_model = reward_model or load_reward_model(config.profile, tokenizer=tokenizer)
    rows = []
    for kl_coef in kl_coefs:
        run_dir = config.run_dir and f"{config.run_dir}/kl_coef={kl_coef:g}"  # one folder per run of the sweep
        h = train_ppo(replace(config, kl_coef=float(kl_coef), run_dir=run_dir), policy=copy.deepcopy(policy),
                      tokenizer=tokenizer, reward_model=reward_model, live=live, **functions)
        rows.append({"kl_coef": float(kl_coef), **{k: h.meta[k] for k in
                     ("rm_start", "rm_end", "gold_start", "gold_end", "gold_end_se", "kl_end", "gold_gain_se")},
                     "history": h})
        if h.interrupted:
            break
    return rows


if __name__ == "__main__":  # the same command as `rlprep train ppo ...` (errors, exit codes)
    import sys

    from rlprep.cli import main

    raise SystemExit(main(["train", "ppo", *sys.argv[1:]]))
