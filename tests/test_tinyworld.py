"""The tiny world: tokenizer round trip, tasks, SFT determinism, the checkpoint cache, and the warm starts.

The three ``test_smoke_*_policy`` tests build the smoke-profile SFT checkpoints into the run's shared cache
(tests/conftest.py sets RLPREP_CACHE), so later test files load them for free.
"""

from __future__ import annotations

import dataclasses
import random
import shutil

import pytest
import torch
from transformers import AutoTokenizer

from rlprep.cli import main
from rlprep.errors import RlprepError
from rlprep.profiles import PROFILES, get_profile
from rlprep.rollout import generate
from rlprep.tinyworld import build_tokenizer, get_task, load_policy
from rlprep.tinyworld import checkpoints
from rlprep.tinyworld.model import build_model, count_parameters
from rlprep.tinyworld.sft import SFTConfig, collate, sft_loss, train_sft
from rlprep.tinyworld.tasks.arithmetic import in_test_split
from rlprep.tinyworld.tasks.multiturn import GuessNumberEnv, expert_transcript, play_episodes
from rlprep.tinyworld.transcript import Turn, render_transcript, transcript_text

TEXT = "07+45=52\nReview of the lamp: it is {very} good!~"


# --- tokenizer and model ---------------------------------------------------------------------------
def test_tokenizer_round_trips_through_autotokenizer(tmp_path):
    tokenizer = build_tokenizer()
    tokenizer.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    text = TEXT + tokenizer.eos_token
    assert loaded(text)["input_ids"] == tokenizer(text)["input_ids"]
    assert loaded.padding_side == "left" and loaded.pad_token_id == tokenizer.pad_token_id
    assert loaded.eos_token_id == tokenizer.eos_token_id


def test_one_token_per_character_and_exact_decode():
    tokenizer = build_tokenizer()
    ids = tokenizer(TEXT, add_special_tokens=False)["input_ids"]
    assert len(ids) == len(TEXT) and tokenizer.unk_token_id not in ids
    assert tokenizer.decode(ids) == TEXT
    every_char = "".join(chr(c) for c in range(32, 127)) + "\n"
    assert tokenizer.unk_token_id not in tokenizer(every_char, add_special_tokens=False)["input_ids"]
    assert len(tokenizer) == 99


@pytest.mark.parametrize("name,low,high", [("smoke", 0.1e6, 0.4e6), ("cpu", 0.4e6, 1e6), ("gpu", 10e6, 30e6)])
def test_parameter_counts_match_the_profiles(name, low, high):
    profile = dataclasses.replace(PROFILES[name], device="cpu")
    model = build_model(profile, build_tokenizer())
    assert low <= count_parameters(model) <= high
    assert model.config.attn_pdrop == model.config.resid_pdrop == model.config.embd_pdrop == 0.0
    assert model.config.pad_token_id == 0 and model.config.eos_token_id == 1
    if name == "gpu":
        assert model.config.n_positions >= 128


# --- arithmetic -------------------------------------------------------------------------------------
def test_arithmetic_prompts_answers_and_reward():
    task = get_task("arithmetic")
    examples = task.sample(50, "train", seed=0)
    assert all(len(e.prompt) == 6 and e.prompt[2] == "+" and e.prompt.endswith("=") for e in examples)
    assert task.answer("07+45=") == "52" and task.answer("03-45=") == "-42" and task.answer("12*11=") == "132"
    assert task.verify("07+45=", " 52 ") and not task.verify("07+45=", "53")
    assert task.reward("07+45=", "52") == 1.0 and task.reward("07+45=", "5") == 0.0
    assert [e.prompt for e in task.sample(5, seed=3)] == [e.prompt for e in task.sample(5, seed=3)]
    assert all(len(e.prompt) == 8 for e in task.sample(20, level=6))
    with pytest.raises(ValueError, match="arithmetic prompt"):
        task.answer("hello")


def test_arithmetic_test_split_is_disjoint_from_train():
    task = get_task("arithmetic")
    train = {e.prompt for e in task.sample(3000, "train", seed=0)}
    test = {e.prompt for e in task.sample(1000, "test", seed=0)}
    assert train and test and not train & test
    all_pairs = [(a, b) for a in range(100) for b in range(100)]
    share = sum(in_test_split(a, "+", b) for a, b in all_pairs) / len(all_pairs)
    assert 0.15 < share < 0.25


# --- reviews ----------------------------------------------------------------------------------------
def test_review_grammar_and_gold_scores_worked_by_hand():
    task = get_task("reviews")
    assert task.parses(" it is good.") and task.parses("Review of the lamp: the price is very bad. it is nice.")
    assert not task.parses(" it is goood.") and not task.parses(" it is good") and not task.parses("")
    assert task.gold_score("", " it is great.") == pytest.approx(1.0)
    assert task.gold_score("", " it is very great.") == pytest.approx(1.3)  # one distinct intensifier: x1.3
    assert task.gold_score("", " it is very very great.") == pytest.approx(0.8)  # 1.3 - 0.5 repetition
    assert task.gold_score("", " it is good. the price is bad.") == pytest.approx((0.6 - 0.7) / 2 + 0.2)
    assert task.gold_score("", " it is good. it is good.") == pytest.approx(0.6 - 0.6)
    assert task.gold_score("", " it is good.   ") == pytest.approx(0.6 - 3 * 0.2)  # padding abuse
    assert task.gold_score("", " it is gud.") == -1.5


def test_gold_punishes_the_hack_a_learned_reward_would_love():
    task = get_task("reviews")
    honest = " it is really great."
    hacked = " it is really really really really great."
    assert task.parses(hacked) and task.gold_score("", hacked) < task.gold_score("", honest)


def test_writer_samples_parse_and_splits_use_disjoint_products():
    task = get_task("reviews")
    rng = random.Random(0)
    assert all(task.parses(task.write(rng)) for _ in range(500))
    train = {e.prompt for e in task.sample(300, "train")}
    test = {e.prompt for e in task.sample(300, "test")}
    assert train and test and not train & test


def test_preference_pairs_follow_gold_with_bradley_terry_noise():
    task = get_task("reviews")
    pairs = task.preference_pairs(3000, "train", seed=0)
    assert pairs == task.preference_pairs(3000, "train", seed=0)
    agree = sum(task.gold_score(p.prompt, p.chosen) > task.gold_score(p.prompt, p.rejected) for p in pairs)
    assert 0.7 < agree / len(pairs) < 0.97  # informative, but noisy like real annotators
    assert all(p.chosen != p.rejected for p in pairs)


# --- multiturn --------------------------------------------------------------------------------------
def test_guess_number_env_steps():
    env = GuessNumberEnv()
    assert env.reset(seed=3) == "find 0-31\n"
    target = env.target
    assert env.step(f"guess {target - 1}" if target > 0 else "guess 1")[0] in (": higher\n", ": lower\n")
    observation, reward, done, info = env.step("hello")
    assert observation == ": invalid\n" and reward == 0.0 and not done and not info["valid"]
    observation, reward, done, info = env.step(f" guess {target} ")
    assert (observation, reward, done, info["success"]) == (": correct\n", 1.0, True, True)
    with pytest.raises(ValueError, match="reset"):
        env.step("guess 1")


def test_turn_limit_and_process_reward():
    env = GuessNumberEnv(max_turns=2, process_coef=0.5)
    env.reset(seed=0)
    env.target = 31
    _, reward, done, info = env.step("guess 15")  # midpoint of 0..31: halves the interval
    assert info["process_reward"] == 1.0 and reward == 0.5 and not done
    _, reward, done, info = env.step("guess 17")  # inside 16..31 but far from its midpoint 23.5
    assert info["process_reward"] == 0.0 and reward == 0.0 and done and not info["success"]


def test_binary_search_always_wins_within_the_limit():
    assert all(expert_transcript(seed)[-1].text == ": correct\n" for seed in range(200))


def test_observation_mask_covers_only_environment_tokens():
    tokenizer = build_tokenizer()
    turns = expert_transcript(5, noise=0.3)
    ids, mask = render_transcript(tokenizer, turns)
    assert ids == tokenizer(transcript_text(turns, tokenizer.eos_token), add_special_tokens=False)["input_ids"]
    actions = "".join(tokenizer.decode([i]) if m else "" for i, m in zip(ids, mask))
    assert actions == "".join(t.text + tokenizer.eos_token for t in turns if t.role == "act")
    assert mask[0] == 0 and sum(mask) == sum(len(t.text) + 1 for t in turns if t.role == "act")
    with pytest.raises(ValueError, match="role"):
        Turn("x", "user")


# --- SFT ----------------------------------------------------------------------------------------------
def test_sft_loss_counts_only_action_tokens():
    tokenizer = build_tokenizer()
    model = build_model(get_profile("smoke"), tokenizer, seed=0)
    transcripts = [[Turn("07+45=", "obs"), Turn("52", "act")], [Turn("1+2=", "obs"), Turn("3", "act")]]
    input_ids, attention_mask, loss_mask = collate(tokenizer, transcripts)
    with torch.no_grad():
        loss = sft_loss(model, input_ids, attention_mask, loss_mask)
        logp = model(input_ids=input_ids, attention_mask=attention_mask).logits.log_softmax(-1)
    terms = [-logp[b, t - 1, input_ids[b, t]] for b in range(2) for t in range(1, input_ids.shape[1])
             if loss_mask[b, t]]
    assert len(terms) == 3 + 2  # "52"+eos and "3"+eos
    assert loss.item() == pytest.approx(torch.stack(terms).mean().item(), abs=1e-5)


def _weights(seed: int) -> dict[str, torch.Tensor]:
    tokenizer = build_tokenizer()
    model = build_model(get_profile("smoke"), tokenizer, seed=seed)
    train_sft(model, tokenizer, get_task("arithmetic"), SFTConfig(steps=4, batch=16, lr=3e-3, seed=seed))
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_sft_is_deterministic_for_a_seed():
    first, second, other = _weights(0), _weights(0), _weights(1)
    assert all(torch.equal(first[k], second[k]) for k in first)
    assert not all(torch.equal(first[k], other[k]) for k in first)


def test_sft_config_rejects_nonsense():
    with pytest.raises(ValueError, match="steps"):
        SFTConfig(steps=0, batch=8, lr=1e-3)


# --- the cache, loading and bad input -----------------------------------------------------------------
@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RLPREP_CACHE", str(tmp_path / "cache"))
    return dataclasses.replace(get_profile("smoke"), sft_steps=3)  # a 3-step "smoke" profile: seconds


def test_a_build_gives_the_same_weights_whatever_the_thread_count(private_cache, tmp_path, monkeypatch):
    """The torch thread count changes the order of float sums, and SFT amplifies the last bits into a different
    policy (CI's smoke arithmetic start tied 84% of its level-2 groups at T = 0.5 built with one thread, 25% with
    two): a build pins its own count and gives the caller's back."""
    before = torch.get_num_threads()
    hashes = []
    try:
        for threads in (1, 2):
            monkeypatch.setenv("RLPREP_CACHE", str(tmp_path / f"cache-{threads}"))
            torch.set_num_threads(threads)
            path = checkpoints.ensure_checkpoint("arithmetic", private_cache, progress=False)
            assert torch.get_num_threads() == threads
            hashes.append(checkpoints.read_manifest(path)["sha256"])
    finally:
        torch.set_num_threads(before)
    assert hashes[0] == hashes[1]


def test_corrupted_checkpoint_is_detected_and_rebuilt(private_cache):
    path = checkpoints.ensure_checkpoint("arithmetic", private_cache, progress=False)
    good_hash = checkpoints.read_manifest(path)["sha256"]
    weights = path / checkpoints.WEIGHTS
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])  # a truncated file
    assert "does not match" in checkpoints.verify_checkpoint(path)
    with pytest.warns(RuntimeWarning, match="corrupted"):
        model, tokenizer = load_policy("arithmetic", private_cache)
    assert checkpoints.verify_checkpoint(path) is None
    assert checkpoints.read_manifest(path)["sha256"] == good_hash  # deterministic rebuild
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temp dirs left behind
    assert isinstance(generate(model, tokenizer, ["07+45="], 4, seed=0).texts[0], str)


def test_a_concurrent_builder_that_finishes_first_wins(private_cache, monkeypatch):
    real_build = checkpoints.build_checkpoint

    def build_while_another_process_finishes(task, profile, seed=0, **kwargs):
        tmp, manifest = real_build(task, profile, seed, **kwargs)
        shutil.copytree(tmp, checkpoints.checkpoint_dir(task, profile, seed))  # the other builder lands first
        return tmp, manifest

    monkeypatch.setattr(checkpoints, "build_checkpoint", build_while_another_process_finishes)
    path = checkpoints.ensure_checkpoint("arithmetic", private_cache, progress=False)
    assert checkpoints.verify_checkpoint(path) is None
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # our temp copy was cleaned up


def test_missing_manifest_counts_as_corrupt(private_cache):
    path = checkpoints.ensure_checkpoint("arithmetic", private_cache, progress=False)
    (path / checkpoints.MANIFEST).unlink()
    with pytest.warns(RuntimeWarning, match="manifest"):
        checkpoints.ensure_checkpoint("arithmetic", private_cache, progress=False)
    assert checkpoints.verify_checkpoint(path) is None


def test_a_local_checkpoint_path_loads_as_a_model(private_cache):
    path = checkpoints.ensure_checkpoint("arithmetic", private_cache, progress=False)
    model, tokenizer = load_policy("arithmetic", private_cache, model=str(path))
    assert tokenizer.padding_side == "left" and model.config.n_embd == private_cache.n_embd


def test_unknown_names_and_missing_models_give_clear_errors(tmp_path):
    with pytest.raises(RlprepError, match="unknown task 'chess'") as err:
        get_task("chess")
    assert "arithmetic, reviews, multiturn" in err.value.fix
    with pytest.raises(RlprepError, match="unknown profile"):
        load_policy("arithmetic", "huge")
    with pytest.raises(RlprepError, match="no model checkpoint") as err:
        load_policy("arithmetic", "smoke", model=str(tmp_path / "nowhere"))
    with pytest.raises(RlprepError, match="could not load model") as err:
        load_policy("arithmetic", "smoke", model="rlprep-no-such-org/no-such-model")
    assert "HF_HUB_OFFLINE" in err.value.fix


def test_models_cli_rejects_an_unknown_task(capsys):
    assert main(["models", "build", "--task", "chess"]) == 2
    err = capsys.readouterr().err
    assert "unknown task 'chess'" in err and "fix:" in err


# --- the smoke warm starts (the expensive part: one SFT build per task, cached for later files) --------
def test_smoke_arithmetic_policy_solves_held_out_additions():
    model, tokenizer = load_policy("arithmetic", "smoke")
    task = get_task("arithmetic")
    examples = task.sample(300, "test", seed=123)
    rollout = generate(model, tokenizer, [e.prompt for e in examples], max_new_tokens=5, temperature=0.0)
    accuracy = sum(task.verify(e.prompt, t) for e, t in zip(examples, rollout.texts)) / len(examples)
    assert accuracy >= 0.6, f"held-out 2-digit addition accuracy {accuracy:.2f} < 0.60"


def test_smoke_reviews_policy_writes_grammatical_reviews():
    model, tokenizer = load_policy("reviews", "smoke")
    task = get_task("reviews")
    prompts = [e.prompt for e in task.sample(300, "test", seed=123)]
    rollout = generate(model, tokenizer, prompts, max_new_tokens=60, temperature=1.0, seed=123)
    parse_rate = sum(task.parses(t) for t in rollout.texts) / len(prompts)
    assert parse_rate >= 0.85, f"only {parse_rate:.2f} of temperature-1 samples parse"


def test_smoke_multiturn_policy_searches(capsys):
    model, tokenizer = load_policy("multiturn", "smoke")
    results = play_episodes(model, tokenizer, seeds=list(range(5000, 5064)), temperature=0.0)
    success = sum(r["success"] for r in results) / len(results)
    valid = sum(r["valid"] for r in results) / sum(r["turns"] for r in results)
    assert success >= 0.5 and valid >= 0.9, (success, valid)
    assert main(["models", "list"]) == 0
    listing = capsys.readouterr().out
    smoke = get_profile("smoke")
    assert all(checkpoints.checkpoint_dir(task, smoke).name in listing for task in ("arithmetic", "reviews", "multiturn"))


def test_loading_a_cached_policy_is_silent_on_stderr(capfd):
    load_policy("arithmetic", "smoke")  # cached by the smoke test above
    assert capfd.readouterr().err == ""  # nbgrader scores a test cell 0 when it writes to stderr


def test_checkpoint_key_follows_the_recipe():
    """A changed SFT budget must build a new checkpoint, not silently reuse one trained under the old recipe."""
    import dataclasses

    from rlprep.profiles import get_profile
    from rlprep.tinyworld.checkpoints import checkpoint_dir

    smoke = get_profile("smoke")
    longer = dataclasses.replace(smoke, sft_steps=smoke.sft_steps + 1)
    assert checkpoint_dir("arithmetic", smoke) == checkpoint_dir("arithmetic", smoke)
    assert checkpoint_dir("arithmetic", smoke) != checkpoint_dir("arithmetic", longer)
    assert checkpoint_dir("arithmetic", smoke) != checkpoint_dir("reviews", smoke)


def test_a_first_build_says_what_it_is_that_it_is_cached_and_how_long_it_took(private_cache, tmp_path, monkeypatch,
                                                                            capsys):
    """The notice comes before the build starts; its time is the recorded build of that task and profile."""
    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path / "records"))
    built = checkpoints.ensure_checkpoint("arithmetic", private_cache, progress=False)  # a 3-step build, seconds
    recorded = checkpoints.record_build_times([built])
    manifest = checkpoints.read_manifest(built)
    assert recorded.name == "warm_starts.json"

    class Started(Exception):
        pass

    def build(*args, **kwargs):
        raise Started  # the notice must already be out when the build starts

    monkeypatch.setattr(checkpoints, "build_checkpoint", build)
    with pytest.raises(Started):
        checkpoints.ensure_checkpoint("arithmetic", private_cache, force=True)
    notice = capsys.readouterr().err
    target = checkpoints.checkpoint_dir("arithmetic", private_cache)
    assert notice.startswith(f"building the arithmetic warm start for the smoke profile (a one-time build; make lab "
                             f"builds it ahead): supervised fine-tuning of a fresh GPT-2 for up to 3 steps. It is "
                             f"cached in {target}; later runs load it in seconds.")
    assert f"Expect {checkpoints.wait_text(manifest['metrics']['time/sft_cpu_s'])} (longer" in notice
    from rlprep import records

    doc = records.load(checkpoints.BUILD_RECORD)  # logistics stay in the record, out of a learner's cell (issue 38)
    assert doc["date"] not in notice and doc["machine"] not in notice and "measured" not in notice
    with pytest.raises(Started):  # no recorded build for this task: no figure, only the bar
        checkpoints.ensure_checkpoint("reviews", private_cache)
    assert "The bar below shows the time left." in capsys.readouterr().err
