"""One SFT step with loss masking: labels -100 on prompt and padding, shift by one, token mean, step, zero_grad.

O(B T V) for the loss on top of the model's forward and backward.
"""

import torch
import torch.nn.functional as F


def sft_step(model, optimizer, input_ids, attention_mask, prompt_lengths):
    """One supervised fine-tuning step on prompt + response rows: loss only on response tokens.
    model(input_ids) -> logits [B, T, V]; input_ids, attention_mask: [B, T] (right padding);
    prompt_lengths: [B]. Updates the model in place; returns the loss as a float."""
    labels = input_ids.clone()  # (B, T)
    positions = torch.arange(input_ids.shape[1])[None, :]  # (1, T)
    labels[positions < prompt_lengths[:, None]] = -100  # no loss on the prompt
    labels[attention_mask == 0] = -100  # nor on padding
    logits = model(input_ids)  # (B, T, V)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1),
                           ignore_index=-100)  # logits at t score the token at t + 1
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return float(loss.detach())
