"""One name per quantity: the metrics table, docs/metrics.md and the trainers' logged keys agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlprep.metrics import METRICS, markdown

ROOT = Path(__file__).resolve().parents[1]
LOGGERS = ["trainers/grpo.py", "trainers/grpo_update.py", "trainers/ppo.py", "trainers/dpo.py",
           "trainers/reward_model.py", "demos/stale_rollouts.py", "agentic/train.py", "multimodal/colour_qa.py"]
KEY = re.compile(r'"((?:loss|stats|reward|rewards|eval|time|logps)/[a-z_0-9]+)"')


def test_docs_table_is_generated_from_the_metrics_table():
    assert (ROOT / "docs" / "metrics.md").read_text() == markdown(), "run: python -m rlprep.metrics > docs/metrics.md"
    assert all(unit and meaning for unit, meaning in METRICS.values())


@pytest.mark.parametrize("module", LOGGERS)
def test_every_key_a_trainer_logs_is_in_the_table(module):
    keys = set(KEY.findall((ROOT / "src" / "rlprep" / module).read_text()))
    assert keys, module
    assert not keys - set(METRICS), f"{module} logs names the table lacks: {sorted(keys - set(METRICS))}"


def test_ambiguous_names_are_gone():
    """stats/kl meant a summed k1 in PPO/DPO and a mean k3 in GRPO; stats/clipfrac counted two sides in PPO and one
    in GRPO; DPO logged under both rewards/ and reward/."""
    old = re.compile(r"""["'](stats/kl|stats/clipfrac|rewards/[a-z_]+)["'\\]""")
    hits = [f"{p.relative_to(ROOT)}: {m.group(0)}" for folder in ("src", "notebooks", "tests")
            for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".ipynb") and p.name != "test_metrics.py"
            for m in old.finditer(p.read_text())]
    assert not hits, hits


def test_plot_keys_of_every_config_have_units():
    from rlprep.demos.stale_rollouts import StaleGRPOConfig
    from rlprep.trainers.dpo import DPOConfig
    from rlprep.trainers.grpo import GRPOConfig
    from rlprep.trainers.ppo import PPOConfig
    from rlprep.trainers.reward_model import RewardModelConfig

    for config in (GRPOConfig(), StaleGRPOConfig(), PPOConfig(), DPOConfig(), RewardModelConfig()):
        assert set(config.plot_keys) <= set(METRICS), (type(config).__name__, set(config.plot_keys) - set(METRICS))
