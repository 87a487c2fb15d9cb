"""Hidden properties of sft_step, run through a fixed tiny model (DRIVER); the loss is compared with transformers'
ForCausalLMLoss and the update with one SGD step computed here."""

import torch
import torch.nn.functional as F
from transformers.loss.loss_utils import ForCausalLMLoss

from rlprep.coding.testkit import Properties, close, expect, randint, randn

P = Properties()

DRIVER = '''
def run_sft(embedding, head, input_ids, attention_mask, prompt_lengths, lr, steps=1):
    """A tiny causal LM (embedding, then a linear head on a running mean of the embeddings) trained with SGD by
    sft_step; returns (the losses, the new embedding, the new head)."""
    import torch

    class TinyLM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Parameter(embedding.clone())
            self.head = torch.nn.Parameter(head.clone())

        def forward(self, ids):
            e = self.embedding[ids]  # (B, T, D)
            causal = e.cumsum(dim=1) / torch.arange(1, ids.shape[1] + 1, dtype=e.dtype)[None, :, None]
            return causal @ self.head.T  # (B, T, V)

    model = TinyLM()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = [float(sft_step(model, opt, input_ids, attention_mask, prompt_lengths)) for _ in range(steps)]
    return losses, model.embedding.detach(), model.head.detach()
'''


def _batch(size, salt):
    B, T, V, D = size["B"], size["T"], size["V"], size["D"]
    ids = randint(size, 1, V, B, T, salt=salt)
    lengths = torch.tensor([T - (b * 2) % (T // 2) for b in range(B)])  # real lengths, right padding after
    mask = (torch.arange(T)[None, :] < lengths[:, None]).long()
    ids = ids * mask
    prompts = torch.tensor([1 + (b * 3) % (int(lengths[b]) - 1) for b in range(B)])
    return dict(embedding=randn(size, V, D, salt=salt + 1), head=randn(size, V, D, salt=salt + 2), input_ids=ids,
                attention_mask=mask, prompt_lengths=prompts, lr=size["lr"])


def _model_logits(emb, head, ids):
    e = emb[ids]
    return (e.cumsum(1) / torch.arange(1, ids.shape[1] + 1, dtype=e.dtype)[None, :, None]) @ head.T


def _labels(b):
    labels = b["input_ids"].clone()
    labels[torch.arange(labels.shape[1])[None, :] < b["prompt_lengths"][:, None]] = -100
    labels[b["attention_mask"] == 0] = -100
    return labels


def _run(f, b, steps=1):
    out = f(**b, steps=steps)
    expect(isinstance(out, (tuple, list)) and len(out) == 3, "run_sft returns (losses, embedding, head)")
    return out


def examples(size):
    b = _batch(dict(size, B=2, T=4), 0)
    return [dict(b, lr=0.1)]


@P.prop("the loss is transformers' ForCausalLMLoss with prompt and padding masked",
        library="transformers ForCausalLMLoss")
def _(f, ref, size):
    b = _batch(size, 1)
    logits = _model_logits(b["embedding"], b["head"], b["input_ids"])
    want = ForCausalLMLoss(logits, _labels(b), vocab_size=size["V"])  # transformers upcasts to float32
    close(_run(f, b)[0][0], float(want), rtol=1e-6, atol=1e-7)


@P.prop("the parameters move by one SGD step on that loss")
def _(f, ref, size):
    b = _batch(size, 4)
    emb, head = b["embedding"].clone().requires_grad_(True), b["head"].clone().requires_grad_(True)
    logits = _model_logits(emb, head, b["input_ids"])
    F.cross_entropy(logits[:, :-1].reshape(-1, size["V"]), _labels(b)[:, 1:].reshape(-1)).backward()
    _, new_emb, new_head = _run(f, b)
    close([new_emb, new_head], [b["embedding"] - size["lr"] * emb.grad, b["head"] - size["lr"] * head.grad],
          rtol=1e-9, atol=1e-12)


@P.prop("the gradients are zeroed after each step (three steps in a row)")
def _(f, ref, size):
    b = _batch(size, 7)
    close(_run(f, b, steps=3), ref(**b, steps=3), rtol=1e-9, atol=1e-12)


@P.prop("the first response token is trained on, the last prompt token's target is not")
def _(f, ref, size):
    b = _batch(size, 10)
    b["prompt_lengths"] = torch.ones_like(b["prompt_lengths"])  # a one-token prompt: every later token counts
    close(_run(f, b), ref(**b), rtol=1e-9, atol=1e-12)
    b["prompt_lengths"] = b["attention_mask"].sum(1) - 1  # a single response token per row
    close(_run(f, b), ref(**b), rtol=1e-9, atol=1e-12)
