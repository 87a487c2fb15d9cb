"""Cross-checks of the reference functions against TRL 1.16's own code paths (skipped when trl is missing).

What is compared, precisely:
- ``dpo_loss`` / ``sequence_logprobs``: ``trl.DPOTrainer._compute_loss`` (sigmoid loss, reverse KL, precomputed
  reference log-probs) is called unbound on a stand-in ``self`` and a stand-in model whose output carries the
  per-token completion log-probs (what TRL's fused LM head returns); TRL sums them and computes the loss itself.
  The per-token log-probs come from ``trl.trainer.utils.selective_log_softmax``.
  A second test builds a real ``DPOTrainer`` (tiny GPT-2 from a config, a char tokenizer built inline, a 4-pair
  dataset, no downloads), takes one collated batch, and compares ``trainer.compute_loss`` with
  ``dpo_loss(sequence_logprobs(...))`` on the same models' logits.
- ``group_advantages``: the exact source lines of ``GRPOTrainer._generate_and_score_completions`` that turn
  rewards into advantages (``sum_then_normalize`` branch) are cut out of TRL's source and executed, for
  ``scale_rewards`` in group / batch / none.
- ``grpo_loss``: ``trl.GRPOTrainer._compute_loss`` is called unbound with the per-token log-probs patched in,
  ``use_bias_correction_kl=False``, for loss types "grpo" (= aggregation "sequence"), "bnpo" and "dapo"
  (= aggregation "token" on one batch), with and without beta * k3 and with clip-higher.
- ``bradley_terry_loss``: ``trl.RewardTrainer.compute_loss`` called unbound with a stand-in reward model.
"""

from __future__ import annotations

import inspect
import math
import textwrap
from types import SimpleNamespace

import pytest
import torch

trl = pytest.importorskip("trl")
from trl.trainer import grpo_trainer as trl_grpo  # noqa: E402
from trl.trainer.dpo_trainer import DPOTrainer  # noqa: E402
from trl.trainer.reward_trainer import RewardTrainer  # noqa: E402
from trl.trainer.utils import nanstd, selective_log_softmax  # noqa: E402

from rlprep.algos.dpo import dpo_loss, sequence_logprobs  # noqa: E402
from rlprep.algos.grpo import group_advantages, grpo_loss  # noqa: E402
from rlprep.algos.reward_model import bradley_terry_loss  # noqa: E402
from trl_stand_ins import mask_from_lengths, stand_in_self, trl_grpo_loss  # noqa: E402

TOL = 1e-6


# DPO -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("beta", [0.01, 0.1, 0.5])
def test_dpo_loss_matches_trl_dpo_trainer(beta):
    g = torch.Generator().manual_seed(0)
    B, P, C, V = 4, 3, 6, 13  # pairs, prompt length, completion length, vocab
    L = P + C
    input_ids = torch.randint(0, V, (2 * B, L), generator=g)  # rows [chosen..., rejected...], as TRL batches them
    completion_mask = torch.zeros(2 * B, L, dtype=torch.long)
    for row, n in enumerate([6, 4, 5, 1, 3, 6, 2, 5]):
        completion_mask[row, P:P + n] = 1
    logits = torch.randn(2 * B, L - 1, V, generator=g) * 2  # logits[:, t] scores input_ids[:, t + 1]
    labels = input_ids[:, 1:]
    shift_mask = completion_mask[:, 1:]
    per_token = selective_log_softmax(logits, labels) * shift_mask  # (2B, L-1), 0 off the completion
    ref_per_token = selective_log_softmax(logits + torch.randn(logits.shape, generator=g), labels) * shift_mask

    def stand_in_model(**kwargs):  # what TRL's fused LM head returns for these labels
        zeros = torch.zeros_like(per_token)
        return SimpleNamespace(log_probs=per_token, entropy=zeros, mean_logits=zeros, is_top1=zeros.bool())

    trainer = stand_in_self(precompute_ref_logps=True, ld_alpha=None, f_divergence_type="reverse_kl",
                             loss_types=["sigmoid"], loss_weights=[1.0], beta=beta, label_smoothing=0.0,
                             use_weighting=False)
    ref_logps = ref_per_token.sum(1)
    inputs = dict(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), completion_mask=completion_mask,
                  ref_chosen_logps=ref_logps[:B], ref_rejected_logps=ref_logps[B:])
    trl_loss = DPOTrainer._compute_loss(trainer, stand_in_model, inputs, return_outputs=False)

    ours_logps = sequence_logprobs(logits, labels, shift_mask)  # (2B,)
    assert torch.allclose(ours_logps, per_token.sum(1), atol=1e-5)
    ours = dpo_loss(ours_logps[:B], ours_logps[B:], ref_logps[:B], ref_logps[B:], beta=beta)
    assert (ours - trl_loss).abs().max() <= TOL


def _char_tokenizer():
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2}
    vocab.update({c: i + 3 for i, c in enumerate("abcdefghijklmnopqrstuvwxyz0123456789+= .!?")})
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


def test_dpo_loss_matches_a_real_dpo_trainer_on_tiny_gpt2(tmp_path):
    from datasets import Dataset
    from transformers import GPT2Config, GPT2LMHeadModel
    from trl import DPOConfig

    tokenizer = _char_tokenizer()
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_layer=1, n_embd=32, n_head=2, n_positions=64, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=1, eos_token_id=1, pad_token_id=0)
    policy, reference = GPT2LMHeadModel(config), GPT2LMHeadModel(config)  # different weights: loss != ln 2
    pairs = Dataset.from_dict({"prompt": ["12+30=", "07+45=", "good movie", "it was"],
                               "chosen": ["42", "52", " loved it!", " great."],
                               "rejected": ["41", "5", " bad", " awful and boring"]})
    args = DPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=4, beta=0.1, report_to=[], bf16=False,
                     activation_checkpointing=False, use_cpu=True, max_steps=1, save_strategy="no")
    trainer = DPOTrainer(model=policy, ref_model=reference, args=args, train_dataset=pairs, processing_class=tokenizer)
    batch = next(iter(trainer.get_train_dataloader()))  # rows [chosen..., rejected...], right-padded
    with torch.no_grad():
        trl_loss = trainer.compute_loss(trainer.model, batch)

        def logps(model):
            logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1]
            return sequence_logprobs(logits, batch["input_ids"][:, 1:], batch["completion_mask"][:, 1:])

        pi, ref = logps(trainer.model), logps(trainer.ref_model)
    B = pi.shape[0] // 2
    ours = dpo_loss(pi[:B], pi[B:], ref[:B], ref[B:], beta=0.1)
    assert abs(trl_loss.item() - math.log(2)) > 1e-3  # a non-trivial batch
    assert (ours - trl_loss).abs().max() <= TOL


# GRPO advantages -----------------------------------------------------------------------------------------------
def _trl_advantage_code():
    """The lines of TRL's _generate_and_score_completions that turn summed rewards into advantages."""
    src = inspect.getsource(trl_grpo.GRPOTrainer._generate_and_score_completions).splitlines()
    start = next(i for i, line in enumerate(src) if "mean_grouped_rewards = torch.nanmean(" in line)
    end = next(i for i, line in enumerate(src) if "advantages = advantages / (std_rewards + 1e-4)" in line)
    return textwrap.dedent("\n".join(src[start:end + 1]))


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
def test_group_advantages_match_trl(scale):
    g = torch.Generator().manual_seed(1)
    G = 4
    rewards = torch.cat([torch.randint(0, 2, (8,), generator=g).float(), torch.ones(4), torch.rand(8, generator=g)])
    namespace = dict(torch=torch, nanstd=nanstd, rewards=rewards.clone(), num_generations=G,
                     self=SimpleNamespace(scale_rewards=scale))
    exec(_trl_advantage_code(), namespace)
    ours = group_advantages(rewards, G, scale=scale)
    assert (ours - namespace["advantages"]).abs().max() <= TOL


# GRPO loss -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss_type,aggregation", [("grpo", "sequence"), ("bnpo", "token"), ("dapo", "token")])
@pytest.mark.parametrize("beta,eps_high", [(0.0, 0.2), (0.04, 0.28)])
def test_grpo_loss_matches_trl(loss_type, aggregation, beta, eps_high):
    g = torch.Generator().manual_seed(2)
    B, T = 8, 7
    mask = mask_from_lengths([7, 3, 5, 1, 7, 6, 2, 4], T)
    logp_old = -torch.rand(B, T, generator=g) * 3
    logp_new = logp_old + 0.4 * torch.randn(B, T, generator=g)  # off-policy: some tokens leave the clip range
    ref_logp = logp_old + 0.3 * torch.randn(B, T, generator=g)
    advantages = group_advantages(torch.rand(B, generator=g), 4)
    trl_loss = trl_grpo_loss(loss_type, logp_new, logp_old, ref_logp, advantages, mask, 0.2, eps_high, beta)
    ours = grpo_loss(logp_new, logp_old, advantages, mask, eps_low=0.2, eps_high=eps_high, beta=beta,
                     ref_logp=ref_logp, aggregation=aggregation)
    assert (ours - trl_loss).abs().max() <= TOL


# Reward model --------------------------------------------------------------------------------------------------
def test_bradley_terry_matches_trl_reward_trainer():
    g = torch.Generator().manual_seed(3)
    rewards = torch.randn(2 * 6, 1, generator=g) * 3  # (2B, 1): TRL's batch is [chosen..., rejected...]
    trainer = stand_in_self(args=SimpleNamespace(center_rewards_coefficient=None))
    inputs = dict(input_ids=torch.zeros(12, 4, dtype=torch.long), attention_mask=torch.ones(12, 4, dtype=torch.long))
    trl_loss = RewardTrainer.compute_loss(trainer, lambda **kw: SimpleNamespace(logits=rewards), inputs)
    ours = bradley_terry_loss(rewards[:6, 0], rewards[6:, 0])
    assert (ours - trl_loss).abs().max() <= TOL
