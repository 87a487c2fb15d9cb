"""``rlprep mock``: a timed mock interview in the terminal, the interviewer's sheet, and the W01 intro builder."""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from rlprep.errors import RlprepError
from rlprep.interview.session import LANGS, PRESETS, SessionSettings

_EPILOG = """\
how a session runs:
  Each question shows with the time it has; on a terminal the prompt counts down as you type, and the bell
  rings with a warning when the time is up. Answering after the time is allowed and recorded as over time. Type the answer over several lines and end it with an empty
  line (or Ctrl-D). A follow-up question (追问) comes next, answered the same way; then the key points are
  revealed with the ones your answers covered (automatic and approximate: a point counts when your answer
  contains one of its terms, in Chinese or English), and you rate yourself 1-5. An empty answer is saved as
  skipped. Ctrl-C, closing the terminal or `kill` stops the session and keeps everything given so far, the
  half-typed answer and its unfinished line included (exit status 128 + signal: 130 for Ctrl-C).
  Every answer is saved the moment it is given, in $RLPREP_HOME/history.sqlite (else the user data dir).
  Questions never seen come first the same day; from the next day on, what scored low or was seen long ago
  comes back first (Leitner boxes, D+1/D+3/D+7).

scripted input (--answers FILE, or a pipe on stdin), per question:
  the answer lines, an empty line, the follow-up answer lines, an empty line, a rating line (1-5 or empty).
  For a skipped question: an empty line, then the rating line.

presets:
""" + "\n".join(f"  {name:<12} {p.description}" for name, p in PRESETS.items()) + """

a language model as interviewer (--llm; optional, nothing leaves the machine without it):
  Any OpenAI-compatible endpoint: RLPREP_LLM_BASE_URL, RLPREP_LLM_MODEL, the key (if it needs one) in
  RLPREP_LLM_API_KEY or OPENAI_API_KEY. `rlprep llm check` shows the settings and makes one test call. The model
  asks 1-3 follow-ups from what you said and judges each key point (covered/partial/missing/wrong, quoting you);
  an invalid reply is retried once, then the offline scorer takes over and the session says so. You see the first
  request (prompt, endpoint, model) and agree before anything is sent (--no-confirm: shown, not asked).
  --defend NOTEBOOK asks about your own lab: your answer cells, what the grader failed, your training runs.

environment: RLPREP_HOME (where history is kept), RLPREP_BANK (load bank entries from another directory,
for authors checking drafts), RLPREP_LLM_* (above; README, section "mock").
examples:
  rlprep mock --preset third-round
  rlprep mock --topics gae,ppo --questions 3 --minutes 4 --lang zh
  rlprep mock --interviewer --preset rl-core --format markdown > sheet.md
  rlprep mock --intro --lang en
  rlprep mock --llm --preset quick
  rlprep mock --defend labs/lab05_grpo/lab05_grpo.ipynb --llm
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = ("A timed mock interview: questions drawn by spaced repetition, a follow-up (追问) each, "
                          "key-point scoring and a self-rating, saved as you go.")
    parser.epilog = _EPILOG
    setup = parser.add_argument_group("session setup")
    setup.add_argument("--preset", choices=list(PRESETS), help="a ready-made setup (see 'presets' below); "
                       "--questions/--minutes/--topics given alongside override it")
    setup.add_argument("-n", "--questions", type=int, metavar="N", help="number of questions (default 5)")
    setup.add_argument("--topics", metavar="T1,T2", help="only questions with one of these topics, comma-separated "
                       "(rlprep mock --list shows each question's topics)")
    setup.add_argument("--minutes", type=float, metavar="M", help="minutes per question (default 5)")
    setup.add_argument("--ids", metavar="W04,G08", help="exactly these questions, in this order")
    setup.add_argument("--lang", choices=LANGS, default="both", help="display language (default: both)")
    setup.add_argument("--seed", type=int, help="seed the question tie-breaks and the follow-up choice")
    setup.add_argument("--answers", metavar="FILE", type=Path,
                       help="read the answers from FILE instead of the keyboard (format below)")
    modes = parser.add_argument_group("other modes")
    modes.add_argument("--interviewer", action="store_true", help="print an interviewer's sheet for the same setup "
                       "(questions, follow-ups with short answers, what a strong answer contains, a rubric) for "
                       "practising in pairs, instead of running a session")
    modes.add_argument("--format", choices=("text", "markdown"), default="text",
                       help="the interviewer's sheet as plain text (default) or Markdown")
    modes.add_argument("--intro", action="store_true",
                       help="build your W01 self-introduction from a template and a worked example (in Chinese; "
                       "--lang en for English); it asks before replacing a saved draft")
    modes.add_argument("--force", action="store_true", help="with --intro: replace your saved draft without asking")
    modes.add_argument("--defend", metavar="NOTEBOOK", type=Path,
                       help="defend your lab: questions about your answer cells, what the grader failed (it grades "
                       "the notebook first) and your training runs; offline the questions come from templates, with "
                       "--llm the model writes them from the same facts")
    modes.add_argument("--grade-json", metavar="FILE", type=Path,
                       help="with --defend: use this saved `rlprep grade NOTEBOOK --json` report instead of grading")
    modes.add_argument("--runs", metavar="DIR", type=Path,
                       help="with --defend: the training run folder(s) to ask about (a folder with history.json, or a "
                       "folder of them; default: your latest run of the lab's trainer in $RLPREP_HOME/runs)")
    model = parser.add_argument_group("a language model as interviewer (optional)")
    model.add_argument("--llm", action="store_true",
                       help="follow-ups and judgement from the model at RLPREP_LLM_BASE_URL (see below); you see "
                       "the first request and agree before anything is sent")
    model.add_argument("--no-confirm", action="store_true",
                       help="with --llm: send without asking (the first request is still printed); needed when the "
                       "answers come from --answers or a pipe")
    model.add_argument("--scorer", choices=("claims", "keyword"), default=None,
                       help="the offline scorer, and the one that takes over from a model: claims (default: a key "
                       "point said with a misconception's claim counts as wrong) or keyword (terms only)")
    modes.add_argument("--list", action="store_true", help="list the question bank (id, topics, difficulty) and any "
                       "course-map id still missing")
    coding = parser.add_argument_group("coding round (rlprep.coding)")
    coding.add_argument("--coding", action="store_true", help="a timed coding round: a problem you have not solved "
                        "(or a due day-2/day-7 retest variant), its starter file written under --coding-dir, a clock, "
                        "then check / submit (hidden tests, in the sandbox) / quit at the coding> prompt, then the "
                        "follow-ups; with --list, the coding bank")
    coding.add_argument("--problem", metavar="SLUG", help="with --coding: this problem (rlprep mock --coding --list)")
    coding.add_argument("--retest", metavar="NAME", help="with --coding --problem: its day2 or day7 variant")
    coding.add_argument("--coding-dir", metavar="DIR", type=Path,
                        help="with --coding: write the starter file here (default: $RLPREP_HOME/coding)")
    coding.add_argument("--no-coding", action="store_true",
                        help="with --preset third-round: skip the coding round that ends it")
    coding.add_argument("--json", action="store_true", help="with --coding --list: the coding bank as JSON")


def _settings(args: argparse.Namespace) -> SessionSettings:
    topics = tuple(t.strip() for t in args.topics.split(",") if t.strip()) if args.topics else None
    ids = tuple(i.strip() for i in args.ids.split(",") if i.strip()) if args.ids else None
    overrides = dict(n_questions=args.questions, minutes=args.minutes, topics=topics, ids=ids, lang=args.lang,
                     seed=args.seed, scorer=args.scorer)
    if args.preset:
        return SessionSettings.from_preset(args.preset, **overrides)
    if ids and args.questions is None:
        overrides["n_questions"] = len(ids)
    return SessionSettings(**{k: v for k, v in overrides.items() if v is not None})


def _list_bank() -> int:
    from rlprep.interview.bank import load_bank, missing_ids

    bank = load_bank()
    for q in bank.values():
        print(f"{q.id}  d{q.difficulty}  {','.join(q.topics):<32} {q.question.zh[:40]}")
    missing = missing_ids(bank)
    print(f"\n{len(bank)} entries; " + (f"missing: {' '.join(missing)}" if missing else "complete against the course map"))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.coding:
        from rlprep.coding.cli import mock_coding

        return mock_coding(args)
    if args.preset == "third-round" and not (args.interviewer or args.list or args.intro or args.no_coding):
        from rlprep.coding.cli import third_round

        return third_round(args, _run_questions)
    return _run_questions(args)


def _run_questions(args: argparse.Namespace) -> int:
    if args.intro:
        from rlprep.interview.intro import run_intro

        run_intro(lang="en" if args.lang == "en" else "zh", force=args.force)
        return 0
    if args.list:
        return _list_bank()
    if args.no_confirm and not args.llm:
        raise RlprepError("--no-confirm is about sending to a model", "add --llm, or drop --no-confirm")
    if args.llm and not args.no_confirm and (args.answers is not None or not sys.stdin.isatty()):
        raise RlprepError("--llm with scripted answers (--answers or a pipe): nobody is there to agree before "
                          "anything is sent", "add --no-confirm (the first request is still printed), or run in a "
                          "terminal")
    if args.defend is not None:
        from rlprep.interview.defend import run_defence

        return run_defence(args)
    settings = _settings(args)
    from rlprep.interview.bank import load_bank
    from rlprep.interview.history import AnswerHistory
    from rlprep.interview.session import MockSession, interviewer_sheet, plan_questions
    from rlprep.interview.terminal import run_terminal

    bank = load_bank()
    if not bank:
        raise RlprepError("the question bank is empty", "reinstall rlprep, or point RLPREP_BANK at a bank directory")
    if args.interviewer:
        if settings.seed is None:  # printed on the sheet, so the same sheet can be printed again
            settings.seed = random.SystemRandom().randrange(1, 10000)
        sys.stdout.write(interviewer_sheet(plan_questions(bank, settings), settings, args.format))
        return 0
    stream = None
    if args.answers is not None:
        if not args.answers.is_file():
            raise RlprepError(f"no answers file {args.answers}", "pass an existing file to --answers")
        stream = args.answers.open(encoding="utf-8")
    try:
        interviewer = None
        if args.llm:
            from rlprep.interview.llm_interviewer import from_environment

            interviewer = from_environment(settings.scorer, ask_first=not args.no_confirm)
        if interviewer is not None:
            settings.llm = interviewer.client.config.as_record()
        with AnswerHistory() as history:
            session = MockSession(settings, bank=bank, history=history, interviewer=interviewer)
            if stream is not None:
                return run_terminal(session, stream=stream, interactive=False)
            return run_terminal(session)
    finally:
        if stream is not None:
            stream.close()

