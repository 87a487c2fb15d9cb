"""Hidden properties of adamw_step, compared with torch.optim.AdamW step by step."""

import torch

from rlprep.coding.testkit import Properties, close, randn

P = Properties()


def _hyper(size):
    return dict(lr=size["lr"], betas=(size["b1"], size["b2"]), eps=size["eps"], weight_decay=size["wd"])


def _torch_run(param0, grads, hyper):
    p = torch.nn.Parameter(param0.clone())
    opt = torch.optim.AdamW([p], **hyper)
    for g in grads:
        p.grad = g.clone()
        opt.step()
    state = opt.state[p]
    return p.detach().clone(), state["exp_avg"].clone(), state["exp_avg_sq"].clone()


def _learner_run(f, param0, grads, hyper):
    p, m, v = param0.clone(), torch.zeros_like(param0), torch.zeros_like(param0)
    for t, g in enumerate(grads, 1):
        p, m, v = f(param=p, grad=g, exp_avg=m, exp_avg_sq=v, step=t, **hyper)
        p, m, v = (torch.as_tensor(x, dtype=param0.dtype) for x in (p, m, v))
    return p, m, v


def _grads(size, n, salt, scale=1.0):
    return [randn(size, *size["shape"], salt=salt + i, scale=scale) for i in range(n)]


def examples(size):
    z = torch.zeros(3)
    return [dict(param=torch.tensor([1.0, -2.0, 0.5]), grad=torch.tensor([0.1, 0.0, -3.0]), exp_avg=z, exp_avg_sq=z,
                 step=1, lr=0.1, weight_decay=0.1),
            dict(param=torch.tensor([1.0, -2.0, 0.5]), grad=torch.tensor([0.2, 0.1, -1.0]),
                 exp_avg=torch.tensor([0.01, 0.0, -0.3]), exp_avg_sq=torch.tensor([1e-5, 0.0, 9e-3]), step=2,
                 lr=size["lr"], betas=(size["b1"], size["b2"]), weight_decay=size["wd"])]


@P.prop("matches torch.optim.AdamW on the first step", library="torch.optim.AdamW")
def _(f, ref, size):
    param0 = randn(size, *size["shape"], salt=1)
    grads = _grads(size, 1, 10)
    close(_learner_run(f, param0, grads, _hyper(size)), _torch_run(param0, grads, _hyper(size)), rtol=1e-9,
          atol=1e-12)


@P.prop("matches torch.optim.AdamW over several steps, moments included", library="torch.optim.AdamW")
def _(f, ref, size):
    param0 = randn(size, *size["shape"], salt=2)
    grads = _grads(size, size["steps"], 20)
    close(_learner_run(f, param0, grads, _hyper(size)), _torch_run(param0, grads, _hyper(size)), rtol=1e-9,
          atol=1e-12)


@P.prop("decays the weights by lr * weight_decay even when the gradient is zero")
def _(f, ref, size):
    param0 = randn(size, *size["shape"], salt=3)
    grads = [torch.zeros_like(param0)] * 2
    close(_learner_run(f, param0, grads, _hyper(size)), _torch_run(param0, grads, _hyper(size)), rtol=1e-12,
          atol=1e-14)


@P.prop("corrects the moments' bias with the step number (a resumed step 7)")
def _(f, ref, size):
    param0, g = randn(size, *size["shape"], salt=4), randn(size, *size["shape"], salt=5)
    m, v = randn(size, *size["shape"], salt=6, scale=0.1), randn(size, *size["shape"], salt=7).abs() * 0.01
    hyper = dict(_hyper(size), weight_decay=0.0)
    got = f(param=param0, grad=g, exp_avg=m, exp_avg_sq=v, step=7, **hyper)
    close(got, ref(param0, g, m, v, 7, **hyper), rtol=1e-9, atol=1e-12)


@P.prop("adds eps outside the square root (tiny gradients)")
def _(f, ref, size):
    param0 = randn(size, *size["shape"], salt=8)
    grads = _grads(size, 3, 30, scale=1e-7)
    hyper = dict(_hyper(size), eps=1e-6)
    close(_learner_run(f, param0, grads, hyper), _torch_run(param0, grads, hyper), rtol=1e-9, atol=1e-14)
