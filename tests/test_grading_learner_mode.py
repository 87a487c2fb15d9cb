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
    assert server["TerminalsExtensionApp"]["terminal_manager_class"] == "rlprep.lab_terminals.RootTerminalManager"
    assert main(["--config-dir", str(tmp_path), "--undo"]) == 0
    data = json.loads(page.read_text())
    assert data["disabledExtensions"] == {"other:plugin": True}
    assert "terminal_manager_class" not in json.loads((tmp_path / "jupyter_server_config.json").read_text()).get(
        "TerminalsExtensionApp", {})


def test_a_terminal_asked_for_in_a_subfolder_opens_at_the_served_root(tmp_path, monkeypatch):
    """JupyterLab asks for the file browser's folder (notebooks/); the learner-mode manager opens the root."""
    from jupyter_server_terminals.terminalmanager import TerminalManager
    from traitlets import Unicode
    from traitlets.config import Configurable

    from rlprep.lab_terminals import RootTerminalManager

    class Server(Configurable):  # stands for the ServerApp, the manager's parent
        root_dir = Unicode()

    asked = {}
    monkeypatch.setattr(TerminalManager, "create", lambda self, **kwargs: asked.update(kwargs) or {"name": "1"})
    manager = RootTerminalManager(parent=Server(root_dir=str(tmp_path)), shell_command=["sh"])
    assert manager.create(cwd=str(tmp_path / "notebooks")) == {"name": "1"}
    assert asked == {"cwd": str(tmp_path)}


def test_learner_mode_hides_validate_a_real_nbgrader_plugin(tmp_path):
    """Validate runs only the visible tests and can say "Success!" where grading says 5/10: learners get one
    verdict. The plugin id must be one the installed nbgrader extension really registers."""
    import sys
    from pathlib import Path

    import pytest

    static = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader" / "static"
    if not static.is_dir():
        pytest.skip("nbgrader's JupyterLab extension is not installed here")
    plugin = "@jupyter/nbgrader:validate-assignment"
    assert any(plugin in p.read_text(errors="ignore") for p in static.glob("*.js"))
    assert plugin in INSTRUCTOR_PLUGINS
    enable(tmp_path)
    data = json.loads((tmp_path / "labconfig" / "page_config.json").read_text())
    assert data["disabledExtensions"][plugin] is True
