"""W01 自我介绍: a self-introduction builder from a template and a worked example (``self_intro.yaml``).

``build_intro(name=..., project=..., ...)`` fills the template; a field left out shows as a bracketed prompt
so a draft reads as what is still to write. ``rlprep mock --intro`` asks for each field in the terminal.
"""

from __future__ import annotations

import os
import string
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TextIO

import yaml

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

    >>> build_intro(name="李明").startswith("面试官好，我叫李明")
    True
    """
    tpl = intro_template()
    if lang not in ("zh", "en"):
        raise ValueError(f"lang must be 'zh' or 'en', got {lang!r}")
    keys = [f.key for f in tpl.fields]
    unknown = sorted(set(values) - set(keys))
    if unknown:
        raise ValueError(f"unknown self-introduction field(s) {unknown}; the fields are {keys}")
    filled = {f.key: (values.get(f.key) or "").strip() or f"【{getattr(f.prompt, lang)}】" for f in tpl.fields}
    return getattr(tpl.template, lang).format(**filled)


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


def run_intro(stream: TextIO | None = None, out: TextIO | None = None, interactive: bool | None = None) -> str:
    """Ask for each field (one line each; empty keeps a prompt) and print the filled introduction."""
    stream = sys.stdin if stream is None else stream
    out = sys.stdout if out is None else out
    if interactive is None:
        interactive = stream is sys.stdin and stream.isatty()
    tpl = intro_template()
    out.write("W01 自我介绍 builder: one line per field, empty to leave a placeholder.\n")
    out.write(f"{tpl.length_hint.zh}\n{tpl.length_hint.en}\n\n")
    values: dict[str, str] = {}
    for f in tpl.fields:
        example = tpl.example["zh"][f.key]
        out.write(f"{f.prompt.zh} / {f.prompt.en}\n  e.g. {example}\n")
        out.flush()
        if interactive:
            try:
                line = input("> ")
            except EOFError:
                break
        else:
            line = stream.readline()
            if line == "":
                break
        values[f.key] = line.strip()
    text = build_intro("zh", **values)
    out.write(f"\nYour introduction ({han_count(text)} Chinese characters):\n\n{text}\n\n")
    if any(values.values()):
        out.write(f"saved to {save_intro(text)}\n")
    out.write("Practise it aloud, then answer W01 under the clock: rlprep mock --ids W01\n")
    return text
