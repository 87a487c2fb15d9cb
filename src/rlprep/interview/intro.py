"""W01 自我介绍: a self-introduction builder from a template and a worked example (``self_intro.yaml``).

``build_intro(name=..., project=..., ...)`` fills the template; a field left out shows as a bracketed prompt
so a draft reads as what is still to write. ``rlprep mock --intro`` (``--lang en`` for English) asks for each
field in the terminal, warns about the 【…】 prompts left, and asks before replacing a saved draft.
"""

from __future__ import annotations

import os
import re
import string
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TextIO

import yaml

from rlprep.errors import RlprepError
from rlprep.interview.bank import Text, han_count


@dataclass(frozen=True)
class IntroField:
    key: str
    prompt: Text


@dataclass(frozen=True)
class IntroTemplate:
    fields: tuple[IntroField, ...]
    template: Text
    example: dict[str, dict[str, str]]
    """``{"zh": {field: value}, "en": {...}}``: the worked example's values."""
    tips: tuple[Text, ...]
    length_hint: Text


@lru_cache(maxsize=1)
def intro_template() -> IntroTemplate:
    """The template, fields, worked example and tips from ``self_intro.yaml``."""
    raw = yaml.safe_load((resources.files("rlprep.interview") / "self_intro.yaml").read_text(encoding="utf-8"))
    fields = tuple(IntroField(f["key"], Text(f["zh"], f["en"])) for f in raw["fields"])
    keys = {f.key for f in fields}
    for lang in ("zh", "en"):
        slots = {name for _, name, _, _ in string.Formatter().parse(raw["template"][lang]) if name}
        if slots != keys or set(raw["example"][lang]) != keys:
            raise ValueError(f"self_intro.yaml: template/example {lang} slots {sorted(slots)} must equal the fields "
                             f"{sorted(keys)}")
    return IntroTemplate(fields, Text(raw["template"]["zh"], raw["template"]["en"]), raw["example"],
                         tuple(Text(t["zh"], t["en"]) for t in raw["tips"]),
                         Text(raw["length_hint"]["zh"], raw["length_hint"]["en"]))


def build_intro(lang: str = "zh", **values: str) -> str:
    """The template filled with ``values``; a missing or empty field shows as ``【prompt】``.

    A value that starts with the words the template puts just before its slot ("负责奖励设计" after "我负责",
    "I mainly own RLHF" after "where I mainly own") loses them, so no verb is said twice.

    >>> build_intro(name="李明").startswith("面试官好，我叫李明")
    True
    >>> "我负责奖励设计，" in build_intro(role="我负责奖励设计")
    True
    """
    tpl = intro_template()
    if lang not in ("zh", "en"):
        raise ValueError(f"lang must be 'zh' or 'en', got {lang!r}")
    keys = [f.key for f in tpl.fields]
    unknown = sorted(set(values) - set(keys))
    if unknown:
        raise ValueError(f"unknown self-introduction field(s) {unknown}; the fields are {keys}")
    template = getattr(tpl.template, lang)
    before = {name: literal for literal, name, _, _ in string.Formatter().parse(template) if name}
    filled = {f.key: _without_repeated_lead((values.get(f.key) or "").strip(), before[f.key], lang)
              or f"【{getattr(f.prompt, lang)}】" for f in tpl.fields}
    return template.format(**filled)


def _without_repeated_lead(value: str, before: str, lang: str) -> str:
    """``value`` without a lead of 2+ characters (whole words in English) that repeats the end of ``before``."""
    tail = before.rstrip()
    for k in range(min(len(tail), len(value)), 1, -1):
        lead = tail[-k:]
        if not value.casefold().startswith(lead.casefold()):
            continue
        if lang == "en" and ((k < len(tail) and tail[-k - 1].isalnum()) or (k < len(value) and value[k].isalnum())):
            continue
        return value[k:].lstrip(" ,，:：")
    return value


def placeholders(text: str) -> list[str]:
    """The 【…】 prompts still left in a built introduction."""
    return re.findall(r"【([^】]*)】", text)


def example_intro(lang: str = "zh") -> str:
    """The worked example (a fictional candidate), built from the same template."""
    return build_intro(lang, **intro_template().example[lang])


class MarkdownText(str):
    """A string that Jupyter displays as Markdown (and prints as itself)."""

    def _repr_markdown_(self) -> str:
        return str(self)


def render_intro_template() -> MarkdownText:
    """The template, its fields, the worked example and tips, as Markdown for the notebook."""
    tpl = intro_template()
    out = ["**Template (模板)**", "", f"> {tpl.template.zh}", ">", f"> {tpl.template.en}", "",
           "| slot | 中文提示 | what to write |", "|---|---|---|"]
    out += [f"| `{{{f.key}}}` | {f.prompt.zh} | {f.prompt.en} |" for f in tpl.fields]
    out += ["", f"*{tpl.length_hint.zh}* {tpl.length_hint.en}", "",
            "**Worked example (示例; a fictional candidate, numbers invented)**", "",
            f"> {example_intro('zh')}", ">", f"> {example_intro('en')}", "",
            f"Length: {han_count(example_intro('zh'))} Chinese characters.", "", "**Tips**", ""]
    out += [f"- {t.zh} ({t.en})" for t in tpl.tips]
    return MarkdownText("\n".join(out) + "\n")


def saved_intro_path() -> Path:
    """Where ``rlprep mock --intro`` keeps the learner's drafted introduction."""
    from rlprep.paths import data_dir

    return data_dir() / "self_intro_W01.md"


def save_intro(text: str) -> Path:
    """Write the draft atomically (temp file, then ``os.replace``); returns its path."""
    path = saved_intro_path()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".self_intro.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    os.replace(tmp, path)
    return path


def run_intro(stream: TextIO | None = None, out: TextIO | None = None, interactive: bool | None = None,
              lang: str = "zh", force: bool = False) -> str:
    """Ask for each field (one line each; empty keeps a prompt) and print the filled introduction in ``lang``.

    An existing draft is replaced only with ``force``, or after a yes on a terminal; otherwise it is shown and
    kept (on a terminal) or the run stops with an error (scripted input), before any field is asked.
    """
    stream = sys.stdin if stream is None else stream
    out = sys.stdout if out is None else out
    if interactive is None:
        interactive = stream is sys.stdin and stream.isatty()

    def ask(prompt: str) -> str | None:
        if interactive:
            try:
                return input(prompt)
            except EOFError:
                return None
        line = stream.readline()
        return None if line == "" else line

    draft = saved_intro_path()
    if draft.is_file() and not force:
        if not interactive:
            raise RlprepError(f"a W01 draft already exists at {draft}",
                              "pass --force to replace it (rlprep mock --intro --force), or move it aside")
        out.write(f"You already have a draft ({draft}):\n\n{draft.read_text(encoding='utf-8')}\n")
        if (ask("Replace it with a new one? [y/N] ") or "").strip().lower() not in ("y", "yes"):
            out.write("kept your draft.\n")
            return draft.read_text(encoding="utf-8").strip()
    tpl = intro_template()
    zh = lang != "en"
    out.write("W01 自我介绍 builder: one line per field, empty to leave a placeholder.\n" if zh else
              "W01 self-introduction builder: one line per field, empty to leave a placeholder.\n")
    out.write(f"{tpl.length_hint.zh}\n{tpl.length_hint.en}\n\n" if zh else f"{tpl.length_hint.en}\n\n")
    values: dict[str, str] = {}
    for f in tpl.fields:
        example = tpl.example["zh" if zh else "en"][f.key]
        out.write((f"{f.prompt.zh} / {f.prompt.en}" if zh else f.prompt.en) + f"\n  e.g. {example}\n")
        out.flush()
        line = ask("> ")
        if line is None:
            break
        values[f.key] = line.strip()
    text = build_intro("zh" if zh else "en", **values)
    size = f"{han_count(text)} Chinese characters" if zh else f"{len(text.split())} words"
    out.write(f"\nYour introduction ({size}):\n\n{text}\n\n")
    if any(values.values()):
        out.write(f"saved to {save_intro(text)}\n")
    left = placeholders(text)
    if left:
        out.write(f"warning: {len(left)} part(s) still in 【…】 brackets, to write yourself: {'; '.join(left)}. "
                  "Edit the saved draft, or run 'rlprep mock --intro --force' again.\n")
    out.write("Practise it aloud, then answer W01 under the clock: rlprep mock --ids W01\n")
    return text
