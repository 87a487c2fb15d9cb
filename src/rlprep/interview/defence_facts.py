"""What a code defence asks about: facts from the learner's own lab, each with a templated question.

Three sources, all the learner's own:

- **answer cells** of the notebook (nbgrader ``solution`` cells): a function still raising ``NotImplementedError``,
  or a line of the learner's code worth defending (:data:`SALIENT`);
- **the grade report** (``rlprep grade``'s cells: which properties failed, with the grader's message), or all passed;
- **training runs** (``history.json`` of a run folder, :func:`rlprep.live.run_steps`): a loss of 0 while ``grad_norm``
  is not, groups with identical rewards, entropy collapsing, the chosen log-probability falling under DPO, a critic
  that explains nothing.

Each :class:`Fact` carries its ``anchor`` (the function, test or figure a question about it must name) and a bilingual
templated question, asked as is offline; with ``--llm`` the model rephrases it (:mod:`.defend`).
"""

from __future__ import annotations

import ast
import json
import math
from dataclasses import dataclass
from pathlib import Path

from rlprep.interview.bank import Text

SALIENT = ("clamp", "clip", "exp(", "log", "mean", "sum(", "std", "eps", "mask", "detach", "where", "min(", "max(",
           "softmax", "gather", "reversed", "cumsum", "sigmoid")
"""Code worth a question: a line of an answer cell that calls one of these is where a choice was made."""
TRAINERS = {"lab02_reward_model": "reward_model", "lab03_ppo_rlhf": "ppo", "lab04_dpo": "dpo", "lab05_grpo": "grpo"}
"""The trainer whose runs (``$RLPREP_HOME/runs/<trainer>-*``) belong to a lab."""
LOSS_KEYS = ("loss/policy", "loss/dpo", "loss/bt")


@dataclass(frozen=True)
class Fact:
    """One thing about the learner's lab, its templated question, and where the course discusses it."""

    kind: str
    """``failed``, ``passed``, ``recorded``, ``not_implemented``, ``code`` or ``run``."""
    text: str
    anchor: str
    question: Text
    hint: str = ""


# -- answer cells --------------------------------------------------------------------------------------------------
def answer_cells(notebook: dict) -> list[tuple[str, str]]:
    """``(grade_id, source)`` of each answer cell (nbgrader ``solution``) of a notebook read as JSON."""
    cells = []
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution") and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            cells.append((meta.get("grade_id", "?"), "".join(source) if isinstance(source, list) else source))
    return cells


def code_facts(cells: list[tuple[str, str]]) -> list[Fact]:
    """A fact per function of the answer cells: still unimplemented, or its first salient line of code."""
    facts = []
    for grade_id, source in cells:
        try:
            tree = ast.parse(source)
        except SyntaxError as err:
            facts.append(Fact("not_implemented", f"answer cell {grade_id} does not compile ({err.msg}, line "
                              f"{err.lineno})", grade_id, Text(
                                  f"答案单元 `{grade_id}` 第 {err.lineno} 行编译不过：你本来想在那里写什么？",
                                  f"Your answer cell `{grade_id}` does not compile at line {err.lineno}: what did you "
                                  "mean to write there?")))
            continue
        lines = source.splitlines()
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                facts.append(_function_fact(node, lines))
    return [f for f in facts if f is not None]


def _function_fact(node: ast.FunctionDef, lines: list[str]) -> Fact | None:
    name = node.name
    body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) and isinstance(
        getattr(node.body[0], "value", None), ast.Constant) else node.body
    if any(isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n) for n in ast.walk(node)):
        return Fact("not_implemented", f"{name} still raises NotImplementedError", name, Text(
            f"`{name}` 还没有实现：你会怎么写？先说输入输出的形状，再说最容易错的一步。",
            f"`{name}` is not implemented yet: how would you write it? Start with the shapes in and out, then the "
            "step that is easiest to get wrong?"))
    first = min((n.lineno for n in body), default=node.lineno)
    last = max((getattr(n, "end_lineno", n.lineno) for n in body), default=node.lineno)
    for raw in lines[first - 1:last]:
        line = raw.strip()
        if line and not line.startswith("#") and any(token in line for token in SALIENT):
            code = line if len(line) <= 90 else line[:89] + "…"
            return Fact("code", f"in {name} the learner wrote: {code}", name, Text(
                f"你在 `{name}` 里写了 `{code}`：为什么这样写？换一种写法或者去掉它，会在哪里出错？",
                f"In `{name}` you wrote `{code}`: why this, and where would it go wrong if you wrote it another way "
                "or dropped it?"))
    return None


# -- the grade -----------------------------------------------------------------------------------------------------
def grade_facts(report: dict) -> list[Fact]:
    """From ``rlprep grade --json``: a fact per failed property; one fact when everything passed."""
    cells = report.get("cells", [])
    failed = [c for c in cells if not c.get("passed")]
    facts = []
    for cell in failed:
        gid, message = cell.get("grade_id", "?"), " ".join(str(cell.get("message") or "").split())
        why = message if len(message) <= 160 else message[:159] + "…"
        facts.append(Fact("failed", f"the grader's {gid} failed: {why or '(no message)'}", gid, Text(
            f"评分里 `{gid}` 没通过（{why or '没有信息'}）：它检查的是什么性质？你的代码哪里违反了它？",
            f"The grader's `{gid}` failed ({why or 'no message'}): what property does it check, and where does your "
            "code break it?")))
    if cells and not failed:
        score = f"{report.get('score', 0):g}/{report.get('max_score', 0):g}"
        facts.append(Fact("passed", f"every property passed ({score})", score, Text(
            f"评分 {score} 全部通过：哪个边界情况测试最可能没覆盖到、而你的代码会算错？",
            f"Every property passed ({score}): which edge case might the tests not cover that your code would get "
            "wrong?")))
    return facts


def recorded_grade_fact(lab: str, grade: dict) -> Fact:
    """When the notebook could not be graded now: the latest grade in the history (its score only)."""
    score = f"{grade['latest']:g}/{grade['max_score']:g}"
    return Fact("recorded", f"the latest recorded grade of {lab} is {score}", score, Text(
        f"你上次 {lab} 的成绩是 {score}：丢分的是哪个性质？你现在会怎么改？",
        f"Your latest {lab} grade was {score}: which property cost you the points, and how would you fix it now?"))


# -- training runs -------------------------------------------------------------------------------------------------
def find_runs(lab: str, given: Path | None, home: Path) -> list[Path]:
    """``history.json`` files to read: under ``given`` (a run folder, or a folder of them), else the newest run of
    the lab's trainer in ``home/runs``."""
    if given is not None:
        return sorted(given.rglob("history.json")) if given.is_dir() else ([given] if given.is_file() else [])
    trainer = TRAINERS.get(lab)
    if trainer is None or not (home / "runs").is_dir():
        return []
    folders = [p for p in (home / "runs").iterdir() if p.is_dir() and p.name.startswith(f"{trainer}-")]
    for folder in sorted(folders, key=lambda p: p.stat().st_mtime, reverse=True):
        found = sorted(folder.rglob("history.json"))
        if found:
            return found
    return []


def _series(rows: list[dict], key: str) -> list[tuple[int, float]]:
    out = []
    for i, row in enumerate(rows):
        value = row.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out.append((int(row.get("step", i)), float(value)))
    return out


def run_facts(path: Path) -> list[Fact]:
    """The notable things of one run's ``history.json``, most telling first."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8")).get("rows", [])
    except (OSError, ValueError, AttributeError):
        return []
    run = path.parent.name
    facts = []
    loss_key = next((k for k in LOSS_KEYS if _series(rows, k)), None)
    grad = dict(_series(rows, "stats/grad_norm"))
    if loss_key:
        zero = next(((s, v) for s, v in _series(rows, loss_key) if abs(v) < 5e-4 and grad.get(s, 0.0) > 1e-3), None)
        if zero:
            step, loss = zero
            figures = f"{loss_key} {loss:.3f}, stats/grad_norm {grad[step]:.2f}"
            facts.append(Fact("run", f"run {run}, step {step}: {figures}", f"{grad[step]:.2f}", Text(
                f"你的 run（{run}）第 {step} 步 loss 是 {loss:.3f}，grad_norm 却是 {grad[step]:.2f}：为什么？模型还在学吗？",
                f"In your run {run}, step {step}, your loss was {loss:.3f} while grad_norm was {grad[step]:.2f}: why? "
                "Is the model still learning?"), hint="W11"))
    tied = max(_series(rows, "stats/frac_zero_std_groups"), key=lambda sv: sv[1], default=None)
    if tied and tied[1] >= 0.5:
        share = f"{tied[1]:.0%}"
        facts.append(Fact("run", f"run {run}, step {tied[0]}: {share} of groups had identical rewards", share, Text(
            f"你的 run 第 {tied[0]} 步有 {share} 的组奖励全相同：这些组给了多少梯度？你会怎么办？",
            f"At step {tied[0]} of your run, {share} of the groups had identical rewards: what gradient do those groups "
            "give, and what would you do?"), hint="W11"))
    entropy = _series(rows, "stats/entropy")
    if len(entropy) >= 2 and entropy[0][1] > 0 and entropy[-1][1] < 0.5 * entropy[0][1]:
        (s0, e0), (s1, e1) = entropy[0], entropy[-1]
        facts.append(Fact("run", f"run {run}: stats/entropy {e0:.2f} at step {s0} -> {e1:.2f} at step {s1}",
                          f"{e1:.2f}", Text(
            f"你的 run 里熵从 {e0:.2f} 掉到了 {e1:.2f}：为什么会掉？掉到这里是问题吗？",
            f"In your run the entropy fell from {e0:.2f} to {e1:.2f}: why did it fall, and is this a problem?"),
            hint="W24"))
    chosen, accuracy = _series(rows, "logps/chosen"), _series(rows, "reward/implicit_accuracy")
    if len(chosen) >= 2 and chosen[-1][1] < chosen[0][1] and accuracy and accuracy[-1][1] >= 0.5:
        c0, c1 = chosen[0][1], chosen[-1][1]
        facts.append(Fact("run", f"run {run}: logps/chosen {c0:.2f} -> {c1:.2f} while implicit accuracy "
                          f"{accuracy[-1][1]:.2f}", f"{c1:.2f}", Text(
            f"你的 DPO run 里 chosen 的 log-prob 从 {c0:.2f} 降到 {c1:.2f}，隐式准确率却是 {accuracy[-1][1]:.2f}：这怎么可能？",
            f"In your DPO run the chosen log-prob fell from {c0:.2f} to {c1:.2f} while the implicit accuracy is "
            f"{accuracy[-1][1]:.2f}: how can both happen?"), hint="W12"))
    explained = _series(rows, "stats/explained_var")
    if explained and explained[-1][1] < 0.1:
        value = f"{explained[-1][1]:.2f}"
        facts.append(Fact("run", f"run {run}: stats/explained_var {value} at the end", value, Text(
            f"你的 PPO run 最后 explained variance 是 {value}：critic 学到了什么？它对优势有什么影响？",
            f"Your PPO run ended with an explained variance of {value}: what has the critic learned, and what does "
            "that do to the advantages?"), hint="W04"))
    return facts
