"""``rlprep mock --defend labs/<lab>/<lab>.ipynb``: defend your own lab, as a senior interviewer would make you.

It gathers facts from the learner's own work (:mod:`.defence_facts`: answer cells, the grade report, training runs),
picks up to :data:`MAX_QUESTIONS` (a failed property first, then a run, then code), and asks them one at a time.
Offline each question is the fact's template; with ``--llm`` the model rephrases it, held to naming the fact's anchor
(the function, test or figure) and to asking, with the template standing in when its reply is invalid twice. The
grade comes from grading the notebook now (``rlprep.grading.grade``), or ``--grade-json``, or, when neither works,
the latest grade in the history. The transcript is saved after every answer in
``$RLPREP_HOME/defences/<lab>-<time>.json`` (never the key).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from rlprep.errors import RlprepError
from rlprep.interview.bank import Text
from rlprep.interview.defence_facts import Fact, answer_cells, code_facts, find_runs, grade_facts, recorded_grade_fact
from rlprep.interview.defence_facts import run_facts

MAX_QUESTIONS = 3
PHRASE_MAX_TOKENS = 300
PHRASE_SCHEMA = {"type": "object", "properties": {"question_zh": {"type": "string"}, "question_en": {"type": "string"}},
                 "required": ["question_zh", "question_en"]}
SYSTEM = """You are the interviewer in a code defence: the candidate did a lab of an LLM reinforcement-learning course \
and must explain their own work. You get one fact about it. Ask one question about that fact that makes the candidate \
explain or justify it.
Rules: name the fact's anchor exactly as given (it must appear in both questions); never give the answer, the cause \
or the fix; one sentence in Chinese ("question_zh") and one in English ("question_en"), each ending with a question \
mark.
Reply with one JSON object and nothing else: {"question_zh": "...？", "question_en": "...?"}"""


def gather(notebook: Path, grade_json: Path | None, runs: Path | None) -> tuple[str, dict, list[Fact], list[str]]:
    """The lab, the notebook JSON, every fact found, and notes on what could not be read."""
    from rlprep.paths import data_dir

    notes: list[str] = []
    try:
        nb = json.loads(notebook.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise RlprepError(f"cannot read {notebook} as a notebook ({err})", "pass your lab notebook, e.g. "
                          "labs/lab05_grpo/lab05_grpo.ipynb") from None
    lab = nb.get("metadata", {}).get("rlprep", {}).get("lab") or notebook.stem
    facts = _grade(notebook, lab, grade_json, notes)
    run_files = find_runs(lab, runs, data_dir())
    if runs is not None and not run_files:
        notes.append(f"no history.json under {runs}")
    for path in run_files:
        facts += run_facts(path)
    cells = answer_cells(nb)
    if not cells:
        notes.append(f"{notebook} has no answer cells (nbgrader solution cells)")
    facts += code_facts(cells)
    return lab, nb, facts, notes


def _grade(notebook: Path, lab: str, grade_json: Path | None, notes: list[str]) -> list[Fact]:
    if grade_json is not None:
        try:
            text = grade_json.read_text(encoding="utf-8").strip()
            return grade_facts(json.loads(text.splitlines()[-1]) if text else {})
        except (OSError, ValueError, IndexError) as err:
            raise RlprepError(f"cannot read {grade_json} as `rlprep grade --json` output ({err})",
                              f"save it with: rlprep grade {notebook} --json > {grade_json}") from None
    try:
        from rlprep.grading.grade import grade_notebook

        print(f"grading {notebook} first (rlprep grade), to ask about what failed…", flush=True)
        return grade_facts(grade_notebook(notebook).as_json())
    except Exception as err:  # a grading failure must not end the defence: the history's grade stands in
        notes.append(f"could not grade it now ({getattr(err, 'problem', err)})")
    from rlprep.interview import history as answers

    opener = getattr(answers, "AnswerHistory", None) or answers.AnswerHistory  # the class is being renamed (AnswerHistory)
    with opener() as history:
        recorded = history.lab_grades().get(lab)
    return [recorded_grade_fact(lab, recorded)] if recorded else []


def pick(facts: list[Fact], n: int = MAX_QUESTIONS) -> list[Fact]:
    """Up to ``n`` facts: one of each kind in the order failed/recorded, run, not implemented, code, passed; then the
    rest in that order."""
    order = ("failed", "recorded", "run", "not_implemented", "code", "passed")
    ranked = sorted(facts, key=lambda f: order.index(f.kind))
    first = [next(f for f in ranked if f.kind == kind) for kind in order if any(f.kind == kind for f in ranked)]
    return (first + [f for f in ranked if f not in first])[:n]


def phrase_messages(lab: str, fact: Fact, code: str) -> list[dict]:
    user = (f"Lab: {lab}\nFact: {fact.text}\nAnchor (name it exactly): {fact.anchor}\n"
            + (f"The candidate's code:\n<<<\n{code}\n>>>\n" if code else "")
            + f"A plain version of the question: {fact.question.en}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def check_phrasing(data: dict, fact: Fact) -> tuple[Text | None, list[str]]:
    zh, en = data.get("question_zh"), data.get("question_en")
    problems = [f'"{k}" must be a non-empty string' for k, v in (("question_zh", zh), ("question_en", en))
                if not isinstance(v, str) or not v.strip()]
    if problems:
        return None, problems
    zh, en = zh.strip(), en.strip()
    for text, marks in ((zh, "？?"), (en, "?")):
        if text[-1] not in marks:
            problems.append(f"{text[:40]!r} is not a question")
        if fact.anchor.casefold() not in text.casefold():
            problems.append(f"{text[:40]!r} does not name the anchor {fact.anchor!r}")
    return (None, problems) if problems else (Text(zh, en), [])


class Defence:
    """One defence: the questions asked, the answers, saved after each answer."""

    def __init__(self, lab: str, notebook: Path, facts: list[Fact], interviewer=None):
        from rlprep.paths import data_dir

        self.lab, self.notebook, self.facts, self.interviewer = lab, notebook, facts, interviewer
        self.path = data_dir() / "defences" / f"{lab}-{time.strftime('%Y%m%d-%H%M%S')}.json"
        self.record = {"lab": lab, "notebook": str(notebook), "started_at": time.time(),
                       "llm": interviewer.client.config.as_record() if interviewer else None, "questions": []}

    def question(self, fact: Fact, code: str) -> tuple[Text, str]:
        """The question for ``fact`` and who wrote it (``template`` or ``llm:<model>``)."""
        if self.interviewer is None:
            return fact.question, "template"
        from rlprep.interview.grounding import ask_checked
        from rlprep.interview.llm_client import LLMError

        model = self.interviewer.model
        try:
            text, problems = ask_checked(
                lambda m: self.interviewer.send(m, PHRASE_SCHEMA, "a defence question", PHRASE_MAX_TOKENS, 0.3),
                phrase_messages(self.lab, fact, code), lambda data: check_phrasing(data, fact))
        except LLMError as err:
            text, problems = None, [str(err)]
        if text is None:
            if self.interviewer.offline_reason is None or problems != [self.interviewer.offline_reason]:
                self.interviewer.notice(f"{model} gave no valid question ({problems[-1]}): the template instead")
            return fact.question, "template"
        return text, f"llm:{model}"

    def save(self, fact: Fact, asked: Text, source: str, answer: str, interrupted: bool = False) -> None:
        from rlprep.live import atomic_write_bytes

        self.record["questions"].append({"kind": fact.kind, "fact": fact.text, "anchor": fact.anchor,
                                         "question": {"zh": asked.zh, "en": asked.en}, "asked_by": source,
                                         "answer": answer, "interrupted": interrupted, "hint": fact.hint})
        atomic_write_bytes(self.path, json.dumps(self.record, ensure_ascii=False, indent=1).encode())


def _code_of(fact: Fact, cells: list[tuple[str, str]]) -> str:
    """The answer cell that defines the fact's function (for code facts), cut to 60 lines."""
    for _, source in cells:
        if fact.kind in ("code", "not_implemented") and f"def {fact.anchor}(" in source:
            return "\n".join(source.splitlines()[:60])
    return ""


def _read_answer(stream, interactive: bool) -> tuple[str, bool]:
    """Lines up to an empty line; returns (text, end of input)."""
    lines: list[str] = []
    while True:
        try:
            line = input("> ") if interactive else stream.readline()
        except EOFError:
            return "\n".join(lines).strip(), True
        if not interactive and line == "":
            return "\n".join(lines).strip(), True
        if not line.strip():
            return "\n".join(lines).strip(), False
        lines.append(line.rstrip("\n"))


def run_defence(args: argparse.Namespace) -> int:
    """The ``--defend`` mode of ``rlprep mock``."""
    from rlprep.grading.grade import resolve_submission

    notebook = resolve_submission(args.defend)
    if not notebook.is_file() or notebook.suffix != ".ipynb":
        raise RlprepError(f"{args.defend} is not a notebook file", "pass your lab notebook, e.g. rlprep mock --defend "
                          "labs/lab05_grpo/lab05_grpo.ipynb")
    lab, nb, facts, notes = gather(notebook, args.grade_json, args.runs)
    chosen = pick(facts)
    if not chosen:
        raise RlprepError(f"found nothing to ask about in {notebook} ({'; '.join(notes) or 'no facts'})",
                          "grade the lab first (rlprep grade), or pass --runs with a training run")
    interviewer = None
    if args.llm:
        from rlprep.interview.llm_interviewer import from_environment

        interviewer = from_environment(None, ask_first=not args.no_confirm)
    stream = args.answers.open(encoding="utf-8") if args.answers is not None else sys.stdin
    interactive = args.answers is None and sys.stdin.isatty()
    if interviewer is not None:
        interviewer.status = print
        interviewer.sends = "The facts of your lab (your code, its grade, your runs) and your answers"
        interviewer.confirm = _consent(stream, interactive, ask=interviewer.ask_first)
    defence = Defence(lab, notebook, chosen, interviewer)
    cells = answer_cells(nb)
    print(f"Code defence: {lab}, {len(chosen)} question(s) about your own work. End each answer with an empty line.")
    for note in notes:
        print(f"note: {note}")
    try:
        for n, fact in enumerate(chosen, 1):
            asked, source = defence.question(fact, _code_of(fact, cells))
            for notice in interviewer.take_notices() if interviewer else []:
                print(f"note: {notice}")
            print(f"\n── Defence {n}/{len(chosen)} · {fact.kind} · {fact.anchor} ──")
            print(asked.show(args.lang))
            answer, ended = _read_answer(stream, interactive)
            defence.save(fact, asked, source, answer)
            if fact.hint:
                print(f"(the course discusses this in {fact.hint}: rlprep mock --ids {fact.hint})")
            if ended:
                break
    except KeyboardInterrupt:
        print(f"\ninterrupted: {len(defence.record['questions'])} answer(s) saved to {defence.path}")
        return 130
    finally:
        if args.answers is not None:
            stream.close()
    print(f"\nSaved to {defence.path}.")
    return 0


def _consent(stream, interactive: bool, ask: bool):
    def confirm(text: str) -> bool:
        print("\n" + text)
        if not ask:
            print("(--no-confirm: sending without asking)")
            return True
        print("Send it? Type y to send, anything else to continue with the templates:")
        line = input("send? [y/N] ") if interactive else stream.readline()
        return line.strip().lower() in ("y", "yes")

    return confirm
