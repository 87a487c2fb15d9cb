"""Hidden properties of policy_gradient_step: inverse-CDF rollout, baseline, the autograd gradient, learning."""

import torch

from rlprep.coding.testkit import Properties, close, expect, rand, randn

P = Properties()


def _case(size, salt, peaked=False):
    logits = randn(size, size["K"], salt=salt)
    if peaked:
        logits[0] += 5.0
    return logits, randn(size, size["K"], salt=salt + 1), rand(size, size["G"], salt=salt + 2)


def _run(f, logits, rewards, u, lr):
    out = f(logits=logits, rewards=rewards, uniforms=u, lr=lr)
    expect(isinstance(out, (tuple, list)) and len(out) == 3, "expected (new_logits, actions, advantages)")
    return [torch.as_tensor(o) for o in out]


def _autograd(logits, rewards, u):
    probs = torch.softmax(logits, -1)
    actions = torch.searchsorted(probs.cumsum(-1), u, right=True).clamp(max=len(logits) - 1)
    r = rewards[actions]
    adv = r - r.mean()
    x = logits.clone().requires_grad_(True)
    (adv * torch.log_softmax(x, -1)[actions]).mean().backward()
    return actions, adv, x.grad


def examples(size):
    return [dict(logits=torch.zeros(3), rewards=torch.tensor([0.0, 1.0, 0.0]), uniforms=torch.tensor([0.1, 0.5, 0.9]),
                 lr=1.0),
            dict(logits=torch.tensor([1.0, 0.0]), rewards=torch.tensor([1.0, 0.0]), uniforms=torch.tensor([0.2, 0.8]),
                 lr=size["lr"])]


@P.prop("samples each action by inverse CDF of softmax(logits)")
def _(f, ref, size):
    logits, rewards, u = _case(size, 1)
    close(_run(f, logits, rewards, u, size["lr"])[1], _autograd(logits, rewards, u)[0])


@P.prop("advantages are the rewards minus their group mean")
def _(f, ref, size):
    logits, rewards, u = _case(size, 4)
    close(_run(f, logits, rewards, u, size["lr"])[2], _autograd(logits, rewards, u)[1], rtol=1e-12, atol=1e-15)


@P.prop("the update is lr times autograd's gradient of mean(A log pi(a))", library="torch.autograd")
def _(f, ref, size):
    logits, rewards, u = _case(size, 7, peaked=size["lr"] > 1)
    _, _, grad = _autograd(logits, rewards, u)
    close(_run(f, logits, rewards, u, size["lr"])[0], logits + size["lr"] * grad, rtol=1e-9, atol=1e-12)


@P.prop("equal rewards give no update")
def _(f, ref, size):
    logits, _, u = _case(size, 10)
    close(_run(f, logits, torch.ones(size["K"], dtype=torch.float64), u, size["lr"])[0], logits, rtol=1e-12,
          atol=1e-15)


@P.prop("ten steps raise the expected reward from a uniform policy")
def _(f, ref, size):
    rewards = torch.linspace(0, 1, size["K"], dtype=torch.float64)
    logits = torch.zeros(size["K"], dtype=torch.float64)
    start = float(torch.softmax(logits, -1) @ rewards)
    for step in range(10):
        u = rand(size, size["G"], salt=100 + step)
        logits = _run(f, logits, rewards, u, size["lr"])[0].double()
    end = float(torch.softmax(logits, -1) @ rewards)
    expect(end > start + 0.02, "the policy must move toward the rewarding actions")
    close(logits, _trained(ref, rewards, size), rtol=1e-9, atol=1e-12)


def _trained(ref, rewards, size):
    logits = torch.zeros(size["K"], dtype=torch.float64)
    for step in range(10):
        logits = ref(logits, rewards, rand(size, size["G"], salt=100 + step), size["lr"])[0]
    return logits
