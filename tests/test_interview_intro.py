"""W01's self-introduction builder and the Markdown renderers the notebooks call."""

from __future__ import annotations

import pytest

from interview_support import FIXTURE_BANK, run_cli
from rlprep.errors import RlprepError
from rlprep.interview.bank import han_count
from rlprep.interview.intro import build_intro, example_intro, intro_template, render_intro_template
from rlprep.interview.render import render_rubric, render_section_extras, render_spoken


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
    assert spoken._repr_markdown_() == spoken and "> 固定测试文本。" in spoken
    n = han_count("固定测试文本。")  # the fixture's W04 answer: the label gives its length and its time at 200 字/min
    assert f"*Spoken answer: {n} 字, about {n / 200:.1f} minutes at 200 字 a minute (an interview answer fits in 2).*" in spoken
    assert "面试口述版" not in spoken                          # the notebook's heading cell is its one title
    extras = render_section_extras("W04")
    assert "TD 残差" not in extras and "the TD residual" not in extras  # the key points are the rubric, not a layer
    assert "固定测试误区。" in extras and "*A fixture answer.*" in extras
    assert "**终止状态怎么处理？**" in extras and "乘 (1-done) 截断。" in extras and "- fixture" in extras
    assert "TD 残差" in render_rubric("W04")
    with pytest.raises(RlprepError, match="no entry 'W33'"):
        render_spoken("W33")


def test_a_value_that_repeats_the_template_verb_is_not_said_twice():
    zh = build_intro(role="我负责奖励设计", focus="主要负责 RLHF", name="我叫王晨")
    assert "我负责奖励设计，" in zh and "，主要负责RLHF。" in zh and "我叫王晨，" in zh
    assert "负责负责" not in zh and "负责我负责" not in zh and "负责主要负责" not in zh and "我叫我叫" not in zh
    en = build_intro("en", focus="I mainly own RLHF", role="responsible for reward design", name="Ann")
    assert "where I mainly own RLHF." in en and "responsible for reward design, and" in en
    assert build_intro("en", name="Owen").startswith("Hello, I'm Owen;")  # a name that starts like "own" stays


def test_cli_intro_in_english_warns_about_placeholders_and_asks_before_replacing(tmp_path):
    home = tmp_path / "home"
    proc = run_cli(["mock", "--intro", "--lang", "en"], home, stdin="Ann\n\nreward design\n")
    assert proc.returncode == 0, proc.stderr
    draft = (home / "self_intro_W01.md").read_text(encoding="utf-8")
    assert draft.startswith("Hello, I'm Ann; 【your current role") and "mainly own reward design" in draft
    assert "你的名字" not in proc.stdout and " words)" in proc.stdout
    assert "warning: 8 part(s) still in 【…】 brackets" in proc.stdout and "what exactly you did in it" in proc.stdout
    again = run_cli(["mock", "--intro"], home, stdin="李雷\n")      # scripted, no --force: refused, draft kept
    assert again.returncode == 2 and "error: a W01 draft already exists" in again.stderr
    assert "--force" in again.stderr and "Traceback" not in again.stderr
    assert (home / "self_intro_W01.md").read_text(encoding="utf-8") == draft
    forced = run_cli(["mock", "--intro", "--force"], home, stdin="李雷\n")
    assert forced.returncode == 0 and (home / "self_intro_W01.md").read_text(encoding="utf-8").startswith("面试官好，我叫李雷")


def test_on_a_terminal_an_existing_draft_is_kept_unless_the_learner_says_yes(tmp_path, monkeypatch):
    import io

    from rlprep.interview.intro import run_intro

    monkeypatch.setenv("RLPREP_HOME", str(tmp_path))
    (tmp_path / "self_intro_W01.md").write_text("my old draft\n", encoding="utf-8")
    answers = iter(["n"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    out = io.StringIO()
    assert run_intro(out=out, interactive=True) == "my old draft"
    assert "my old draft" in out.getvalue() and "kept your draft" in out.getvalue()
    answers = iter(["y", "王晨"] + [""] * 9)
    assert run_intro(out=io.StringIO(), interactive=True).startswith("面试官好，我叫王晨")
    assert (tmp_path / "self_intro_W01.md").read_text(encoding="utf-8").startswith("面试官好，我叫王晨")


def test_every_notebook_titles_each_spoken_answer_once():
    """Each render_spoken cell sits under one "#### 面试口述版" heading cell, and renders no title of its own."""
    import nbformat

    from interview_support import SRC

    for path in sorted((SRC.parent / "notebooks").glob("*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        for i, cell in enumerate(cells):
            if cell.cell_type == "code" and "render_spoken(" in cell.source:
                above = cells[i - 1].source
                assert above.startswith("#### 面试口述版") and above.count("面试口述版") == 1, (path.name, cell.id)
