"""The one renderer: a run's report (a dict) to ``benchmarks*.json`` and ``benchmarks*.md``, written atomically.

``render_markdown`` is a pure function of the stored report, so ``rlprep bench --notes-only`` re-renders the
markdown from ``benchmarks.json`` without measuring, and a test renders the committed json into the committed md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rlprep.errors import RlprepError

GPU_BEGIN = "<!-- make gpu-check: begin (copied from benchmarks-gpu.md) -->"
GPU_END = "<!-- make gpu-check: end -->"
NOTES_FILES = (("extra_markdown", "benchmarks-notes.md"), ("gpu_markdown", "benchmarks-gpu.md"))
"""Report key <- hand-written file in the output folder, appended to the CPU report."""


# ----------------------------------------------------------------------------------------------- files
def out_dir(args, root: Path) -> Path:
    """``--out``; else, for ``--gpu``, ``$OUT`` when set (the GPU machine hands back what is written there);
    else ``docs/``."""
    if args.out:
        return Path(args.out)
    if args.gpu and os.environ.get("OUT"):
        return Path(os.environ["OUT"])
    return root / "docs"


def atomic_write(path: Path, text: str) -> None:
    """Text through :func:`rlprep.live.atomic_write_bytes` (temp file, then ``os.replace``)."""
    from rlprep.live import atomic_write_bytes

    atomic_write_bytes(path, text.encode())


def attach_notes(report: dict, folder: Path) -> None:
    """Put the hand-written analysis (``benchmarks-notes.md``) and the last GPU report (``benchmarks-gpu.md``) into
    the CPU report, or take them out when the files are gone."""
    for key, name in NOTES_FILES:
        report.pop(key, None)
        if (folder / name).exists():
            report[key] = (folder / name).read_text()


def write_report(report: dict, folder: Path, stem: str) -> str:
    """``{stem}.json`` and ``{stem}.md`` in ``folder``; returns the markdown written."""
    markdown = render_markdown(report) + "\n"
    atomic_write(folder / f"{stem}.json", json.dumps(report, indent=1, default=str) + "\n")
    atomic_write(folder / f"{stem}.md", markdown)
    return markdown


def publish(report: dict, plan, schedule, folder: Path, root: Path) -> list[str]:
    """Write a measured run: ``benchmarks.*`` (with the notes files attached) or, for ``--gpu``,
    ``benchmarks-gpu.*`` and the figure of the lab curves; a real GPU run writing into docs/ also replaces the GPU
    section of ``docs/benchmarks.md``. Returns the names written."""
    from rlprep.bench.labs import plot_labs

    stem = "benchmarks-gpu" if plan.gpu else "benchmarks"
    written = [f"{stem}.md", f"{stem}.json"]
    labs = schedule.sections.get("labs")
    if labs is not None and "skipped" not in labs:
        figure = plot_labs(labs, folder / f"{stem}-labs.png")
        report["figure"] = figure.name if figure else None
        written += [figure.name] if figure else []
    report["wall_s"] = schedule.elapsed_s()
    measured = dict(schedule.sections)  # this run's sections only: carry_over adds older ones to the same dict
    if not plan.gpu:
        carry_over(report, folder)
        attach_notes(report, folder)
    markdown = write_report(report, folder, stem)
    if not plan.gpu and "steps" in measured and "skipped" not in measured["steps"]:
        written.append(log_step_run(report, measured, folder))
    docs_md = root / "docs" / "benchmarks.md"
    if plan.gpu and not plan.dry_run and folder.resolve() == docs_md.parent.resolve() and docs_md.exists():
        atomic_write(docs_md, splice_gpu_section(docs_md.read_text(), markdown))
        written.append("benchmarks.md (GPU section)")
    return written


STEP_RUNS = "benchmarks-steps-runs.jsonl"
"""One line per CPU run that measured the steps section: the history behind "ours >= 1.2x TRL in every run"."""


def log_step_run(report: dict, measured: dict, folder: Path) -> str:
    """Append this run's steps (and rollout, when measured) to :data:`STEP_RUNS`, numbered after the last line."""
    path = folder / STEP_RUNS
    lines = path.read_text().splitlines() if path.exists() else []
    row = {"run": len([ln for ln in lines if ln.strip()]) + 1, "command": report["command"],
           "machine": report["machine"], "steps": measured["steps"]}
    if "rollout" in measured:
        row["rollout"] = measured["rollout"]
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")
    return STEP_RUNS


def carry_over(report: dict, folder: Path) -> None:
    """A run of some sections (``--only``) keeps the other sections of the stored ``benchmarks.json``, each marked
    with the date of the run that measured it (``carried_over``), so ``--only steps`` does not erase the rest."""
    stored = folder / "benchmarks.json"
    if not stored.exists():
        return
    try:
        old = json.loads(stored.read_text())
    except json.JSONDecodeError:
        return
    dates = {**old.get("carried_over", {})}
    for name, section in old.get("sections", {}).items():
        if name not in report["sections"]:
            report["sections"][name] = section
            report.setdefault("carried_over", {})[name] = dates.get(name, old.get("machine", {}).get("date_utc", "?"))


def rerender_notes(folder: Path) -> Path:
    """Rewrite ``benchmarks.md`` from the figures stored in ``benchmarks.json`` with the current notes files.

    The notes cite the figures of the last measured run; editing them must not require (or silently trigger) a new
    run whose figures would no longer match the text.
    """
    stored = folder / "benchmarks.json"
    if not stored.exists():
        raise RlprepError(f"no {stored} to re-render", "run `make bench` first (it measures and writes it)")
    try:
        report = json.loads(stored.read_text())
    except json.JSONDecodeError as exc:
        raise RlprepError(f"{stored} is not valid JSON ({exc})", "run `make bench` to measure and rewrite it") from exc
    attach_notes(report, folder)
    write_report(report, folder, "benchmarks")
    return folder / "benchmarks.md"


def gpu_section(gpu_md: str) -> str:
    """The GPU report as a section of ``docs/benchmarks.md``: headings one level down, between markers."""
    body = []
    for line in gpu_md.strip().splitlines():
        if line.startswith("# "):
            line = "## GPU: `make gpu-check`" + line[len("# Benchmarks"):]
        elif line.startswith("#"):
            line = "#" + line
        body.append(line)
    return "\n".join([GPU_BEGIN, *body, GPU_END])


def splice_gpu_section(benchmarks_md: str, gpu_md: str) -> str:
    """``benchmarks_md`` with its GPU section replaced by ``gpu_md`` (appended when it has none yet)."""
    section = gpu_section(gpu_md)
    if GPU_BEGIN in benchmarks_md and GPU_END in benchmarks_md:
        head, rest = benchmarks_md.split(GPU_BEGIN, 1)
        tail = rest.split(GPU_END, 1)[1]
        return head + section + tail
    return benchmarks_md.rstrip() + "\n\n" + section + "\n"


# ----------------------------------------------------------------------------------------------- markdown
def fmt(x, nd=2):
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def _skip_or_error(r: dict) -> str:
    return str(r.get("skipped", r.get("error")))


def render_markdown(report: dict) -> str:
    """The report as markdown: the machine line, notes, one part per measured section, then the notes files."""
    lines = _header(report)
    for key, render in SECTION_RENDERERS.items():
        if key in report["sections"]:
            lines += render(report["sections"][key], report)
    if report.get("skipped_for_budget"):
        lines += ["## Skipped for the time budget", "",
                  f"skipped: {', '.join(report['skipped_for_budget'])} (the {fmt(report.get('budget_s'), 0)} s "
                  "budget was spent)", ""]
    if report.get("extra_markdown"):
        lines += [report["extra_markdown"].rstrip(), ""]
    if report.get("gpu_markdown"):
        lines += [gpu_section(report["gpu_markdown"]).rstrip(), ""]
    return "\n".join(lines)


def _header(report: dict) -> list[str]:
    m = report["machine"]
    lines = ["# Benchmarks", "",
             f"Generated by `{report['command']}` on {m['date_utc']}: {m['cpu_count']} CPU cores ({m['cpu']}), "
             f"device `{m['device']}`{', GPU ' + m['gpu'] if 'gpu' in m else ''}, torch {m['torch']}, "
             f"transformers {m.get('transformers', '-')}, trl {m.get('trl', 'not installed')}; "
             f"1-minute load average at the start {fmt(m.get('loadavg_1m_at_start', float('nan')), 1)}. "
             f"Profile `{report['profile']}`, total wall time {fmt(report['wall_s'], 0)} s.", "",
             "Figures are medians over repeated runs; every ratio comes from figures measured in the same run. "
             "A machine shared with other jobs inflates every time (a load average above the core count means "
             "it was); the ratios are the figures to compare.", ""]
    load = m.get("loadavg_1m_at_start")
    if isinstance(load, (int, float)) and m.get("cpu_count") and load > m["cpu_count"]:
        lines += [f"**This run shared the machine with other jobs** (load {load:.1f} on {m['cpu_count']} cores): "
                  "absolute figures are inflated.", ""]
    if report.get("carried_over"):
        lines += ["Sections not measured by this command, kept from the run that measured them: " + ", ".join(
            f"{name} ({date})" for name, date in report["carried_over"].items()) + ".", ""]
    if report.get("notes"):
        lines += ["Notes:", ""] + [f"- {n}" for n in report["notes"]] + [""]
    return lines


def _steps(s: dict, report: dict) -> list[str]:
    lines = ["## Training steps (ours vs TRL)", "",
             "| loop | batch | ours steps/s | TRL steps/s | ours tokens/s | TRL tokens/s | ours / TRL |",
             "|---|---|---|---|---|---|---|"]
    for name, key in (("grpo", "completion_tokens_per_s"), ("dpo", "tokens_per_s")):
        r = s.get(name, {})
        if "ours" not in r:
            lines.append(f"| {name} | - | {r.get('skipped', r.get('error', '-'))} | | | | |")
            continue
        t = r["trl"]
        if "skipped" in t or "error" in t:
            lines.append(f"| {name} | {r['batch']} | {fmt(r['ours']['steps_per_s'])} | "
                         f"{_skip_or_error(t)} | {fmt(r['ours'][key], 0)} | - | - |")
        else:
            lines.append(f"| {name} | {r['batch']} | {fmt(r['ours']['steps_per_s'])} | {fmt(t['steps_per_s'])} | "
                         f"{fmt(r['ours'][key], 0)} | {fmt(t[key], 0)} | {fmt(r['ours_over_trl_steps_per_s'])}x |")
    paired = [f"{name} {fmt(s[name]['paired_ratio_median'])}x (lowest pair {fmt(s[name]['paired_ratio_min'])}x)"
              for name in ("grpo", "dpo") if "paired_ratio_median" in s.get(name, {})]
    interleaved = ("The two loops ran interleaved in one process (a TRL step, then one of ours); median of the "
                   f"per-pair ratios: {', '.join(paired)}." if paired else "")
    return lines + ["", "GRPO tokens = sampled completion tokens; DPO tokens = prompt + chosen + rejected tokens. "
                    "TRL runs with bf16, gradient checkpointing and lr set explicitly (its defaults differ)."
                    + (" " + interleaved if interleaved else ""), ""]


def _target(r: dict, report: dict) -> list[str]:
    lines = ["## Time to target (GRPO from the SFT start, ours vs TRL)", ""]
    if "start_accuracy" not in r:
        return lines + [_skip_or_error(r), ""]
    seeds = r.get("ours", {}).get("seeds", 1)
    what = r.get("warm_start") or f"{r.get('sft_steps')}-step SFT"
    lines += [f"Warm start: {what}. Start accuracy {fmt(r['start_accuracy'], 3)} "
              f"(greedy, the same {r['eval_prompts']} held-out prompts for both); target "
              f"{fmt(r['target_accuracy'], 3)}{' (+%g points)' % r['points'] if 'points' in r else ''}; bound "
              f"{fmt(r['bound_s'], 0)} s of training per run (evaluation excluded); {r['setting']}; "
              + (f"{seeds} seeds per trainer, run interleaved. Medians over seeds, (min-max) after them; an "
                 "unreached run counts at its bound." if "runs" in r.get("ours", {}) else "one run per trainer."), "",
              "| loop | reached | steps | training s | dip (lowest of the first 10 evaluations - start) |",
              "|---|---|---|---|---|"]
    for name in ("ours", "trl"):
        x = r.get(name, {})
        if "skipped" in x or "error" in x:
            lines.append(f"| {name} | {_skip_or_error(x)} | | | |")
        elif "runs" not in x:  # a report from before seeds were added: one run
            lines.append(f"| {name} | {'yes' if x['reached'] else _reached(x)} | {x['steps']} | {fmt(x['train_s'], 1)} "
                         "| |")
        else:
            def cell(k, nd, x=x):
                return f"{fmt(x[k]['median'], nd)} ({fmt(x[k]['min'], nd)}-{fmt(x[k]['max'], nd)})"

            lines.append(f"| {name} | {x['reached']}/{x['seeds']} | {cell('steps', 0)} | {cell('train_s', 1)} | "
                         f"{cell('dip', 3)} |")
    if "trl_over_ours_train_s" in r:
        lines += ["", f"TRL / ours, median training seconds to target: **{fmt(r['trl_over_ours_train_s'])}x**; "
                      f"median steps: {fmt(r['trl_over_ours_steps'])}x."]
    if "runs" in r.get("ours", {}) and "runs" in r.get("trl", {}):
        lines += ["", "| seed | ours steps | ours s | TRL steps | TRL s |", "|---|---|---|---|---|"]
        for seed, (o, t) in enumerate(zip(r["ours"]["runs"], r["trl"]["runs"])):
            lines.append(f"| {seed} | {o['steps']} | {_reached(o)} | {t['steps']} | {_reached(t)} |")
    return lines + [""]


def _reached(run: dict) -> str:
    """A run's training seconds to target, or that it did not get there within them."""
    return fmt(run["train_s"], 1) if run["reached"] else f"not reached in {fmt(run['train_s'], 0)} s"


def _rollout(r: dict, report: dict) -> list[str]:
    lines = ["## Rollouts (sampled tokens/s)", ""]
    if "ours" not in r:
        return lines + [_skip_or_error(r), ""]
    return lines + [
        f"{r['batch']} {r['task']} prompts, up to {r['max_new_tokens']} new tokens, temperature 1, "
        "KV cache in both; calls interleaved.", "",
        "| sampler | tokens/s | tokens per call |", "|---|---|---|",
        f"| rlprep.rollout.generate | {fmt(r['ours']['tokens_per_s'], 0)} | {fmt(r['ours']['tokens_per_call'], 0)} |",
        f"| model.generate | {fmt(r['hf_generate']['tokens_per_s'], 0)} | "
        f"{fmt(r['hf_generate']['tokens_per_call'], 0)} |", "",
        f"Ours / model.generate: {fmt(r['ours_over_hf'])}x.", ""]


def _grading(r: dict, report: dict) -> list[str]:
    lines = ["## Grading (`rlprep grade` on each solution notebook)", ""]
    if "skipped" in r or "error" in r:
        return lines + [_skip_or_error(r), ""]
    return lines + ["| lab | seconds | exit code |", "|---|---|---|"] + [
        f"| {lab} | {fmt(x['seconds'], 1)} | {x['exit_code']} |" for lab, x in r.items() if isinstance(x, dict)] + [""]


def _classroom(r: dict, report: dict) -> list[str]:
    lines = ["## A class through nbgrader (`rlprep classroom autograde --jobs N`)", ""]
    if "skipped" in r or "error" in r:
        return lines + [_skip_or_error(r), ""]
    serial = r["serial"]
    lines += [f"{r['students']} simulated students x {r['lab']}, SQLite gradebook, sandbox: {r['sandbox']}. "
              f"The serial cycle (`rlprep classroom simulate`) graded {fmt(serial['per_minute'], 1)} submissions/"
              f"minute, " + ("every grade as the lab's tests give it" if not serial["mismatches"] else
                             f"{len(serial['mismatches'])} grades differ from the lab's tests") +
              "; the class was then autograded again with each number of processes (autograde + feedback):", "",
              "| processes | submissions/minute | seconds | grades identical to serial |", "|---|---|---|---|"]
    for n, x in r["jobs"].items():
        same = "yes" if x["identical_to_serial"] else f"NO: {', '.join(x['differ']) or 'refused'}"
        lines.append(f"| {n} | {fmt(x['per_minute'], 1)} | {fmt(x['seconds'], 1)} | {same} |")
    lines += ["", "With N processes the time includes starting N - 1 of them (`spawn`: each imports nbgrader "
              "and torch), a fixed cost that a class of a few students does not earn back on a loaded 2-core "
              "machine.", ""]
    return lines + _classroom_scale(r)


def _classroom_scale(r: dict) -> list[str]:
    """What the measured rate means for a course (200 students x 9 labs) and what scales it."""
    if not r.get("jobs"):
        return []
    best_n, best = max(((n, x["per_minute"]) for n, x in r["jobs"].items()), key=lambda kv: kv[1])
    load, cores = r.get("loadavg_1m"), r.get("cpu_count")
    where = (f" on {cores} cores with a 1-minute load average of {fmt(load[0], 1)} at the start and "
             f"{fmt(load[1], 1)} at the end" if load and cores else "")
    return [f"Measured here{where}: at best {fmt(best, 1)} submissions/minute ({best_n} process(es)), so 200 "
            f"students x 9 labs (1,800 submissions) would take {fmt(1800 / max(best, 1e-9), 0)} minutes. The "
            "course's target of at least 120 submissions/minute (under 15 minutes) is for a grading server: each "
            "of `--jobs` processes grades one notebook at a time in its own sandboxed kernel and the work is "
            "CPU-bound, so the rate can grow with the cores given to it (one process per free core); a shared "
            "2-core machine cannot show that, and this figure does not claim the target.", ""]


def _image(r: dict, report: dict) -> list[str]:
    if "table_median" not in r:
        return ["## Image diff", "", _skip_or_error(r), ""]
    return ["## Image diff", "", r["table_median"], "", r["table_best"], ""]


def _tests(r: dict, report: dict) -> list[str]:
    return ["## Test suite", "",
            (f"`make test` wall time: {fmt(r['seconds'], 0)} s (from `build/make-test-seconds`, written "
             f"{r['written']})." if "seconds" in r else str(r.get("skipped"))), ""]


def _labs(r: dict, report: dict) -> list[str]:
    lines = [f"## Labs in the {report.get('labs_profile', 'gpu')} profile", ""]
    if "skipped" in r or "error" in r:
        return lines + [_skip_or_error(r), ""]
    lines += [f"Each lab trains with its `for_profile` config and stops at its share of the labs' "
              f"{fmt(r.get('labs_budget_s', float('nan')), 0)} s budget (\"stopped\" below); figure: "
              f"`{report.get('figure', 'none')}`.", "",
              "| lab | wall s | steps (planned) | figures |", "|---|---|---|---|"]
    for lab, x in r.items():
        if not isinstance(x, dict):
            continue
        if "error" in x:
            lines.append(f"| {lab} | error | | {x['error']} |")
        elif lab == "warm_starts":
            lines.append(f"| warm starts | {fmt(x['wall_s'], 0)} | | {x['what']} |")
        else:
            figs = ", ".join(f"{k} {fmt(v, 3)}" for k, v in x.items()
                             if k not in ("wall_s", "steps", "planned_steps", "stopped_at_budget", "curve")
                             and v is not None)
            stopped = " stopped" if x.get("stopped_at_budget") else ""
            lines.append(f"| {lab} | {fmt(x['wall_s'], 0)} | {x['steps']} ({x.get('planned_steps', '-')})"
                         f"{stopped} | {figs} |")
    return lines + [""]


def _interview(r: dict, report: dict) -> list[str]:
    from rlprep.bench.interview_scoring import render

    return render(r, report)


def _first_plot(r: dict, report: dict) -> list[str]:
    from rlprep.bench.first_plot import render

    return render(r, report)


SECTION_RENDERERS = {"steps": _steps, "target": _target, "rollout": _rollout, "grading": _grading,
                     "classroom": _classroom, "image": _image, "interview": _interview, "first_plot": _first_plot,
                     "tests": _tests,
                     "labs": _labs}
"""Section key -> its markdown part, in the order the report shows them."""
