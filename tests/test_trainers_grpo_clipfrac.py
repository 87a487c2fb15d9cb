"""``stats/clipfrac_one_sided`` is the clip fraction of the loss that actually ran.

With ``loss_type`` the trainer runs a variant of the atlas (``PG_LOSSES``) with its own clip range and ratio level
(GSPO: 3e-4 / 4e-4 on the row's geometric-mean ratio; RLOO: 0.2 on the whole-sequence ratio; CISPO, SAPO and
REINFORCE: no clip that stops a gradient). The statistic must count what that loss clipped, not the config's
token-level +-0.2 (it logged 0.0 for GSPO while half of the sequences lay outside GSPO's band).

The oracle does not share code with the statistic: it is the share of valid tokens that the variant's own loss,
called directly with its defaults, gives no gradient at all (with A != 0 and beta = 0 a token gets exactly 0 only
when the clip on its gradient-stopping side binds).
"""

from __future__ import annotations

import copy

import pytest
import torch

from rlprep.algos.grpo import diagnose_zero_loss
from rlprep.algos.pg_losses import PG_LOSSES
from rlprep.tinyworld import get_task, load_policy
from rlprep.trainers.grpo import GRPOConfig, GRPOTrainer
from rlprep.trainers.sequences import completion_logprobs

# per-token spread of logp_old around the policy's log-probs: wide enough that some (not all) rows or tokens leave
# each variant's band; GSPO's band is 3e-4 / 4e-4 on a per-token geometric mean, so its spread is tiny
SPREAD = {"gspo": 1e-3}


@pytest.fixture(scope="module")
def sft():
    return load_policy("arithmetic", "smoke")


def _trainer_and_batch(sft, name: str):
    """A GRPOTrainer running ``name`` and one prepared batch whose ``logp_old`` is off the policy's log-probs."""
    policy, tokenizer = copy.deepcopy(sft[0]), sft[1]
    cfg = GRPOConfig.for_profile("smoke", steps=1, prompts_per_step=4, group_size=4, eval_size=4, log_kl=False,
                                 loss_type=name)
    trainer = GRPOTrainer(cfg, policy, tokenizer, get_task("arithmetic"))
    prompts = [ex.prompt for ex in get_task("arithmetic").sample(4, split="train", seed=5)]
    batch = trainer.prepare(*trainer.sample(prompts, seed=5))
    with torch.no_grad():
        logp = completion_logprobs(trainer.policy, batch["input_ids"], batch["attention_mask"], batch["C"])
    gen = torch.Generator().manual_seed(11)
    batch["logp_old"] = logp - SPREAD.get(name, 0.3) * torch.randn(logp.shape, generator=gen)  # (B, C)
    batch["advantages"] = torch.tensor([1.0, -1.0, 0.5, -2.0] * 4)  # (B,) no zero advantage
    return trainer, batch, logp


def _unmoved_fraction(name: str, logp, batch) -> float:
    """Share of valid tokens that ``PG_LOSSES[name]`` (its own defaults) gives exactly no gradient."""
    leaf = logp.clone().requires_grad_(True)
    loss = PG_LOSSES[name](leaf, batch["logp_old"], batch["advantages"], batch["mask"])
    (grad,) = torch.autograd.grad(loss, leaf)
    valid = batch["mask"].bool()
    return float((grad[valid] == 0).float().mean())


@pytest.mark.parametrize("name", sorted(PG_LOSSES))
def test_clipfrac_is_the_variants_own_clip_fraction(sft, name):
    trainer, batch, logp = _trainer_and_batch(sft, name)
    want = _unmoved_fraction(name, logp, batch)
    if name in ("rloo", "grpo", "dr_grpo", "dapo", "gspo"):
        assert 0 < want < 1, f"the batch must clip some, not all, of {name}'s tokens to tell stats apart"
    else:  # no clip of these stops a gradient
        assert want == 0
    row = trainer.update(batch)
    assert row["stats/clipfrac_one_sided"] == pytest.approx(want, abs=1e-6)


def test_a_gspo_step_that_clips_every_sequence_is_diagnosed_all_clipped(sft):
    trainer, batch, logp = _trainer_and_batch(sft, "gspo")
    # every row's log-ratio is +1e-3 per token (ratio 1.001 > 1 + 4e-4) with A > 0: each sequence is clipped
    batch["logp_old"] = logp - 1e-3
    batch["advantages"] = torch.ones(16)
    assert _unmoved_fraction("gspo", logp, batch) == 1.0
    row = trainer.update(batch)
    assert row["stats/clipfrac_one_sided"] == 1.0
    stats = {"loss": row["loss/policy"], "grad_norm": row["stats/grad_norm"], "frac_zero_std_groups": 0.0,
             "frac_valid_tokens": row["stats/frac_valid_tokens"], "clip_frac": row["stats/clipfrac_one_sided"],
             "beta": 0.0, "num_iterations": 2}
    assert diagnose_zero_loss(stats) == "all_clipped"
    assert row["stats/grad_norm"] == 0.0
