"""TRL on the same footing as our loops: explicit arguments (its defaults differ from ours), quiet logs, a reward.

Used by the ``steps`` and ``target`` sections; everything here imports ``transformers``/``trl`` lazily, so a
machine without trl can still import the bench package (the sections then skip TRL with a note).
"""

from __future__ import annotations

import contextlib
import io


@contextlib.contextmanager
def quiet():
    """Silence chatty libraries (TRL and transformers print progress bars and warnings)."""
    import warnings

    import transformers

    level = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    with contextlib.suppress(ImportError):
        import datasets

        datasets.disable_progress_bars()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            yield
        finally:
            transformers.logging.set_verbosity(level)


def trl_common(tmp: str, device, lr: float, max_steps: int, batch: int) -> dict:
    """TRL arguments set explicitly (its defaults are bf16 on CPU, gradient checkpointing, lr 1e-6)."""
    cuda = device.type == "cuda"
    return dict(output_dir=tmp, per_device_train_batch_size=batch, learning_rate=lr, lr_scheduler_type="constant",
                warmup_steps=0, max_steps=max_steps, bf16=cuda, fp16=False, gradient_checkpointing=False,
                use_cpu=not cuda, report_to="none", save_strategy="no", logging_steps=1, disable_tqdm=True,
                max_grad_norm=1.0, seed=0, dataloader_num_workers=0, weight_decay=0.0)


def trl_grpo_config(common: dict, group_size: int, max_new_tokens: int, **extra):
    """TRL's ``GRPOConfig`` matching our GRPO step: group size G, C new tokens, temperature 1 without top-k/top-p,
    beta 0, token aggregation (``dapo``), group-scaled rewards, one update per batch (mu 1)."""
    from trl import GRPOConfig

    return GRPOConfig(**common, num_generations=group_size, max_completion_length=max_new_tokens, temperature=1.0,
                      beta=0.0, loss_type="dapo", scale_rewards="group", num_iterations=1,
                      use_bias_correction_kl=False, log_completions=False, top_k=0, top_p=1.0, **extra)


def task_reward(task):
    """A TRL reward function scoring each completion with the task's own verifier."""

    def reward(prompts, completions, **kw):
        return [task.reward(p, c) for p, c in zip(prompts, completions)]

    return reward
