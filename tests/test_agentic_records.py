"""``python -m rlprep.agentic.experiments <experiment> --record``: the records notebooks 07 and 08 show."""

from __future__ import annotations

import json
import math

import rlprep.tinyworld
from rlprep import records
from rlprep.agentic import experiments


def _eval(success, proxy, turns, valid):
    return {"reward/gold": success, "reward/proxy": proxy, "stats/turns": turns, "stats/valid_actions": valid}


def test_reward_runs_flatten_to_one_key_per_setup_statistic_and_time():
    result = {"outcome + process": {"before": _eval(0.52, 0.6, 4.91, 0.95),
                                    "after": _eval(0.5712, 0.7, 4.6333, 0.9)}}
    values = experiments.record_values("rewards", result)
    assert values["outcome_process_success_before"] == 0.52
    assert values["outcome_process_success_after"] == 0.571      # rounded to 3 decimals
    assert values["outcome_process_turns_after"] == 4.633
    assert values["outcome_process_valid_actions_after"] == 0.9
    assert len(values) == 8                                       # 4 statistics × before/after


def test_credit_and_evolution_keep_their_shapes_and_nan_becomes_null():
    credit = experiments.record_values("credit", {"turn": {"grad_var": [1789.04], "signal": [59.6], "snr": [2.1349]}})
    assert credit == {"turn_grad_var": 1789.04, "turn_signal": 59.6, "turn_snr": 2.135}
    evolution = experiments.record_values("evolution", {"all": {"success": [0.52, 0.4612], "kept_fraction": [math.nan, 1.0],
                                                                "round": [0, 1]}})
    assert evolution == {"all_success": [0.52, 0.461], "all_kept_fraction": [None, 1.0]}
    json.dumps(evolution, allow_nan=False)                        # valid JSON: no NaN in a record


def test_record_flag_writes_what_the_experiment_returned_with_its_command(tmp_path, monkeypatch):
    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    monkeypatch.setattr(rlprep.tinyworld, "load_policy", lambda task, profile: (None, None))
    study = {"window": ["full", 1], "success": [0.4734, 0.2], "aliasing": [1.0, 7.3981]}
    monkeypatch.setattr(experiments, "compaction_study", lambda model, tokenizer, seed=0: study)
    assert experiments.main(["compaction", "--profile", "smoke", "--record"]) == 0
    doc = records.load("agentic_compaction")
    assert doc["values"] == {"window": ["full", 1], "success": [0.473, 0.2], "aliasing": [1.0, 7.398]}
    assert doc["command"] == "python -m rlprep.agentic.experiments compaction --profile smoke --record"
    assert doc["profile"] == "smoke"


def test_without_record_flag_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    monkeypatch.setattr(rlprep.tinyworld, "load_policy", lambda task, profile: (None, None))
    monkeypatch.setattr(experiments, "compaction_study", lambda model, tokenizer, seed=0: {"success": [0.5]})
    assert experiments.main(["compaction", "--profile", "smoke"]) == 0
    assert not list(tmp_path.iterdir())


def test_a_records_path_that_is_a_file_fails_before_the_run_with_error_and_fix(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "records"
    blocker.write_text("not a folder")
    monkeypatch.setenv("RLPREP_RECORDS", str(blocker))

    def must_not_run(*args, **kwargs):
        raise AssertionError("the experiment ran although its record could not be written")

    monkeypatch.setattr(rlprep.tinyworld, "load_policy", must_not_run)
    assert experiments.main(["compaction", "--profile", "smoke", "--record"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "\nfix: " in err and "Traceback" not in err


def test_tag_writes_a_second_record_beside_the_first_with_its_command(tmp_path, monkeypatch):
    # W19 quotes the hacking comparison at two learning rates: the second run must not overwrite the first record
    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    monkeypatch.setattr(rlprep.tinyworld, "load_policy", lambda task, profile: (None, None))
    monkeypatch.setattr(experiments, "compaction_study", lambda model, tokenizer, seed=0: {"success": [0.5]})
    assert experiments.main(["compaction", "--profile", "smoke", "--record"]) == 0
    assert experiments.main(["compaction", "--profile", "smoke", "--tag", "lr3e4", "--record"]) == 0
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["agentic_compaction.json", "agentic_compaction_lr3e4.json"]
    doc = records.load("agentic_compaction_lr3e4")
    assert doc["command"] == "python -m rlprep.agentic.experiments compaction --profile smoke --tag lr3e4 --record"
    assert records.command_line(doc) == "rlprep record agentic compaction --profile smoke --tag lr3e4"


def test_a_tag_that_cannot_name_a_record_fails_before_the_run_with_error_and_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))

    def must_not_run(*args, **kwargs):
        raise AssertionError("the experiment ran although its tag cannot name a record")

    monkeypatch.setattr(rlprep.tinyworld, "load_policy", must_not_run)
    assert experiments.main(["compaction", "--profile", "smoke", "--tag", "lr=3e-4", "--record"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "\nfix: " in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())
