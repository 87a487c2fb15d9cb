"""rlprep.live: History, atomic writes, and interrupt safety of run_steps (no model download, no tiny world)."""

from __future__ import annotations

import json

import pytest
import torch

from rlprep.live import History, atomic_write_bytes, run_steps, save_checkpoint


def _linear_model():
    torch.manual_seed(0)
    return torch.nn.Linear(3, 1)


def _sgd_step_fn(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 3, generator=torch.Generator().manual_seed(1))
    y = x.sum(-1, keepdim=True)

    def step_fn(step):
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return {"loss/mse": float(loss.detach()), "stats/grad_norm": 1.0}

    return step_fn


def test_history_series_skips_missing_and_nan_and_roundtrips_json(tmp_path):
    h = History([{"step": 1, "a/x": 1.0}, {"step": 2, "a/x": float("nan")}, {"step": 3, "b/y": 2.0},
                 {"step": 4, "a/x": 3.0}], meta={"who": "test"})
    assert h.series("a/x") == ([1, 4], [1.0, 3.0])
    assert h.last("b/y") == 2.0
    assert h.keys() == ["step", "a/x", "b/y"]
    h.interrupted = True
    path = tmp_path / "h.json"
    h.to_json(path)
    back = History.from_json(path)
    assert back.series("a/x") == h.series("a/x") and back.interrupted and back.meta == {"who": "test"}
    assert json.loads(h.to_json())["rows"][0] == {"step": 1, "a/x": 1.0}


def test_history_plot_has_titles_and_units():
    h = History([{"step": i, "stats/kl_k3_token": 0.1 * i, "reward/mean": i, "x/unlisted": i} for i in range(5)])
    fig = h.plot(["stats/kl_k3_token", "reward/mean", "x/unlisted"], title="run")
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["stats/kl_k3_token", "reward/mean", "x/unlisted"]
    assert axes[0].get_ylabel() == "kl_k3_token (nats / token)" and axes[0].get_xlabel() == "step"
    assert axes[2].get_ylabel() == "unlisted"  # not in the table: no unit is made up
    with pytest.raises(ValueError, match="at least one metric"):
        h.plot(["step"])


def test_atomic_write_keeps_old_file_when_the_write_fails(tmp_path):
    path = tmp_path / "f.bin"
    atomic_write_bytes(path, b"old")


    with pytest.raises(TypeError):
        atomic_write_bytes(path, object())  # not bytes: fails mid-write
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]  # no temp file left behind


def test_run_steps_completes_and_saves_when_asked(tmp_path):
    model = _linear_model()
    h = run_steps(_sgd_step_fn(model), 5, model=model, run_dir=tmp_path, plot_keys=["loss/mse"], live=False)
    assert [r["step"] for r in h] == [0, 1, 2, 3, 4] and not h.interrupted
    assert h.series("loss/mse")[1][-1] < h.series("loss/mse")[1][0]
    assert (tmp_path / "checkpoint.pt").exists() and (tmp_path / "plot.png").exists()


def test_keyboard_interrupt_from_a_callback_keeps_weights_and_saves_everything(tmp_path):
    model = _linear_model()
    before = model.weight.detach().clone()

    def stop_at_3(step, metrics, history):
        if step == 3:
            raise KeyboardInterrupt

    h = run_steps(_sgd_step_fn(model), 100, model=model, run_dir=tmp_path, plot_keys=["loss/mse"],
                  callbacks=[stop_at_3], live=False, save_on_finish=False)
    assert h.interrupted and len(h) == 4  # steps 0..3 ran; the run returned instead of raising
    assert not torch.equal(model.weight, before)  # trained weights kept in memory
    saved = torch.load(tmp_path / "checkpoint.pt")
    assert torch.equal(saved["model"]["weight"], model.weight.detach())
    assert saved["interrupted"] and saved["steps_done"] == 4
    assert History.from_json(tmp_path / "history.json").interrupted
    assert (tmp_path / "plot.png").stat().st_size > 0


def test_interrupt_without_run_dir_falls_back_to_rlprep_home(rlprep_home):
    model = _linear_model()

    def step_fn(step):
        if step == 1:
            raise KeyboardInterrupt
        return {"loss/x": 1.0}

    h = run_steps(step_fn, 10, model=model, desc="demo run", live=False)
    assert h.interrupted and h.checkpoint is not None
    assert h.checkpoint == rlprep_home / "runs" / "demo_run" / "checkpoint.pt" and h.checkpoint.exists()


def test_save_checkpoint_roundtrip(tmp_path):
    model = _linear_model()
    path = save_checkpoint(model, tmp_path / "c.pt", extra={"note": 1})
    state = torch.load(path)
    assert state["note"] == 1 and torch.equal(state["model"]["bias"], model.bias.detach())


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="n_steps"):
        run_steps(lambda s: {}, -1, live=False)
    with pytest.raises(ValueError, match="plot_every"):
        run_steps(lambda s: {}, 1, plot_every=0, live=False)
