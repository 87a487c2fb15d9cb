"""The question bank: one YAML file per course-map id, loaded and validated into dataclasses.

Each entry lives in ``rlprep/interview/bank/<ID>.yaml`` (schema in the team brief and in ``docs``)::

    id: W04
    source: seed-000                  # seed-000 for W ids, seed-002 for G ids
    question: {zh: "...verbatim...", en: "..."}
    topics: [gae, ppo]                # from TOPICS below
    difficulty: 2                     # 1 warm-up, 2 standard, 3 hard
    key_points:                       # 3-6: the mock interview's scoring rubric (never rendered in a notebook)
      - {zh: "...", en: "...", terms: ["δ", "TD residual", "TD 残差"]}
    follow_ups:                       # 2-4: a ladder, each rung deeper than the one before
      - {q: {zh: "...", en: "..."}, a: {zh: "...", en: "..."}}
    spoken_answer_zh: "..."           # 面试口述版, two minutes at most (SPOKEN_MAX_MINUTES)
    notebook: notebooks/02_gae.ipynb#W04
    sources: ["Schulman et al. 2015, ..., arXiv 1506.02438, Sec. 3"]
    misconceptions:                   # 1-4: a wrong statement a candidate makes, and its answer
      - claim: {zh: "λ 越大越好。", en: "A larger λ is always better."}
        answer: {zh: "...", en: "..."}

Each layer's job is stated once, in ``docs/authoring-notebooks.md`` ("The section template").

A malformed entry fails with the file, the id and the field at fault, e.g.
``W04.yaml: key_points[2].terms: must be a non-empty list of strings``; every problem in every file is
listed at once so an author fixes them in one pass. Content checks that a draft may still fail (the spoken
answer's length, the question matching the course map word for word) live in the tests, not here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from rlprep.errors import RlprepError

TOPICS: tuple[str, ...] = (
    "rlhf", "gae", "ppo", "importance-sampling", "dpo", "grpo", "entropy", "agentic", "reward-design",
    "reward-hacking", "distillation", "frontier-models", "engineering", "multimodal", "coding", "self-intro",
)
SOURCES = {"W": "seed-000", "G": "seed-002", "A": "atlas"}
"""W and G ids come from the course map (questions verbatim); A ids are the algorithm atlas's own questions (issue #23).
Every entry links its notebook section (issue #35: each A id has one too)."""
COURSE_MAP_PREFIXES = ("W", "G")
KEY_POINTS_RANGE = (3, 6)
FOLLOW_UPS_RANGE = (2, 4)
MISCONCEPTIONS_RANGE = (1, 4)
_NOTEBOOK_LINK = re.compile(r"^notebooks/[0-9A-Za-z_\-]+\.ipynb#(?P<anchor>[WGA]\d\d)$")
_FIELDS = {"id", "source", "question", "topics", "difficulty", "key_points", "follow_ups", "spoken_answer_zh",
           "notebook", "sources", "misconceptions"}
_OPTIONAL: set[str] = set()
"""Every field is required: an A (atlas) id needs its notebook section too (issue #35)."""
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # C parser if built: 52 entries 0.57 s -> 0.07 s


@dataclass(frozen=True)
class Text:
    """One piece of text in both languages."""

    zh: str
    en: str

    def show(self, lang: str = "both") -> str:
        """The text for a display language: ``zh``, ``en`` or ``both`` (Chinese, then English)."""
        if lang == "zh":
            return self.zh
        if lang == "en":
            return self.en
        return f"{self.zh}\n{self.en}"


@dataclass(frozen=True)
class KeyPoint:
    """A point a strong answer makes; ``terms`` are case-insensitive substrings (either language) that show it."""

    zh: str
    en: str
    terms: tuple[str, ...]

    def text(self) -> Text:
        return Text(self.zh, self.en)


@dataclass(frozen=True)
class FollowUp:
    """An interviewer's follow-up question (追问) with a short answer."""

    q: Text
    a: Text


@dataclass(frozen=True)
class Misconception:
    """A wrong statement a candidate actually makes (``claim``, said as they would say it) and why it is wrong."""

    claim: Text
    answer: Text


@dataclass(frozen=True)
class Question:
    """One validated bank entry."""

    id: str
    source: str
    question: Text
    topics: tuple[str, ...]
    difficulty: int
    key_points: tuple[KeyPoint, ...]
    follow_ups: tuple[FollowUp, ...]
    spoken_answer_zh: str
    notebook: str | None
    sources: tuple[str, ...]
    misconceptions: tuple[Misconception, ...] = ()

    @property
    def notebook_path(self) -> str | None:
        """The notebook file, relative to the repository root (``notebooks/02_gae.ipynb``); None without a link."""
        return None if self.notebook is None else self.notebook.split("#", 1)[0]


def default_bank_dir() -> Path:
    """The bank shipped in the package; ``$RLPREP_BANK`` points elsewhere (for authors checking drafts)."""
    override = os.environ.get("RLPREP_BANK")
    if override:
        return Path(override)
    return Path(str(resources.files("rlprep.interview") / "bank"))


def course_map() -> dict[str, str]:
    """The course map's 52 ids, in order, each with its question verbatim (from ``course_map_ids.txt``)."""
    text = (resources.files("rlprep.interview") / "course_map_ids.txt").read_text(encoding="utf-8")
    ids: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            qid, question = line.split("\t", 1)
            ids[qid] = question
    return ids


class _Problems:
    """Collects ``<file>: <field>: <message>`` lines while one entry is checked."""

    def __init__(self, filename: str):
        self.filename = filename
        self.lines: list[str] = []

    def add(self, field: str, message: str) -> None:
        self.lines.append(f"{self.filename}: {field}: {message}")


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _text(raw: Any, field: str, problems: _Problems) -> Text | None:
    if not isinstance(raw, dict):
        problems.add(field, "must be a mapping with 'zh' and 'en' strings")
        return None
    ok = True
    for lang in ("zh", "en"):
        if not _nonempty_str(raw.get(lang)):
            problems.add(f"{field}.{lang}", "must be a non-empty string")
            ok = False
    extra = set(raw) - {"zh", "en"}
    if extra:
        problems.add(field, f"unknown keys {sorted(extra)} (only 'zh' and 'en')")
        ok = False
    return Text(raw["zh"].strip(), raw["en"].strip()) if ok else None


def _list(raw: Any, field: str, problems: _Problems, bounds: tuple[int, int] | None = None) -> list:
    if not isinstance(raw, list) or not raw:
        problems.add(field, "must be a non-empty list")
        return []
    if bounds and not bounds[0] <= len(raw) <= bounds[1]:
        problems.add(field, f"must have {bounds[0]}-{bounds[1]} items, has {len(raw)}")
    return raw


def _key_point(raw: Any, field: str, problems: _Problems) -> KeyPoint | None:
    if not isinstance(raw, dict):
        problems.add(field, "must be a mapping with 'zh', 'en' and 'terms'")
        return None
    text = _text({k: v for k, v in raw.items() if k in ("zh", "en")}, field, problems)
    terms = raw.get("terms")
    terms_ok = isinstance(terms, list) and terms and all(_nonempty_str(t) for t in terms)
    if not terms_ok:
        problems.add(f"{field}.terms", "must be a non-empty list of strings")
    extra = set(raw) - {"zh", "en", "terms"}
    if extra:
        problems.add(field, f"unknown keys {sorted(extra)}")
    if text is None or not terms_ok or extra:
        return None
    return KeyPoint(text.zh, text.en, tuple(str(t).strip() for t in terms))


def _follow_up(raw: Any, field: str, problems: _Problems) -> FollowUp | None:
    if not isinstance(raw, dict) or set(raw) != {"q", "a"}:
        problems.add(field, "must be a mapping with exactly 'q' and 'a', each {zh, en}")
        return None
    q = _text(raw["q"], f"{field}.q", problems)
    a = _text(raw["a"], f"{field}.a", problems)
    return FollowUp(q, a) if q and a else None


def _misconception(raw: Any, field: str, problems: _Problems) -> Misconception | None:
    if isinstance(raw, dict) and set(raw) == {"zh", "en"}:
        problems.add(field, "is the old {zh, en} form: split it into 'claim' (the wrong statement, as a candidate says "
                            "it) and 'answer' (why it is wrong), each {zh, en}")
        return None
    if not isinstance(raw, dict) or set(raw) != {"claim", "answer"}:
        problems.add(field, "must be a mapping with exactly 'claim' and 'answer', each {zh, en}")
        return None
    claim = _text(raw["claim"], f"{field}.claim", problems)
    answer = _text(raw["answer"], f"{field}.answer", problems)
    return Misconception(claim, answer) if claim and answer else None


def parse_entry(raw: Any, filename: str, known_ids: dict[str, str] | None = None) -> tuple[Question | None, list[str]]:
    """Validate one parsed YAML document; returns the question (or None) and the problems found."""
    problems = _Problems(filename)
    if not isinstance(raw, dict):
        problems.add("(top level)", "must be a mapping of the entry's fields")
        return None, problems.lines
    stem = Path(filename).stem
    qid = raw.get("id")
    if not (isinstance(qid, str) and re.fullmatch(r"[WGA]\d\d", qid)):
        problems.add("id", f"must be a question id like 'W04', 'G12' or 'A01', got {qid!r}")
        qid = None
    else:
        problems.filename = f"{filename} ({qid})" if qid != stem else filename
        if qid != stem:
            problems.add("id", f"{qid!r} does not match the file name (expected {stem!r})")
        if known_ids is not None and qid[0] in COURSE_MAP_PREFIXES and qid not in known_ids:
            problems.add("id", f"{qid!r} is not in the course map")
    for missing in sorted(_FIELDS - _OPTIONAL - set(raw)):
        problems.add(missing, "is missing")
    for extra in sorted(set(raw) - _FIELDS):
        problems.add(extra, f"is not a field of a bank entry (fields: {', '.join(sorted(_FIELDS))})")

    source = raw.get("source")
    if "source" in raw and qid and source != SOURCES[qid[0]]:
        problems.add("source", f"must be {SOURCES[qid[0]]!r} for a {qid[0]} id, got {source!r}")
    question = _text(raw["question"], "question", problems) if "question" in raw else None

    topics: list[str] = []
    if "topics" in raw:
        for i, topic in enumerate(_list(raw["topics"], "topics", problems)):
            if topic not in TOPICS:
                problems.add(f"topics[{i}]", f"unknown topic {topic!r} (known: {', '.join(TOPICS)})")
            else:
                topics.append(topic)
    difficulty = raw.get("difficulty")
    if "difficulty" in raw and (isinstance(difficulty, bool) or difficulty not in (1, 2, 3)):
        problems.add("difficulty", f"must be 1, 2 or 3, got {difficulty!r}")

    key_points = []
    if "key_points" in raw:
        for i, item in enumerate(_list(raw["key_points"], "key_points", problems, KEY_POINTS_RANGE)):
            key_points.append(_key_point(item, f"key_points[{i}]", problems))
    follow_ups = []
    if "follow_ups" in raw:
        for i, item in enumerate(_list(raw["follow_ups"], "follow_ups", problems, FOLLOW_UPS_RANGE)):
            follow_ups.append(_follow_up(item, f"follow_ups[{i}]", problems))

    spoken = raw.get("spoken_answer_zh")
    if "spoken_answer_zh" in raw and not _nonempty_str(spoken):
        problems.add("spoken_answer_zh", "must be a non-empty string")
    notebook = raw.get("notebook")
    if "notebook" in raw:
        match = _NOTEBOOK_LINK.match(notebook) if isinstance(notebook, str) else None
        if not match:
            problems.add("notebook", f"must look like 'notebooks/02_gae.ipynb#W04', got {notebook!r}")
        elif qid and match["anchor"] != qid:
            problems.add("notebook", f"anchor #{match['anchor']} must be the entry's id #{qid}")
    sources = raw.get("sources")
    if "sources" in raw and not (isinstance(sources, list) and sources and all(_nonempty_str(s) for s in sources)):
        problems.add("sources", "must be a non-empty list of strings")
    misconceptions = []
    if "misconceptions" in raw:
        for i, item in enumerate(_list(raw["misconceptions"], "misconceptions", problems, MISCONCEPTIONS_RANGE)):
            misconceptions.append(_misconception(item, f"misconceptions[{i}]", problems))

    if problems.lines:
        return None, problems.lines
    return Question(
        id=qid, source=source, question=question, topics=tuple(topics), difficulty=difficulty,
        key_points=tuple(key_points), follow_ups=tuple(follow_ups), spoken_answer_zh=spoken.strip(),
        notebook=notebook, sources=tuple(s.strip() for s in sources), misconceptions=tuple(misconceptions),
    ), []


def load_entry(path: str | Path, known_ids: dict[str, str] | None = None) -> Question:
    """Load and validate one entry file; raises :class:`RlprepError` listing every problem."""
    path = Path(path)
    question, problems = _load_one(path, known_ids)
    if problems:
        raise _bank_error(problems)
    return question


def _load_one(path: Path, known_ids: dict[str, str] | None) -> tuple[Question | None, list[str]]:
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(yaml)"
        return None, [f"{path.name}: {where}: not valid YAML ({getattr(err, 'problem', err)})"]
    except UnicodeDecodeError:
        return None, [f"{path.name}: (file): not UTF-8 text"]
    return parse_entry(raw, path.name, known_ids)


def _bank_error(problems: list[str]) -> RlprepError:
    noun = "problem" if len(problems) == 1 else "problems"
    return RlprepError(
        f"the question bank has {len(problems)} {noun}:\n  " + "\n  ".join(problems),
        "edit the named file(s); the entry schema is in the docstring of rlprep/interview/bank.py",
    )


def load_bank(path: str | Path | None = None) -> dict[str, Question]:
    """Every entry in ``path`` (default: the package's bank, or ``$RLPREP_BANK``), keyed by id in course-map order.

    Raises :class:`RlprepError` naming each file, id and field at fault. An empty or missing directory
    gives an empty bank; completeness against the course map is :func:`missing_ids`' job.
    """
    directory = Path(path) if path is not None else default_bank_dir()
    known = course_map()
    questions: dict[str, Question] = {}
    problems: list[str] = []
    files = sorted(directory.glob("*.yaml")) if directory.is_dir() else []
    for file in files:
        question, found = _load_one(file, known)
        problems += found
        if question is not None:
            questions[question.id] = question
    if problems:
        raise _bank_error(problems)
    order = {qid: i for i, qid in enumerate(known)}
    return dict(sorted(questions.items(), key=lambda item: order.get(item[0], len(order))))


def missing_ids(bank: dict[str, Question]) -> list[str]:
    """Course-map ids that have no entry in ``bank``, in course-map order."""
    return [qid for qid in course_map() if qid not in bank]


def han_count(text: str) -> int:
    """The number of Chinese (Han) characters: how the spoken answer's length is measured."""
    return sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf")


SPOKEN_HAN_PER_MINUTE = 200
"""The pace a 面试口述版 is timed at: Han characters per minute at a steady interview pace (the Latin terms and
numbers between them are not counted but take time to say)."""
SPOKEN_MAX_MINUTES = 2
"""A spoken answer fits two minutes (issue #17): at most ``SPOKEN_MAX_MINUTES * SPOKEN_HAN_PER_MINUTE`` Han characters."""


def spoken_minutes(text: str) -> float:
    """How long ``text`` takes to say, in minutes, at ``SPOKEN_HAN_PER_MINUTE``."""
    return han_count(text) / SPOKEN_HAN_PER_MINUTE
