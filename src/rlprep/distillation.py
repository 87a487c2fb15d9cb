"""Knowledge distillation on the tiny world: off-policy forward KL vs on-policy reverse KL (W22, W23).

Two ways to make a small student imitate a larger teacher, both on full-vocabulary logits:

* **forward KL on teacher samples** (classic word-level KD, Hinton et al. 2015, arXiv 1503.02531; sequence-level
  KD, Kim & Rush 2016, arXiv 1606.07947): the teacher writes the completions and the student minimises
  KL(p_T || q_S) at every position of *teacher* prefixes. The student never trains on its own mistakes
  (exposure bias).
* **reverse KL on student samples** (on-policy distillation: GKD, Agarwal et al. 2023, arXiv 2306.13649, Eq. 2-3
  with the reverse-KL divergence; MiniLLM, Gu et al. 2023, arXiv 2306.08543): the student writes the completions
  and minimises KL(q_S || p_T) at every position of *its own* prefixes, with the teacher scoring every token.
  Like GKD, the sampled prefixes are treated as data (no gradient through sampling).

``distill`` logs, per step, the student's compute (tokens through the student, forward passes of generation and
training) so accuracy can be plotted against compute, and evaluates exposure bias as the student's per-token
agreement with the teacher's greedy choice on teacher-written vs student-written prefixes, overall and per completion
position (:func:`agreement_by_position`), next to the task's own quality metric (:func:`task_quality`).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import torch

from rlprep.algos.distill_losses import forward_kl_per_token, reverse_kl_per_token
from rlprep.live import History
from rlprep.model_inputs import position_ids_from_mask
from rlprep.rollout import generate

MODES = ("forward", "reverse")


DIVERGENCES = {"forward": forward_kl_per_token, "reverse": reverse_kl_per_token}


def completion_logits(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, n_completion: int) -> torch.Tensor:
    """Logits that predict the last ``n_completion`` tokens: [B, C, V] from ``input_ids`` [B, P+C] (left-padded)."""
    out = model(input_ids=input_ids, attention_mask=attention_mask,
                position_ids=position_ids_from_mask(attention_mask), use_cache=False)
    return out.logits[:, -n_completion - 1:-1, :]  # (B, C, V): position t predicts token t+1


@dataclass
class DistillConfig:
    """One distillation run of a student against a fixed teacher."""

    mode: str = "reverse"
    """"forward": KL(p_T||q_S) on teacher samples (off-policy KD); "reverse": KL(q_S||p_T) on student samples."""
    steps: int = 20
    """Optimizer steps."""
    batch: int = 32
    """Prompts (one completion each) per step."""
    lr: float = 1e-3
    """AdamW learning rate of the student."""
    max_new_tokens: int = 4
    """Completion budget (2-digit sums need 2-3 digits + eos; reviews up to ~50 characters + eos)."""
    temperature: float = 1.0
    """Sampling temperature of whichever model writes the completions."""
    eval_every: int = 5
    """Evaluate every this many steps (and at steps 0 and the last)."""
    eval_size: int = 128
    """Held-out prompts per evaluation."""
    eval_temperature: float = 0.0
    """Temperature of the evaluation rollouts: 0 = greedy (arithmetic exact match); 1.0 for open-ended tasks whose
    greedy output collapses to a single text (reviews)."""
    seed: int = 0
    """Seeds prompts and sampling."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"DistillConfig.mode must be one of {MODES}, got {self.mode!r}")
        for name in ("steps", "batch", "max_new_tokens", "eval_every", "eval_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"DistillConfig.{name} must be >= 1, got {getattr(self, name)}")
        if not self.eval_temperature >= 0:
            raise ValueError(f"DistillConfig.eval_temperature must be >= 0 (0 = greedy), got {self.eval_temperature}")
        if not self.lr > 0 or not self.temperature > 0:
            raise ValueError(f"DistillConfig needs lr > 0 and temperature > 0, got lr={self.lr}, "
                             f"temperature={self.temperature}")


def build_student(profile, tokenizer, n_layer: int = 1, n_embd: int = 48, n_head: int = 4, seed: int = 0):
    """A fresh GPT-2 smaller than ``profile``'s policy (same tokenizer and context length)."""
    from rlprep.profiles import Profile, get_profile
    from rlprep.tinyworld.model import build_model

    p = profile if isinstance(profile, Profile) else get_profile(profile)
    small = dataclasses.replace(p, n_layer=n_layer, n_embd=n_embd, n_head=n_head)
    return build_model(small, tokenizer, seed=seed)


def warm_start(student, tokenizer, task, steps: int, batch: int = 64, lr: float = 3e-3, seed: int = 0) -> dict:
    """A short SFT on task transcripts so the student knows the answer format (and still has room to improve)."""
    from rlprep.tinyworld.sft import SFTConfig, train_sft

    return train_sft(student, tokenizer, task, SFTConfig(steps=steps, batch=batch, lr=lr, warmup=max(1, steps // 5),
                                                         seed=seed))


def task_quality(task, prompts: list[str], texts: list[str]) -> dict[str, float]:
    """The task's own quality metric of ``texts`` (one completion per prompt), as a flat metrics dict.

    Tasks with a verifier (arithmetic) give ``eval/accuracy`` (exact match via ``task.verify``); tasks with a grammar
    and a gold scorer (reviews) give ``eval/parse_rate`` (``task.parses``) and ``eval/gold_mean``
    (``task.gold_score``).
    """
    if len(prompts) != len(texts) or not prompts:
        raise ValueError(f"need one completion per prompt (and at least one), got {len(prompts)} prompts and "
                         f"{len(texts)} texts")
    n = len(prompts)
    if hasattr(task, "verify"):
        return {"eval/accuracy": sum(task.verify(p, t) for p, t in zip(prompts, texts)) / n}
    if hasattr(task, "parses") and hasattr(task, "gold_score"):
        return {"eval/parse_rate": sum(task.parses(t) for t in texts) / n,
                "eval/gold_mean": sum(task.gold_score(p, t) for p, t in zip(prompts, texts)) / n}
    raise ValueError(f"task {getattr(task, 'name', task)!r} has neither verify() nor parses()/gold_score(): "
                     f"distillation can only evaluate arithmetic- or reviews-like tasks")


@torch.no_grad()
def agreement_by_position(student, teacher, rollout) -> dict[str, torch.Tensor]:
    """Per completion position t, how the student compares with the teacher on the prefixes of ``rollout``.

    Whoever wrote ``rollout`` (teacher or student), at each completion position t both models see the same prefix
    (prompt + the first t written tokens) and each predicts token t.

    Returns (all [C], C = ``rollout.completion_ids.shape[1]``):
        ``tokens``: how many rows have a completion token at t (``completion_mask`` summed over the batch);
        ``agree``: the share of those where the student's argmax equals the teacher's argmax (NaN where tokens = 0);
        ``teacher_nll``: mean −log p_T(written token t | prefix) over those rows, in nats (NaN where tokens = 0);
        ``kl_fwd``: mean KL(p_T || q_S) at t, in nats: classic KD's loss, here measured on whichever prefixes
        ``rollout`` holds (NaN where tokens = 0).
    With greedy rollouts the writer's token *is* its argmax, so ``agree`` is "the other model picks the written token".
    """
    C = rollout.completion_ids.shape[1]
    ids, attn = rollout.input_ids, rollout.attention_mask  # (B, P+C)
    s_logits = completion_logits(student, ids, attn, C)  # (B, C, V)
    t_logits = completion_logits(teacher, ids, attn, C)  # (B, C, V)
    mask = rollout.completion_mask.bool()  # (B, C)
    tokens = mask.sum(0)  # (C,)
    agree = ((s_logits.argmax(-1) == t_logits.argmax(-1)) & mask).sum(0)  # (C,)
    nll = -torch.log_softmax(t_logits.float(), -1).gather(-1, rollout.completion_ids[..., None]).squeeze(-1)  # (B, C)
    kl = forward_kl_per_token(s_logits, t_logits)  # (B, C)
    denom = tokens.float()
    nan = torch.full_like(denom, float("nan"))

    def per_position(total: torch.Tensor) -> torch.Tensor:  # (C,) sums -> (C,) means over rows present at t
        return torch.where(tokens > 0, total.float() / denom.clamp(min=1), nan)

    return {"tokens": tokens, "agree": per_position(agree), "teacher_nll": per_position((nll * mask).sum(0)),
            "kl_fwd": per_position((kl * mask).sum(0))}


def _token_weighted(profile: dict[str, torch.Tensor], key: str) -> float:
    """Average of a per-position rate over all completion tokens (positions weighted by their token counts)."""
    tokens = profile["tokens"].float()
    return float(torch.nan_to_num(profile[key] * tokens).sum() / tokens.sum().clamp(min=1))


@torch.no_grad()
def evaluate_student(student, teacher, tokenizer, task, prompts: list[str], max_new_tokens: int,
                     temperature: float = 0.0, seed: int = 0, by_position: bool = False) -> dict:
    """The task's quality metric, and per-token agreement with the teacher on two kinds of prefixes.

    Quality (:func:`task_quality`) is measured on the student's completions: greedy by default (arithmetic
    ``eval/accuracy``); ``temperature=1.0`` samples (reviews ``eval/parse_rate``, ``eval/gold_mean``: its greedy
    output collapses to one review). ``eval/agree_teacher_prefix``: on completions the *teacher* writes (same
    temperature), how often the student's argmax is the teacher's (what off-policy training optimises).
    ``eval/agree_own_prefix``: the same on completions the *student* writes: the prefixes it faces at test time.
    The gap between them is exposure bias. ``eval/teacher_nll_own`` / ``eval/teacher_nll_teacher``: the teacher's
    mean NLL (nats/token) of student- / teacher-written tokens. ``eval/kl_fwd_teacher_prefix`` /
    ``eval/kl_fwd_own_prefix``: KL(p_T || q_S) (nats/token) on each kind of prefix. Each is a token-weighted mean
    over completion positions.

    With ``by_position=True`` the result also holds ``"by_position"``: ``{"teacher_prefix": {...}, "own_prefix":
    {...}}``, each the lists of :func:`agreement_by_position` (``tokens``, ``agree``, ``teacher_nll``, ``kl_fwd``),
    for plots against completion position. (Not a flat metric: don't pass it to a History row.)
    """
    student.eval()
    own = generate(student, tokenizer, prompts, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)
    ref = generate(teacher, tokenizer, prompts, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)
    on_ref, on_own = agreement_by_position(student, teacher, ref), agreement_by_position(student, teacher, own)
    out: dict = {**task_quality(task, prompts, own.texts),
                 "eval/agree_teacher_prefix": _token_weighted(on_ref, "agree"),
                 "eval/agree_own_prefix": _token_weighted(on_own, "agree"),
                 "eval/teacher_nll_teacher": _token_weighted(on_ref, "teacher_nll"),
                 "eval/teacher_nll_own": _token_weighted(on_own, "teacher_nll"),
                 "eval/kl_fwd_teacher_prefix": _token_weighted(on_ref, "kl_fwd"),
                 "eval/kl_fwd_own_prefix": _token_weighted(on_own, "kl_fwd")}
    if by_position:
        out["by_position"] = {name: {k: v.tolist() for k, v in prof.items()}
                              for name, prof in (("teacher_prefix", on_ref), ("own_prefix", on_own))}
    return out


def distill(student, teacher, tokenizer, task, config: DistillConfig) -> History:
    """Train ``student`` in place toward ``teacher`` (frozen); returns a History with one row per step.

    Rows hold ``loss/distill`` (masked mean per-token KL of the chosen direction), ``stats/student_tokens``
    (cumulative tokens through the student: sampling + training forward), ``stats/teacher_tokens`` and, every
    ``eval_every`` steps, the metrics of :func:`evaluate_student`.
    """
    device = next(student.parameters()).device
    teacher.eval().requires_grad_(False)
    divergence = DIVERGENCES[config.mode]
    optimizer = torch.optim.AdamW(student.parameters(), lr=config.lr, weight_decay=0.0)
    eval_prompts = [e.prompt for e in task.sample(config.eval_size, "test", seed=config.seed + 1)]
    history = History(meta={"config": dataclasses.asdict(config), "trainer": "distill"})
    student_tokens = teacher_tokens = 0
    t0 = time.perf_counter()

    def evaluate() -> dict:
        return evaluate_student(student, teacher, tokenizer, task, eval_prompts, config.max_new_tokens,
                                temperature=config.eval_temperature, seed=config.seed + 2)

    history.append({"step": 0, "stats/student_tokens": 0, "stats/teacher_tokens": 0, **evaluate()})
    for step in range(1, config.steps + 1):
        prompts = [e.prompt for e in task.sample(config.batch, "train", seed=config.seed * 100_003 + step)]
        writer = teacher if config.mode == "forward" else student
        writer.eval()
        rollout = generate(writer, tokenizer, prompts, max_new_tokens=config.max_new_tokens,
                           temperature=config.temperature, seed=config.seed * 7919 + step)
        n_tokens = int(rollout.attention_mask.sum())
        if config.mode == "forward":
            teacher_tokens += n_tokens  # the teacher wrote the data
        else:
            student_tokens += n_tokens  # the student wrote the data (its own forward passes)
        ids, attn = rollout.input_ids.to(device), rollout.attention_mask.to(device)  # (B, P+C)
        C = rollout.completion_ids.shape[1]
        mask = rollout.completion_mask.to(device).float()  # (B, C)
        with torch.no_grad():
            t_logits = completion_logits(teacher, ids, attn, C)  # (B, C, V)
        teacher_tokens += n_tokens
        student.train()
        s_logits = completion_logits(student, ids, attn, C)  # (B, C, V)
        student_tokens += n_tokens
        loss = (divergence(s_logits, t_logits) * mask).sum() / mask.sum().clamp(min=1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        row = {"step": step, "loss/distill": float(loss.detach()), "stats/student_tokens": student_tokens,
               "stats/teacher_tokens": teacher_tokens, "stats/completion_len": float(mask.sum(-1).mean())}
        if step % config.eval_every == 0 or step == config.steps:
            row.update(evaluate())
        history.append(row)
    student.eval()
    history.meta["wall_s"] = time.perf_counter() - t0
    return history
