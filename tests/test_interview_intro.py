"""W01's self-introduction builder and the Markdown renderers the notebooks call."""

from __future__ import annotations

import pytest

from interview_support import FIXTURE_BANK, run_cli
from rlprep.errors import RlprepError
from rlprep.interview.bank import han_count
from rlprep.interview.intro import build_intro, example_intro, intro_template, render_intro_template
from rlprep.interview.render import render_section_extras, render_spoken


def test_template_slots_fill_and_missing_ones_show_their_prompt():
    text = build_intro(name="王晨", project="GRPO 训练")
    assert text.startswith("面试官好，我叫王晨，") and "最相关的经历是GRPO 训练" in text
    assert "【你在项目里具体负责什么】" in text                   # an unfilled slot reads as its prompt
    with pytest.raises(ValueError, match="unknown self-introduction field"):
        build_intro(nmae="x")


def test_worked_example_is_complete_and_about_one_minute():
    zh, en = example_intro("zh"), example_intro("en")
    assert "【" not in zh and "{" not in en
    assert 200 <= han_count(zh) <= 350
    assert "fictional" in en and "虚构" in zh                     # invented numbers are labelled as such
    md = render_intro_template()
    assert all(f"`{{{f.key}}}`" in md for f in intro_template().fields) and zh in md


def test_cli_intro_builds_and_saves_a_draft(tmp_path):
    proc = run_cli(["mock", "--intro"], tmp_path / "home", stdin="李雷\n\n后训练中的奖励设计\n")
    assert proc.returncode == 0, proc.stderr
    draft = (tmp_path / "home" / "self_intro_W01.md").read_text(encoding="utf-8")
    assert draft.startswith("面试官好，我叫李雷，【") and "主要负责后训练中的奖励设计" in draft
    assert draft.strip() in proc.stdout


def test_render_spoken_and_extras_come_from_the_bank(monkeypatch):
    monkeypatch.setenv("RLPREP_BANK", str(FIXTURE_BANK))
    spoken = render_spoken("W04")
    assert spoken._repr_markdown_() == spoken and "> 固定测试文本。" in spoken and "面试口述版" in spoken
    extras = render_section_extras("W04")
    assert "1. TD 残差" in extras and "*the TD residual*" in extras
    assert "**终止状态怎么处理？**" in extras and "乘 (1-done) 截断。" in extras and "- fixture" in extras
    with pytest.raises(RlprepError, match="no entry 'W33'"):
        render_spoken("W33")
