"""Honest variants of sft_step."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("loss_mask_weights", "a float loss mask on the shifted targets instead of -100 labels", source='''
        import torch


        def sft_step(model, optimizer, input_ids, attention_mask, prompt_lengths):
            optimizer.zero_grad()
            logits = model(input_ids)[:, :-1]  # predicts tokens 1..T-1
            targets = input_ids[:, 1:]
            pos = torch.arange(1, input_ids.shape[1])[None, :]
            keep = (pos >= prompt_lengths[:, None]) & (attention_mask[:, 1:] == 1)
            logp = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
            w = keep.to(logp.dtype)
            loss = -(logp * w).sum() / w.sum()
            loss.backward()
            optimizer.step()
            return loss.item()
        '''),
    Edit("shift_the_labels", "rolls the labels left by one and ignores the last position", source='''
        import torch
        import torch.nn.functional as F


        def sft_step(model, optimizer, input_ids, attention_mask, prompt_lengths):
            B, T = input_ids.shape
            labels = torch.full_like(input_ids, -100)
            for b in range(B):
                n = int(attention_mask[b].sum())
                p = int(prompt_lengths[b])
                labels[b, p - 1:n - 1] = input_ids[b, p:n]  # position t predicts t + 1
            logits = model(input_ids)
            loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            return float(loss.detach())
        '''),
]
