"""Learner mode hides the instructor plugins the way `jupyter labextension disable/lock` would."""

from __future__ import annotations

import json

from rlprep.grading.learner_mode import INSTRUCTOR_PLUGINS, enable, main


def test_enable_and_undo_keep_other_settings(tmp_path):
    page = tmp_path / "labconfig" / "page_config.json"
    page.parent.mkdir(parents=True)
    page.write_text(json.dumps({"disabledExtensions": {"other:plugin": True}}))
    enable(tmp_path)
    data = json.loads(page.read_text())
    for plugin in INSTRUCTOR_PLUGINS:
        assert data["disabledExtensions"][plugin] is True and data["lockedExtensions"][plugin] is True
    assert data["disabledExtensions"]["other:plugin"] is True
    server = json.loads((tmp_path / "jupyter_server_config.json").read_text())
    assert server["ServerApp"]["jpserver_extensions"]["nbgrader.server_extensions.formgrader"] is False
    assert main(["--config-dir", str(tmp_path), "--undo"]) == 0
    data = json.loads(page.read_text())
    assert data["disabledExtensions"] == {"other:plugin": True}
