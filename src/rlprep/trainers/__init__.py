"""Training loops in plain PyTorch for the labs: reward model, PPO-RLHF, DPO and GRPO/DAPO.

Each trainer module has a ``@dataclass`` config (``Config.for_profile(profile)`` sizes it for smoke / cpu / gpu)
and a ``train_*`` function whose graded pieces are keyword arguments defaulting to the references in
:mod:`rlprep.algos`, so a lab passes the learner's own functions::

    from rlprep.trainers.grpo import GRPOConfig, train_grpo
    history = train_grpo(GRPOConfig.for_profile("cpu"), grpo_loss=my_grpo_loss)
    history.plot(["reward/mean", "eval/accuracy"])

Runs show a progress bar (and a live plot in notebooks) and survive the stop button: see :mod:`rlprep.live`.
Import the submodules directly; this package imports nothing heavy on its own.
"""
