"""The policy: a from-scratch ``transformers.GPT2LMHeadModel`` sized by the run profile.

smoke ~0.25M parameters, cpu ~0.6M, gpu ~11M (see :mod:`rlprep.profiles`). Dropout is 0 everywhere so a
forward pass is a deterministic function of the weights (RL ratios must be exactly 1 before any update).
"""

from __future__ import annotations

import torch
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerBase

from rlprep.profiles import Profile


def model_config(profile: Profile, tokenizer: PreTrainedTokenizerBase) -> GPT2Config:
    """GPT-2 config for ``profile``: vocab from ``tokenizer``, all dropouts 0, pad/eos/bos ids set."""
    return GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=profile.n_positions,
        n_embd=profile.n_embd,
        n_layer=profile.n_layer,
        n_head=profile.n_head,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
        tie_word_embeddings=True,
    )


def build_model(profile: Profile, tokenizer: PreTrainedTokenizerBase, seed: int = 0) -> GPT2LMHeadModel:
    """A freshly initialised GPT-2 for ``profile``; the same ``seed`` gives the same weights."""
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(model_config(profile, tokenizer))
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def count_parameters(model: torch.nn.Module) -> int:
    """Distinct trainable parameters (tied embeddings counted once)."""
    seen = {id(p): p.numel() for p in model.parameters() if p.requires_grad}
    return sum(seen.values())
