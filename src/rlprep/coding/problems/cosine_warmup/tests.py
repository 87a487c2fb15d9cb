"""Hidden properties of cosine_lr, compared with transformers' get_cosine_schedule_with_warmup."""


import torch
from transformers import get_cosine_schedule_with_warmup

from rlprep.coding.testkit import Properties, close

P = Properties()


def _hf(base, warmup, total, cycles, steps):
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=base)
    sched = get_cosine_schedule_with_warmup(opt, warmup, total, num_cycles=cycles)
    lrs = []
    for _ in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return [lrs[s] for s in _probe(warmup, total, steps)]


def _probe(warmup, total, steps):
    """The steps worth checking: around the end of warmup and the end of the schedule, and a few in between."""
    marks = {0, 1, warmup - 1, warmup, warmup + 1, (warmup + total) // 2, total - 1, total, total + 1, steps - 1,
             warmup + (total - warmup) // 4, warmup + 3 * (total - warmup) // 4}
    return sorted(s for s in marks if 0 <= s < steps)


def _ours(f, base, warmup, total, cycles, steps):
    return [float(f(step=s, base_lr=base, warmup_steps=warmup, total_steps=total, num_cycles=cycles))
            for s in _probe(warmup, total, steps)]


def examples(size):
    return [dict(step=s, base_lr=1.0, warmup_steps=2, total_steps=6) for s in (0, 1, 2, 4, 6)][:3] + \
        [dict(step=4, base_lr=size["base"], warmup_steps=size["warmup"], total_steps=size["total"],
              num_cycles=size["cycles"])]


@P.prop("matches get_cosine_schedule_with_warmup at every step", library="transformers.get_cosine_schedule_with_warmup")
def _(f, ref, size):
    args = (size["base"], size["warmup"], size["total"], size["cycles"], size["total"] + 1)
    close(_ours(f, *args), _hf(*args), rtol=1e-9, atol=1e-15)


@P.prop("warms up linearly from 0 and peaks at base_lr when warmup ends")
def _(f, ref, size):
    w = max(size["warmup"], 4)
    close(_ours(f, size["base"], w, size["total"] + w, 0.5, w + 1), _hf(size["base"], w, size["total"] + w, 0.5, w + 1),
          rtol=1e-9, atol=1e-15)


@P.prop("decays to 0 at total_steps and continues the cosine past it (one half cycle)")
def _(f, ref, size):
    args = (size["base"], size["warmup"], size["total"], 0.5, size["total"] + 6)
    close(_ours(f, *args), _hf(*args), rtol=1e-9, atol=1e-15)


@P.prop("follows num_cycles (several cosine cycles)", library="transformers.get_cosine_schedule_with_warmup")
def _(f, ref, size):
    args = (size["base"], size["warmup"], size["total"], 1.5, size["total"] + 1)
    close(_ours(f, *args), _hf(*args), rtol=1e-9, atol=1e-15)


@P.prop("handles warmup_steps = 0 and total_steps = warmup_steps")
def _(f, ref, size):
    close(_ours(f, size["base"], 0, size["total"], 0.5, size["total"]), _hf(size["base"], 0, size["total"], 0.5,
                                                                                   size["total"]), rtol=1e-9, atol=1e-15)
    close(_ours(f, size["base"], 3, 3, 0.5, 6), _hf(size["base"], 3, 3, 0.5, 6), rtol=1e-9, atol=1e-15)
