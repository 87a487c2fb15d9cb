"""The ``rollout`` section: sampled completion tokens/s of :func:`rlprep.rollout.generate` vs ``model.generate``
(KV cache in both, the same batch, calls interleaved so that load spikes hit both)."""

from __future__ import annotations

from rlprep.bench.timing import median, timed


def bench_rollout(profile, device, repeats: int, batch: int = 64, new_tokens: int = 32) -> dict:
    """Sampled completion tokens/s: :func:`rlprep.rollout.generate` vs ``model.generate`` (KV cache, same batch)."""
    import torch

    from rlprep.rollout import generate, pad_id
    from rlprep.tinyworld import get_task, load_policy

    policy, tok = load_policy("reviews", profile)
    policy = policy.to(device).eval()
    if device.type == "cuda":
        policy = policy.to(torch.bfloat16)
    task = get_task("reviews")
    prompts = [ex.prompt if hasattr(ex, "prompt") else ex for ex in task.sample(batch, split="test", seed=3)]
    eos = tok.eos_token_id
    pad = pad_id(tok)

    def ours(seed):
        r = generate(policy, tok, prompts, max_new_tokens=new_tokens, temperature=1.0, seed=seed)
        return int(r.completion_mask.sum())

    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    enc = {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}

    @torch.no_grad()
    def hf(seed):
        torch.manual_seed(seed)
        seq = policy.generate(**enc, max_new_tokens=new_tokens, do_sample=True, temperature=1.0, top_k=0,
                              top_p=1.0, pad_token_id=pad, eos_token_id=eos)
        comp = seq[:, enc["input_ids"].shape[1]:]  # (B, C)
        is_eos = (comp == eos).long()
        before = (is_eos.cumsum(-1) - is_eos) == 0  # up to and including the first eos
        return int(before.sum())

    out = {"batch": batch, "max_new_tokens": new_tokens, "task": "reviews"}
    samplers = (("ours", ours), ("hf_generate", hf))
    for _, fn in samplers:
        fn(0)  # warm-up
    rows = {"ours": [], "hf_generate": []}
    for i in range(repeats):  # interleaved, so load spikes hit both
        for name, fn in samplers:
            seconds, n = timed(lambda: fn(i + 1), device)  # called at once, inside this iteration
            rows[name].append((n / seconds, n))
    for name, vals in rows.items():
        out[name] = {"tokens_per_s": median([v[0] for v in vals]), "tokens_per_call": median([v[1] for v in vals]),
                     "n": len(vals)}
    out["ours_over_hf"] = out["ours"]["tokens_per_s"] / out["hf_generate"]["tokens_per_s"]
    return out
