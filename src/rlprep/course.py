"""The course's table of contents: every walkthrough notebook and graded lab, with the question ids each answers.

One place for the map, used by the start page, ``rlprep progress`` and the coverage tests.
Ids come from the course map (W = third-round interview list, G = topic guide) or from the algorithm atlas's own
questions (A, issue #23), which have no course-map row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rlprep.paths import repo_root


@dataclass(frozen=True)
class Unit:
    """One notebook or lab of the course."""

    path: str
    """Path from the repository root."""
    title: str
    """Title shown on the start page."""
    ids: tuple[str, ...] = field(default=())
    """Question ids answered here (course map W/G, or atlas A)."""
    kind: str = "notebook"
    """``notebook`` (walkthrough) or ``lab`` (graded, nbgrader)."""

    def exists(self, root: Path | None = None) -> bool:
        root = root or repo_root()
        return root is not None and (root / self.path).is_file()


NOTEBOOKS: tuple[Unit, ...] = (
    Unit("notebooks/00_start_here.ipynb", "Start here: the map, three paths, profiles and your progress"),
    Unit("notebooks/01_rlhf_pipeline.ipynb", "The RLHF pipeline", ("G01", "G05", "G18", "G19")),
    Unit("notebooks/02_gae.ipynb", "GAE: bias, variance and λ", ("W04", "G08")),
    Unit("notebooks/03_ppo_clip_vs_kl.ipynb", "PPO: clip vs KL", ("W05", "W06", "G03", "G04", "G09", "G10", "G13")),
    Unit("notebooks/04_importance_sampling.ipynb", "Importance sampling and off-policy RL", ("W07",)),
    Unit("notebooks/05_dpo.ipynb", "DPO and the β sweep", ("W12", "W13", "G02", "G14")),
    Unit("notebooks/06_grpo_dapo.ipynb", "GRPO, DAPO, GSPO and the zero loss", ("W08", "W09", "W10", "W11", "W20", "W24", "W25")),
    Unit("notebooks/07_agentic_rl.ipynb", "Agentic RL", ("W02", "W03", "W14", "W15", "W16", "W17", "W18")),
    Unit("notebooks/08_reward_design_and_hacking.ipynb", "Reward design and reward hacking", ("W19", "G06", "G16")),
    Unit("notebooks/09_distillation_frontier.ipynb", "On-policy distillation and DeepSeek-V4", ("W21", "W22", "W23")),
    Unit("notebooks/10_engineering.ipynb", "Engineering: memory, monitoring, troubleshooting", ("G07", "G11", "G12", "G17")),
    Unit("notebooks/11_multimodal.ipynb", "Multimodal models", ("W26", "W27", "W28", "W29", "W30", "W31", "W32", "G15")),
    Unit("notebooks/12_image_diff.ipynb", "The image-diff coding round", ("W33",)),
    Unit("notebooks/13_algorithm_atlas.ipynb", "The post-training algorithm atlas",
         ("A01", "A02", "A03", "A04", "A05", "A06", "A07", "A08", "A09")),
    Unit("notebooks/90_mock_interview.ipynb", "Mock interviews and your self-introduction", ("W01",)),
)

LABS: tuple[Unit, ...] = (
    Unit("labs/lab01_gae/lab01_gae.ipynb", "Lab 1: GAE by hand", ("W04", "G08"), "lab"),
    Unit("labs/lab02_reward_model/lab02_reward_model.ipynb", "Lab 2: a Bradley–Terry reward model", ("G01", "G16"), "lab"),
    Unit("labs/lab03_ppo_rlhf/lab03_ppo_rlhf.ipynb", "Lab 3: PPO-RLHF", ("G03", "G09", "G10", "W06"), "lab"),
    Unit("labs/lab04_dpo/lab04_dpo.ipynb", "Lab 4: DPO with a β sweep", ("W12", "G02", "G14"), "lab"),
    Unit("labs/lab05_grpo/lab05_grpo.ipynb", "Lab 5: GRPO/DAPO and the zero loss", ("W08", "W11", "W24", "W25"), "lab"),
    Unit("labs/lab06_importance_sampling/lab06_importance_sampling.ipynb", "Lab 6: importance sampling", ("W07",), "lab"),
    Unit("labs/lab07_infonce/lab07_infonce.ipynb", "Lab 7: InfoNCE and temperature", ("W30",), "lab"),
    Unit("labs/lab08_image_diff/lab08_image_diff.ipynb", "Lab 8: image diff at 4K", ("W33",), "lab"),
    Unit("labs/lab09_atlas/lab09_atlas.ipynb", "Lab 9: the atlas by hand (RLOO, Dr. GRPO, CISPO, IPO, SimPO)",
         ("A01", "A02", "A03", "A04"), "lab"),
)


def notebook_for(question_id: str) -> Unit:
    """The walkthrough notebook that answers ``question_id``."""
    for unit in NOTEBOOKS:
        if question_id in unit.ids:
            return unit
    raise KeyError(f"no notebook answers {question_id!r}")


def course_map_markdown(root: Path | None = None) -> str:
    """The start page's map as a Markdown table; units not written yet are marked as such."""
    rows = ["| part | what | question ids |", "|---|---|---|"]
    for unit in NOTEBOOKS + LABS:
        label = f"[{Path(unit.path).name}]({'../' + unit.path})" if unit.exists(root) else f"{Path(unit.path).name} *(not written yet)*"
        rows.append(f"| {label} | {unit.title} | {' '.join(unit.ids) or '—'} |")
    return "\n".join(rows)
