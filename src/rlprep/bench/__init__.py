"""``rlprep bench``: our loops against the tools a practitioner would use instead, side by side in one run.

Sections (each can be run alone with ``--only``), one module each:

* ``steps``   (:mod:`.steps`) - steps/s and completion tokens/s of our GRPO and DPO steps vs TRL's
  GRPOTrainer/DPOTrainer on the same model, batch and data (medians over ``--repeats`` timed steps after warm-up);
* ``target``  (:mod:`.target`) - steps and wall time until GRPO lifts held-out accuracy 25 points from the SFT start
  (cpu profile), ours vs TRL's, 3 seeds each (medians and spread), each run bounded by ``--target-seconds``
  (evaluation time is excluded from both clocks; "not reached in N s" is reported as such);
* ``rollout`` (:mod:`.generation`) - generation tokens/s of :func:`rlprep.rollout.generate` vs ``model.generate``;
* ``grading`` (:mod:`.grading`) - seconds of ``rlprep grade`` per ``solutions/*/*.ipynb``;
* ``classroom`` (:mod:`.classroom`) - submissions per minute of ``rlprep classroom autograde`` with 1 and 2
  processes on a small simulated class (4 students x lab01), each run's grades compared with the serial run's;
* ``image``   (:mod:`.image_diff`) - the 4K image-diff benchmark of lab08;
* ``interview`` (:mod:`.interview_scoring`) - the mock interview's scorers on the labelled answer set: how often each
  ranks strong > partial > wrong and passes the wrong answer (``--llm-judge``: the configured model's judge too);
* ``first_plot`` (:mod:`.first_plot`) - seconds from a fresh kernel to the first figure of lab 1 (and of its
  training cell) and of notebook 06, smoke profile, after ``make lab``'s build step on a fresh cache (also timed);
* ``tests``   (:mod:`.make_test`) - the ``make test`` wall time the Makefile leaves in ``build/make-test-seconds``;
* ``labs``    (:mod:`.labs`) - (``--gpu`` only) every lab's trainer in the gpu profile, with its headline figure.

:mod:`.schedule` turns the options into a plan and runs the sections within ``--gpu``'s time budget;
:mod:`.trl_adapters` sets TRL up like our loops; :mod:`.report` renders the one report (json + markdown).

Every ratio is computed from figures measured in the same run. Sections whose tools are missing (no trl, no
nbgrader, no CUDA) are skipped with a note in the report, never faked. Writes ``docs/benchmarks.json`` and
``docs/benchmarks.md`` atomically (``--out`` changes the folder; ``--gpu`` writes ``benchmarks-gpu.*``, into
``$OUT`` when that is set).
"""

from __future__ import annotations

import argparse
import os
import sys

from rlprep.bench import machine
from rlprep.bench import report as rep
from rlprep.bench.classroom import bench_classroom
from rlprep.bench.first_plot import bench_first_plot
from rlprep.bench.generation import bench_rollout
from rlprep.bench.grading import bench_grading
from rlprep.bench.interview_scoring import bench_interview_scoring
from rlprep.bench.labs import bench_labs
from rlprep.bench.make_test import make_test_time
from rlprep.bench.schedule import SECTIONS, Plan, Schedule, plan_run
from rlprep.bench.steps import bench_steps
from rlprep.bench.target import bench_time_to_target
from rlprep.errors import RlprepError
from rlprep.paths import repo_root

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gpu", action="store_true",
                        help="the GPU half: gpu profile on CUDA (bf16), plus every lab's training; without CUDA "
                             "the GPU-only parts are skipped with a note")
    parser.add_argument("--quick", action="store_true", help="smallest sizes (the smoke profile, few repeats)")
    parser.add_argument("--only", default=None,
                        help=f"comma-separated sections to run, from {','.join(SECTIONS)} (default: all); "
                             "classroom: submissions/minute of `rlprep classroom autograde` with 1 and 2 processes "
                             "on --classroom-students simulated students x lab01_gae, grades checked against the "
                             "serial run's; with --gpu also labs, without classroom")
    parser.add_argument("--classroom-students", type=int, default=None,
                        help="classroom section: simulated students (default 12; 2 with --quick): enough that the "
                             "second process's start-up is a small part of the time")
    parser.add_argument("--profile", default=None,
                        help="model profile for the CPU half (default: smoke; the target section uses cpu unless "
                             "--quick)")
    parser.add_argument("--repeats", type=int, default=None, help="timed steps per measurement (median)")
    parser.add_argument("--target-seconds", type=float, default=None,
                        help="wall-time bound per time-to-target run (default 240 s; quick 30)")
    parser.add_argument("--target-points", type=float, default=None,
                        help="accuracy target = start accuracy + this many points (default 25, quick 5, --gpu 15)")
    parser.add_argument("--out", default=None,
                        help="output folder (default: docs/ of the repository; with --gpu, $OUT when it is set)")
    parser.add_argument("--budget-seconds", type=float, default=None,
                        help="--gpu: wall-clock budget of the whole run (default 450, under the 8-minute goal); "
                             "labs stop at their share, later sections are skipped with a note once it is spent")
    parser.add_argument("--notes-only", action="store_true",
                        help="measure nothing: rewrite benchmarks.md from the figures in benchmarks.json with the "
                             "current benchmarks-notes.md and benchmarks-gpu.md (after editing the notes)")
    parser.add_argument("--llm-judge", action="store_true",
                        help="interview section: also measure the language model judge of `rlprep mock --llm` "
                             "(RLPREP_LLM_BASE_URL/_MODEL; sends the labelled answers, about 100 calls)")
    parser.add_argument("--dry-run", action="store_true",
                        help="--gpu plumbing check without a GPU: the same code path on the CPU, smoke profile, tiny "
                             "budgets (also RLPREP_GPU_DRY_RUN=1); the figures are not GPU figures")


def run(args) -> int:
    """Plan the run, measure each planned section in order, then write the report (and, for ``--gpu``, its figure
    and the GPU section of ``docs/benchmarks.md``)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    root = repo_root()
    out_dir = rep.out_dir(args, root)
    if getattr(args, "notes_only", False):
        if args.gpu:
            raise RlprepError("--notes-only re-renders the CPU report", "drop --gpu")
        written = rep.rerender_notes(out_dir)
        print(f"rewrote {written} from benchmarks.json and the current notes (nothing measured)")
        return 0

    plan = plan_run(args)
    schedule = Schedule(plan)
    info = machine.machine_info(plan.device)
    device, profile = plan.device, plan.profile
    schedule.run("labs", lambda: bench_labs(device, plan.labs_profile, plan.labs_budget_s, plan.dry_run),
                 budgeted=False)
    schedule.run("steps", lambda: bench_steps(profile, device, plan.repeats, plan.warmup, schedule.notes))
    schedule.run("rollout", lambda: bench_rollout(profile, device, plan.repeats, **plan.rollout_size))
    schedule.run("image", lambda: _image_section(plan))
    schedule.run("target", lambda: bench_time_to_target(plan.target_profile, device, schedule.target_bound_s(),
                                                        plan.target_points, eval_every=plan.target_eval_every,
                                                        sft_steps=plan.target_sft_steps, seeds=plan.target_seeds))
    schedule.run("grading", lambda: bench_grading(root))
    students = getattr(args, "classroom_students", None) or (2 if plan.quick else 12)
    schedule.run("classroom", lambda: bench_classroom(students=students))
    schedule.run("interview", lambda: bench_interview_scoring(root, llm_judge=getattr(args, "llm_judge", False)))
    schedule.run("first_plot", lambda: bench_first_plot(root, "smoke"))
    schedule.run("tests", lambda: make_test_time(root), budgeted=False)

    report = {"command": _command(), "profile": profile.name, "quick": plan.quick, "dry_run": plan.dry_run,
              "machine": info, "notes": schedule.notes, "sections": schedule.sections,
              "wall_s": schedule.elapsed_s()}
    if plan.gpu:
        report.update(budget_s=plan.budget_s, skipped_for_budget=schedule.skipped_for_budget,
                      labs_profile=profile.name)
    written = rep.publish(report, plan, schedule, out_dir, root)
    print(f"wrote {', '.join(written)} in {out_dir} in {report['wall_s']:.0f} s")
    return 0


def _image_section(plan: Plan) -> dict:
    """The image-diff benchmark; a bare GPU image may lack OpenCV, which :mod:`.image_diff` imports."""
    if not machine.have("cv2"):
        return {"skipped": "opencv (cv2) is not installed"}
    from rlprep.bench.image_diff import format_table, run_benchmark

    res = run_benchmark(**plan.image_size)
    return {"result": res, "table_median": format_table(res, "timings_ms"), "table_best": format_table(res, "best_ms")}


def _command() -> str:
    """The command line as the report states it, however it was started (``rlprep bench``, ``python -m``)."""
    argv = sys.argv[2:] if sys.argv[1:2] == ["bench"] else sys.argv[1:]
    return ("python -m rlprep bench " + " ".join(argv)).strip()
