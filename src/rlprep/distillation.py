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
agreement with the teacher's greedy choice on teacher-written vs student-written prefixes.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from rlprep.live import History
from rlprep.rollout import generate, position_ids_from_mask

MODES = ("forward", "reverse")


def forward_kl_per_token(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """KL(p_T || q_S) at each position: Σ_v p_T(v) (log p_T(v) − log q_S(v)).

    Args:
        student_logits: [B, T, V] logits of the student q_S.
        teacher_logits: [B, T, V] logits of the teacher p_T (detached by the caller).
    Returns:
        [B, T] float32, ≥ 0. Mass-covering: large where the teacher has mass the student lacks.
    """
    if student_logits.shape != teacher_logits.shape:
        raise ValueError(f"student and teacher logits must have the same [B, T, V] shape, got "
                         f"{tuple(student_logits.shape)} and {tuple(teacher_logits.shape)}")
    log_q = F.log_softmax(student_logits.float(), dim=-1)  # (B, T, V)
    log_p = F.log_softmax(teacher_logits.float(), dim=-1)  # (B, T, V)
    return (log_p.exp() * (log_p - log_q)).sum(-1)


def reverse_kl_per_token(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """KL(q_S || p_T) at each position: Σ_v q_S(v) (log q_S(v) − log p_T(v)) (MiniLLM, arXiv 2306.08543, Eq. 1).

    Args:
        student_logits: [B, T, V] logits of the student q_S.
        teacher_logits: [B, T, V] logits of the teacher p_T (detached by the caller).
    Returns:
        [B, T] float32, ≥ 0. Mode-seeking: large where the student puts mass the teacher does not.
    """
    if student_logits.shape != teacher_logits.shape:
        raise ValueError(f"student and teacher logits must have the same [B, T, V] shape, got "
                         f"{tuple(student_logits.shape)} and {tuple(teacher_logits.shape)}")
    log_q = F.log_softmax(student_logits.float(), dim=-1)  # (B, T, V)
    log_p = F.log_softmax(teacher_logits.float(), dim=-1)  # (B, T, V)
    return (log_q.exp() * (log_q - log_p)).sum(-1)


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
    """Completion budget (2-digit sums need 2-3 digits + eos)."""
    temperature: float = 1.0
    """Sampling temperature of whichever model writes the completions."""
    eval_every: int = 5
    """Evaluate every this many steps (and at steps 0 and the last)."""
    eval_size: int = 128
    """Held-out prompts per evaluation."""
    seed: int = 0
    """Seeds prompts and sampling."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"DistillConfig.mode must be one of {MODES}, got {self.mode!r}")
        for name in ("steps", "batch", "max_new_tokens", "eval_every", "eval_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"DistillConfig.{name} must be >= 1, got {getattr(self, name)}")
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


@torch.no_grad()
def evaluate_student(student, teacher, tokenizer, task, prompts: list[str], max_new_tokens: int) -> dict[str, float]:
    """Greedy accuracy, and per-token agreement with the teacher's greedy choice on two kinds of prefixes.

    ``eval/agree_teacher_prefix``: on the teacher's own greedy completions, how often the student's argmax is the
    teacher's token (what off-policy training optimises). ``eval/agree_own_prefix``: on the student's greedy
    completions, how often the student's token is the teacher's argmax given the same (student-written) prefix.
    The gap between them is exposure bias: errors on prefixes the student will actually face at test time.
    """
    student.eval()
    own = generate(student, tokenizer, prompts, max_new_tokens=max_new_tokens, temperature=0.0)
    acc = sum(task.verify(p, t) for p, t in zip(prompts, own.texts)) / len(prompts)
    ref = generate(teacher, tokenizer, prompts, max_new_tokens=max_new_tokens, temperature=0.0)

    def agreement(rollout, writer_is_teacher: bool) -> float:
        C = rollout.completion_ids.shape[1]
        s = completion_logits(student, rollout.input_ids, rollout.attention_mask, C).argmax(-1)  # (B, C)
        t = completion_logits(teacher, rollout.input_ids, rollout.attention_mask, C).argmax(-1)  # (B, C)
        written = rollout.completion_ids  # (B, C)
        other = s if writer_is_teacher else t  # the model that did not write the prefix
        mask = rollout.completion_mask.bool()
        return float(((other == written) & mask).sum() / mask.sum().clamp(min=1))

    return {"eval/accuracy": acc, "eval/agree_teacher_prefix": agreement(ref, True),
            "eval/agree_own_prefix": agreement(own, False)}


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
    history.append({"step": 0, "stats/student_tokens": 0, "stats/teacher_tokens": 0,
                    **evaluate_student(student, teacher, tokenizer, task, eval_prompts, config.max_new_tokens)})
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
            row.update(evaluate_student(student, teacher, tokenizer, task, eval_prompts, config.max_new_tokens))
        history.append(row)
    student.eval()
    history.meta["wall_s"] = time.perf_counter() - t0
    return history
