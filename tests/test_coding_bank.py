"""The coding bank, problem by problem, in-process (the same test cells as the sandboxed grader, scored with
``executor.score_in_process``): the reference gets full marks (base sizes and both retests), every catalogued bug
less, every honest variant full marks, every trivial answer (constant, None, echoed argument, raise) 0; each problem
with a library counterpart is checked against it; the loader names the file and field of a malformed problem."""

from __future__ import annotations

import re

import pytest

from rlprep.coding import sources
from rlprep.coding.bank import TOPICS, load_problems
from rlprep.coding.checks import check_code
from rlprep.coding.grade import grade_source
from rlprep.errors import RlprepError

BANK = load_problems()


@pytest.mark.parametrize("slug", list(BANK))
def test_problem_grades_as_catalogued(slug):
    problem = BANK[slug]
    assert check_code(problem) == []
    reference = sources.reference_source(problem)
    for retest in (None, *(r.name for r in problem.retests)):
        report = grade_source(problem, reference, retest, sandboxed=False)
        assert report.full, (retest, report.text())
    for bug in problem.module("bugs").BUGS:
        report = grade_source(problem, bug.apply(reference), sandboxed=False)
        assert not report.full, f"bug {bug.name!r} ({bug.why}) gets full marks"
    for variant in problem.module("variants").VARIANTS:
        for retest in (None, *(r.name for r in problem.retests)):
            report = grade_source(problem, variant.apply(reference), retest, sandboxed=False)
            assert report.full, (variant.name, retest, report.text())
    for kind, source in sources.trivial_sources(problem).items():
        report = grade_source(problem, source, sandboxed=False)
        assert report.passed == 0, (kind, [r.name for r in report.results if r.passed])


@pytest.mark.parametrize("slug", [s for s, p in BANK.items() if p.has_library])
def test_library_cross_check(slug):
    """The hidden tests compare the answer with the library function the page names, and the reference agrees."""
    problem = BANK[slug]
    library_props = [name for name, (_, lib) in problem.module("tests").P.items.items() if lib]
    assert library_props, f"{slug}: no property compares with {problem.library}"
    report = grade_source(problem, sources.reference_source(problem), sandboxed=False)
    assert all(r.passed for r in report.results if r.name in library_props)


ISSUE_LIST = {  # issue 36's list of what the bank must cover, by topic
    "components": ["softmax", "log_softmax", "logsumexp", "cross_entropy", "layer_norm", "rms_norm", "causal_attention",
                   "gqa_attention", "rope", "kv_cache_decode", "lora_linear", "swiglu", "vit_patchify"],
    "decoding": ["temperature_sampling", "top_k_filter", "top_p_filter", "beam_search", "repetition_penalty",
                 "speculative_accept"],
    "optimisation": ["adamw_step", "clip_grad_norm", "cosine_warmup", "grad_accumulation"],
    "rl": ["discounted_returns", "gae", "ppo_loss", "grpo_advantages", "grpo_loss", "dpo_loss", "bradley_terry",
           "kl_estimators", "truncated_is", "infonce"],
    "training": ["sft_step", "sequence_packing", "bandit_policy_gradient"],
    "infra": ["image_diff_bbox", "topk_heap", "lru_cache", "bpe_merge", "reservoir_sampling", "paged_kv_allocator"],
}


def test_bank_holds_at_least_40_problems_covering_the_issue_list():
    assert len(BANK) >= 40
    for topic, slugs in ISSUE_LIST.items():
        assert {s: BANK[s].topic for s in slugs if s in BANK} == {s: topic for s in slugs}, topic


def test_bank_covers_every_topic_with_bilingual_statements():
    assert {p.topic for p in BANK.values()} == set(TOPICS)
    for p in BANK.values():
        assert p.minutes in (10, 20, 30) and 2 <= len(p.follow_ups) <= 3
        assert [r.name for r in p.retests] == ["day2", "day7"]
        for text in (p.title, p.statement, p.contract, p.notes):
            assert any("\u4e00" <= ch <= "\u9fff" for ch in text.zh), (p.slug, text.zh[:40])
            assert not re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef] [\u4e00-\u9fff]", text.zh), \
                (p.slug, "a space between Chinese characters: a folded YAML line break?", text.zh[:60])


def test_a_malformed_problem_names_its_file_and_field(tmp_path):
    folder = tmp_path / "broken_one"
    folder.mkdir()
    (folder / "problem.yaml").write_text("title: {zh: 坏, en: Broken}\ntopic: cooking\nminutes: 15\n")
    (folder / "reference.py").write_text("")
    with pytest.raises(RlprepError) as err:
        load_problems(str(tmp_path))
    text = str(err.value)
    assert "broken_one/problem.yaml: minutes: must be 10, 20 or 30, got 15" in text
    assert "broken_one/problem.yaml: topic: unknown topic 'cooking'" in text
    assert "broken_one/tests.py: (file): is missing" in text and "broken_one/problem.yaml: entry: is missing" in text


def test_a_bug_whose_text_is_not_in_the_reference_is_reported():
    problem = BANK["softmax"]
    bad = sources.Edit("nowhere", "a stale catalogue entry", {"this text is not there": "x"})
    with pytest.raises(ValueError, match="occurs 0 times in the reference"):
        bad.apply(sources.reference_source(problem))


@pytest.mark.parametrize("slug", list(BANK))
def test_every_starter_compiles_and_scores_zero_as_it_is(slug):
    problem = BANK[slug]
    for retest in (None, "day2", "day7"):
        starter = sources.starter_source(problem, retest)
        compile(starter, f"{slug}.py", "exec")
    assert grade_source(problem, starter, "day7", sandboxed=False).passed == 0


def test_the_starter_file_states_the_problem_and_its_examples():
    problem = BANK["softmax"]
    starter = sources.starter_source(problem)
    compile(starter, "softmax.py", "exec")
    assert problem.statement.en.split(".")[0] in starter and problem.statement.zh[:10] in starter
    assert ">>> softmax(x=tensor([[1., 2., 3.]" in starter and "torch.nn.functional.softmax" in starter
    day7 = sources.starter_source(problem, "day7")
    assert "RETEST (day7)" in day7 and day7 != starter
