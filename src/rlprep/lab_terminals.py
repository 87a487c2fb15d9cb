"""Terminals that open at the course root, whatever folder the file browser shows.

JupyterLab asks the server for a terminal in the file browser's folder (``notebooks/`` on the start page, where
``rlprep grade labs/lab01_gae/lab01_gae.ipynb`` finds no lab). Learner mode
(:mod:`rlprep.grading.learner_mode`) sets ``TerminalsExtensionApp.terminal_manager_class`` to
:class:`RootTerminalManager`, which opens every terminal in the folder the server serves: the repository root.
"""

from __future__ import annotations

from jupyter_server_terminals.terminalmanager import TerminalManager


class RootTerminalManager(TerminalManager):
    """jupyter_server_terminals' manager with each new terminal's ``cwd`` set to the server's ``root_dir``."""

    def create(self, **kwargs):
        kwargs["cwd"] = self.parent.root_dir  # parent: the ServerApp (jupyter_server_terminals passes it)
        return super().create(**kwargs)
