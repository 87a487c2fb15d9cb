"""records.table/show: the walkthrough notebooks' way to quote a measured figure from the record that wrote it."""

import pytest

from rlprep import records
from rlprep.errors import RlprepError


@pytest.fixture
def recdir(tmp_path, monkeypatch):
    monkeypatch.setenv("RLPREP_RECORDS", str(tmp_path))
    records.record("toy", {"acc_start": 0.5, "acc_end": 0.8125, "steps": 30, "label": "grpo"},
                   command="python -m rlprep.demos.toy --record", profile="cpu")
    return tmp_path


def test_table_quotes_the_recorded_values_in_order_with_labels_and_provenance(recdir):
    text = records.table("toy", ["acc_end", "steps"], labels={"acc_end": "accuracy after"}, fmt=".2f")
    lines = text.splitlines()
    assert lines[2] == "| accuracy after | 0.81 |"
    assert lines[3] == "| steps | 30 |"          # ints are not formatted as floats
    assert "acc_start" not in text
    assert "rlprep record toy" in text and "`cpu` profile" in text  # the stored module form, shown as the CLI


def test_table_defaults_to_every_value(recdir):
    text = records.table("toy")
    for key in ("acc_start", "acc_end", "steps", "label"):
        assert f"| {key} |" in text


def test_a_missing_key_names_the_keys_the_record_has(recdir):
    with pytest.raises(RlprepError) as err:
        records.table("toy", ["accuracy"])
    assert "'accuracy'" in err.value.problem and "acc_end" in err.value.fix


def test_a_missing_record_says_how_to_write_it(recdir):
    with pytest.raises(RlprepError) as err:
        records.show("nope")
    assert "nope" in err.value.problem
