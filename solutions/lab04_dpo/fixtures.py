"""Hidden cases of lab04 (DPO): a seeded [3, 5, 6] batch of logits for ``sequence_logprobs`` (all positions
scored, then prompt and padding masked) and two seeded batches of four pairs' log-probs for ``dpo_loss``.

The lab's hidden tests write ``sequence_logprobs({{ slp.logits }}, {{ slp.labels }}, {{ slp.full }})`` and compare
with ``{{ slp.full_logps }}``; ``{{ pairs_p.args }}`` is the tuple of the four log-prob tensors. ``slp.logits_big``
(float32 logits of size 1e3), ``slp.logits_time_major`` (transposed back into a non-contiguous view in the cell) and
``pairs_big`` (float32 pairs with margins of +-200 after beta) are the numerically hard inputs: the cells compare a
learner's answer on them with the same learner's answer in float64 (or on the contiguous logits), and with the
reference's (``big_logps``, ``pairs_big.loss``), so a constant answer cannot pass as "the same in both".
``bf16_logps`` is the reference on the logits cast to bfloat16: a float32 sum ("computed in float32 at least").
"""

from __future__ import annotations

import torch

from rlprep.algos.dpo import dpo_loss, sequence_logprobs


def pairs(seed: int) -> tuple:
    """(policy_chosen, policy_rejected, ref_chosen, ref_rejected): four [4] tensors of log-probs around -10."""
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.round((-10 + 4 * torch.randn(4, generator=gen, dtype=torch.float64)) * 100) / 100
                 for _ in range(4))


def _grad(fn, wrt: str, **kwargs) -> torch.Tensor:
    """d fn(**kwargs) / d kwargs[wrt] (fn's value a scalar or a [1] tensor)."""
    kwargs[wrt] = kwargs[wrt].detach().clone().requires_grad_(True)
    fn(**kwargs).sum().backward()
    return kwargs[wrt].grad


def fixtures() -> dict:
    gen = torch.Generator().manual_seed(20261130)
    B, T, V = 3, 5, 6
    logits = torch.round(torch.randn(B, T, V, generator=gen, dtype=torch.float64) * 1000) / 1000  # (B, T, V)
    labels = torch.randint(0, V, (B, T), generator=gen)  # (B, T)
    full = torch.ones(B, T, dtype=torch.long)  # (B, T)
    ragged = torch.tensor([[0, 0, 1, 1, 1], [0, 1, 1, 1, 0], [1, 1, 1, 1, 1]])  # prompt zeros, right padding
    labels_ragged = torch.where(ragged.bool(), labels, torch.full_like(labels, -100))  # (B, T)
    p, q = pairs(1), pairs(2)
    logits_big = (logits * 1000).float()  # (B, T, V) float32, logits of size 1e3: gaps of hundreds of nats
    # big pairs: float32 log-probs whose margins beta * (...) with beta = 0.1 are about +-200
    pc, pr = torch.tensor([-900.0, -3000.0, -50.0, -2100.0]), torch.tensor([-2900.0, -1000.0, -2050.0, -100.0])
    rc, rr = torch.tensor([-1000.0, -1000.0, -1000.0, -1000.0]), torch.tensor([-1000.0, -1000.0, -1000.0, -1000.0])
    return {
        "slp": {"logits": logits, "labels": labels, "full": full, "ragged": ragged, "labels_ragged": labels_ragged,
                "full_logps": sequence_logprobs(logits, labels, full),
                "ragged_logps": sequence_logprobs(logits, labels_ragged, ragged),
                "logits_big": logits_big,
                "logits_time_major": logits.transpose(0, 1).contiguous(),  # (T, B, V), transposed back in the cell
                "big_logps": sequence_logprobs(logits_big.double(), labels_ragged, ragged),
                "bf16_logps": sequence_logprobs(logits.to(torch.bfloat16), labels_ragged, ragged),  # float32
                "grad_row0": _grad(sequence_logprobs, "logits", logits=logits[:1], labels=labels_ragged[:1],
                                   mask=ragged[:1])},  # row 0: two prompt positions, three scored
        "pairs_big": {"pc": pc, "pr": pr, "rc": rc, "rr": rr,
                      "loss": dpo_loss(pc.double(), pr.double(), rc.double(), rr.double(), beta=0.1),
                      "grad_pc": _grad(dpo_loss, "policy_chosen_logps", policy_chosen_logps=pc.double(),
                                       policy_rejected_logps=pr.double(), ref_chosen_logps=rc.double(),
                                       ref_rejected_logps=rr.double(), beta=0.1)},
        "pairs_p": {"pc": p[0], "pr": p[1], "rc": p[2], "rr": p[3],
                    "loss_beta_01": dpo_loss(*p, beta=0.1), "loss_beta_05": dpo_loss(*p, beta=0.5),
                    "grad_pc": _grad(dpo_loss, "policy_chosen_logps", policy_chosen_logps=p[0],
                                     policy_rejected_logps=p[1], ref_chosen_logps=p[2], ref_rejected_logps=p[3]),
                    "grad_pr": _grad(dpo_loss, "policy_rejected_logps", policy_chosen_logps=p[0],
                                     policy_rejected_logps=p[1], ref_chosen_logps=p[2], ref_rejected_logps=p[3])},
        "pairs_q": {"pc": q[0], "pr": q[1], "rc": q[2], "rr": q[3], "loss_default": dpo_loss(*q)},
    }
