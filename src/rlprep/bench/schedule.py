"""What one ``rlprep bench`` run measures and how big (:class:`Plan`), and the order and time budget it runs in
(:class:`Schedule`): each section timed and isolated, and under ``--gpu`` started only while the budget lasts."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field

from rlprep.bench import machine
from rlprep.errors import RlprepError

SECTIONS = ("steps", "target", "rollout", "grading", "classroom", "image", "interview", "first_plot", "tests")
GPU_SECTIONS = ("labs",) + tuple(x for x in SECTIONS if x not in ("classroom", "interview", "first_plot"))  # CPU-only


@dataclass
class Plan:
    """The settings of one run, resolved from the command line (:func:`plan_run`)."""

    gpu: bool
    """``--gpu``: the GPU half (``make gpu-check``), with the lab runs and a wall-clock budget."""
    dry_run: bool
    """``--dry-run`` / ``RLPREP_GPU_DRY_RUN=1``: the GPU code path on the CPU, smoke profile, tiny sizes."""
    quick: bool
    """``--quick`` (or a dry run): smallest sizes, few repeats."""
    sections: tuple[str, ...]
    """The sections to run, from :data:`SECTIONS` (:data:`GPU_SECTIONS` with ``--gpu``)."""
    device: object
    """The ``torch.device`` everything is measured on."""
    profile: object
    """The model :class:`rlprep.profiles.Profile` of the measured loops."""
    repeats: int
    """Timed steps or calls per measurement (their median is reported)."""
    target_s: float
    """Wall-time bound of each time-to-target run (``--target-seconds``)."""
    target_points: float
    """Accuracy target = start accuracy + this many points."""
    budget_s: float
    """``--gpu``: wall-clock budget of the whole run (``--budget-seconds``)."""
    notes: list[str] = field(default_factory=list)
    """What the report must say about this run (dry run, no CUDA, tools missing)."""

    @property
    def warmup(self) -> int:
        """Untimed steps before the timed ones in the ``steps`` section."""
        return 1 if self.dry_run else 2

    @property
    def rollout_size(self) -> dict:
        """``bench_rollout`` batch and new tokens (its defaults unless a dry run)."""
        return dict(batch=8, new_tokens=8) if self.dry_run else {}

    @property
    def image_size(self) -> dict:
        """``run_benchmark`` image size and repeats (3-6 ms timings: 21 repeats for a stable median)."""
        size = dict(height=135, width=240) if self.dry_run else {}
        return dict(repeats=3 if self.quick else 21, slow_repeats=1, **size)

    @property
    def target_sft_steps(self) -> int | None:
        """Dry run: the cached warm start, no extra SFT build; else the section's own choice."""
        return self.profile.sft_steps if self.dry_run else None

    @property
    def target_profile(self):
        """The time-to-target profile: cpu (issue 21: a start that can gain 25 points, 0.6M parameters), smoke for
        ``--quick`` and dry runs, gpu under ``--gpu`` on CUDA."""
        from rlprep.profiles import get_profile

        if self.quick or self.profile.name == "gpu":
            return self.profile
        return get_profile("cpu")

    @property
    def target_seeds(self) -> int:
        """Seeds per trainer in the time-to-target section (medians and spread over them)."""
        return 1 if self.dry_run else 3

    @property
    def target_eval_every(self) -> int:
        """Steps between evaluations of a time-to-target run (the resolution of its step count)."""
        return 5 if self.quick else 10

    @property
    def labs_budget_s(self) -> float:
        """The lab runs' share of the budget; the other sections share the rest."""
        return 0.55 * self.budget_s

    @property
    def labs_profile(self):
        """The profile the labs train in: the gpu profile, or the CPU one of a dry run."""
        return self.profile if self.dry_run else None


def wanted_sections(args) -> tuple[str, ...]:
    """``--only`` checked against the sections of this half (``labs`` needs ``--gpu``)."""
    allowed = GPU_SECTIONS if args.gpu else SECTIONS
    wanted = tuple(allowed) if not args.only else tuple(x.strip() for x in args.only.split(",") if x.strip())
    unknown = [x for x in wanted if x not in allowed]
    if unknown:
        raise RlprepError(f"unknown bench section(s): {', '.join(unknown)}",
                          f"pick from {','.join(allowed)} (labs needs --gpu)")
    return wanted


def plan_run(args) -> Plan:
    """Validate the options (``error:``/``fix:`` before anything is imported or measured), then pick the device,
    profile and sizes."""
    dry_run = bool(getattr(args, "dry_run", False)) or os.environ.get("RLPREP_GPU_DRY_RUN") == "1"
    if dry_run and not args.gpu:
        raise RlprepError("--dry-run checks the GPU half's plumbing", "add --gpu (make gpu-check's command)")
    sections = wanted_sections(args)
    import torch

    from rlprep.profiles import get_profile

    notes = []
    if dry_run:
        notes.append("DRY RUN (--dry-run / RLPREP_GPU_DRY_RUN=1): the GPU code path on the CPU with the smoke "
                     "profile and tiny budgets; it checks the plumbing, these are not GPU figures")
        device, profile = torch.device("cpu"), get_profile(args.profile or "smoke")
    elif args.gpu and torch.cuda.is_available():
        device, profile = torch.device("cuda"), get_profile(args.profile or "gpu")
    else:
        if args.gpu:
            notes.append("--gpu asked for but torch sees no CUDA: GPU-only parts skipped, the rest measured on CPU "
                         "with the smoke profile (these are not GPU figures)")
        device, profile = torch.device("cpu"), get_profile(args.profile or "smoke")
    if device.type == "cpu" and profile.device != "cpu":
        raise RlprepError(f"profile {profile.name} needs {profile.device}",
                          "use --profile smoke or cpu on this machine")
    quick = args.quick or dry_run
    for mod in ("trl", "nbgrader"):
        if not machine.have(mod):
            notes.append(f"skipped: {mod} is not installed, so the parts that need it are skipped")
    return Plan(gpu=args.gpu, dry_run=dry_run, quick=quick, sections=sections, device=device, profile=profile,
                repeats=args.repeats or (1 if dry_run else 3 if quick else 7),
                target_s=args.target_seconds or (2.0 if dry_run else 45.0 if args.gpu else 30.0 if quick else 240.0),
                target_points=args.target_points if args.target_points is not None else (
                    5.0 if quick else 15.0 if args.gpu else 25.0),
                budget_s=getattr(args, "budget_seconds", None) or (120.0 if dry_run else 450.0), notes=notes)


class Schedule:
    """Runs the planned sections in the order asked, each timed; a section that raises is reported as failed and
    the others still run. Under ``--gpu`` a section starts only while the run's budget lasts (make gpu-check's
    8-minute goal); the ones that no longer fit are listed in ``skipped_for_budget``."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.notes = plan.notes
        self.sections: dict = {}
        self.skipped_for_budget: list[str] = []
        self.t_start = time.perf_counter()

    def elapsed_s(self) -> float:
        return time.perf_counter() - self.t_start

    def run(self, name: str, fn, budgeted: bool = True) -> None:
        """``sections[name] = fn()`` if the plan has ``name`` and (when ``budgeted``) the budget is not spent."""
        if name not in self.plan.sections:
            return
        if budgeted and self.plan.gpu and self.elapsed_s() > self.plan.budget_s:
            self.skipped_for_budget.append(name)
            return
        t0 = time.perf_counter()
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        try:
            self.sections[name] = fn()
        except Exception as exc:  # a section failing is reported, the others still run
            self.sections[name] = {"error": f"{type(exc).__name__}: {exc}"}
            self.notes.append(f"section {name} failed: {type(exc).__name__}: {exc}")
        if isinstance(self.sections[name], dict):
            self.sections[name]["section_wall_s"] = time.perf_counter() - t0
        print(f"[bench] {name} done in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)

    def target_bound_s(self) -> float:
        """The time-to-target bound: ``--target-seconds``; under ``--gpu`` also what is left of the budget for both
        loops (ours, TRL)."""
        if not self.plan.gpu:
            return self.plan.target_s
        return max(1.0, min(self.plan.target_s, (self.plan.budget_s - self.elapsed_s()) / 2.5))


def deadline_callback(deadline: float):
    """A ``live.run_steps`` callback that stops the run (as an interrupt: weights kept) once ``deadline`` (a
    ``time.perf_counter()`` value) has passed."""

    def stop_at_deadline(step, metrics, history):
        if time.perf_counter() > deadline:
            history.meta["stopped_at_budget"] = True
            raise KeyboardInterrupt

    return stop_at_deadline
