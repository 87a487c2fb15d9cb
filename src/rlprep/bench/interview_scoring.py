"""The ``interview`` section: how well each scorer of ``rlprep mock`` tells a strong answer from a partial one and
from a wrong one that uses the right words.

The labelled set is ``tests/fixtures/interview_answers.yaml``: for each of its bank entries, a strong, a partial and
a wrong-with-the-right-words answer, written as candidates talk. For each scorer the section counts the entries
whose scores rank strong > partial > wrong (strictly), and how many answers of each label pass
(:data:`rlprep.interview.scoring.PASS_SCORE`). The offline scorers (``keyword``, ``claims``) always run; a language
model judge runs only with ``--llm-judge`` and the ``RLPREP_LLM_*`` settings (:mod:`rlprep.interview.llm_client`),
its answers that fell back to the offline scorer counted apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import yaml

from rlprep.errors import RlprepError

LABELS = ("strong", "partial", "wrong")
LABELLED_SET = Path("tests") / "fixtures" / "interview_answers.yaml"


def load_labelled(path: Path) -> dict[str, dict[str, str]]:
    """``{qid: {"strong": ..., "partial": ..., "wrong": ...}}`` from the labelled set, checked."""
    if not path.is_file():
        raise RlprepError(f"no labelled answer set at {path}", "run from the course checkout (it ships in tests/)")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    bad = [qid for qid, answers in (data or {}).items()
           if not isinstance(answers, dict) or set(answers) != set(LABELS)
           or not all(isinstance(answers[k], str) and answers[k].strip() for k in LABELS)]
    if not data or bad:
        raise RlprepError(f"{path}: entries {bad or '(none)'} need exactly {', '.join(LABELS)}, each a non-empty text",
                          "fix the labelled set")
    return data


def measure(score: Callable, bank: dict, labelled: dict[str, dict[str, str]]) -> dict:
    """One scorer on the labelled set: ranking, passes per label, mean score per label, every score."""
    per_entry: dict[str, dict[str, float]] = {}
    passed = dict.fromkeys(LABELS, 0)
    fell_back = 0
    for qid, answers in labelled.items():
        judged = {label: score(bank[qid], answers[label]) for label in LABELS}
        per_entry[qid] = {label: round(j.score, 4) for label, j in judged.items()}
        for label, judgement in judged.items():
            passed[label] += judgement.passes()
            fell_back += bool(judgement.note)
    n = len(per_entry)
    ranked = sum(s["strong"] > s["partial"] > s["wrong"] for s in per_entry.values())
    means = {label: sum(s[label] for s in per_entry.values()) / n for label in LABELS}
    return {"entries": n, "ranked": ranked, "passed": passed, "mean": means, "fell_back": fell_back,
            "per_entry": per_entry}


def bench_interview_scoring(root: Path, llm_judge: bool = False) -> dict:
    """The offline scorers (and, with ``llm_judge``, the configured model) on the labelled set."""
    from rlprep.interview.bank import load_bank
    from rlprep.interview.offline_scorers import OFFLINE_SCORERS
    from rlprep.interview.scoring import PASS_SCORE

    bank = load_bank()
    labelled = load_labelled(root / LABELLED_SET)
    unknown = sorted(set(labelled) - set(bank))
    if unknown:
        raise RlprepError(f"the labelled set names entries the bank lacks: {', '.join(unknown)}",
                          "fix tests/fixtures/interview_answers.yaml")
    out = {"set": str(LABELLED_SET), "pass_score": PASS_SCORE, "scorers": {}}
    for name in ("keyword", "claims"):
        out["scorers"][name] = measure(OFFLINE_SCORERS[name], bank, labelled)
    if llm_judge:
        name, score = _llm_scorer()
        out["scorers"][name] = measure(score, bank, labelled)
    return out


def _llm_scorer() -> tuple[str, Callable]:
    from rlprep.interview.judge import JUDGE_MAX_TOKENS, JUDGEMENT_SCHEMA, llm_judgement
    from rlprep.interview.llm_client import ChatClient, LLMConfig
    from rlprep.interview.offline_scorers import OFFLINE_SCORERS

    client = ChatClient(LLMConfig.from_env())

    def send(messages: list[dict]) -> str:
        return client.complete(messages, max_tokens=JUDGE_MAX_TOKENS, schema=JUDGEMENT_SCHEMA,
                               schema_name="judgement").text

    def score(question, answer):
        return llm_judgement(send, question, answer, [], OFFLINE_SCORERS["keyword"], client.config.model)

    return f"llm:{client.config.model}", score


def render(r: dict, report: dict) -> list[str]:
    """The section's markdown part."""
    lines = ["## Interview scorers on the labelled answers", ""]
    if "scorers" not in r:
        return lines + [str(r.get("skipped", r.get("error"))), ""]
    n = next(iter(r["scorers"].values()))["entries"]
    lines += [f"{n} bank entries x 3 answers (`{r['set']}`: strong, partial, and wrong with the right words); an "
              f"answer passes at a score of {r['pass_score']:g}. Ranked: the entry's scores order strong > partial > "
              "wrong strictly.", "",
              "| scorer | ranked | wrong answers passed | strong passed | partial passed | mean score strong / partial "
              "/ wrong |", "|---|---|---|---|---|---|"]
    for name, x in r["scorers"].items():
        mean = " / ".join(f"{x['mean'][label]:.2f}" for label in LABELS)
        fell = f" ({x['fell_back']} judgements fell back to the keyword scorer)" if name.startswith("llm:") else ""
        lines.append(f"| {name}{fell} | {x['ranked']}/{n} | {x['passed']['wrong']}/{n} | {x['passed']['strong']}/{n} "
                     f"| {x['passed']['partial']}/{n} | {mean} |")
    return lines + ["", "The labelled answers and the claims scorer's rules were written by the same hand, and many "
                    "wrong answers restate a misconception the bank lists: read the claims row as what it does on "
                    "errors the bank knows, not on every error.", ""]
