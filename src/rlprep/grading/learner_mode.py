"""Learner mode: hide nbgrader's instructor tools (formgrader, create-assignment, course list) in JupyterLab.

    python -m rlprep.grading.learner_mode --config-dir build/jupyter-learner
    JUPYTER_CONFIG_DIR=build/jupyter-learner jupyter lab        # what `make lab` runs

It writes the same ``labconfig/page_config.json`` that
``JUPYTER_CONFIG_DIR=DIR jupyter labextension disable --level=user PLUGIN`` followed by
``jupyter labextension lock --level=user PLUGIN`` writes (directly, because each command takes ~8 s), and a
``jupyter_server_config.json`` that turns the matching server extensions off and opens every new terminal at the
repository root (:mod:`rlprep.lab_terminals`). ``--undo`` removes both. In both modes that file also makes a
walkthrough save without its outputs (:mod:`rlprep.lab_saves`), so running one never changes the checkout.

``rlprep lab --instructor`` serves the repository root, where no ``nbgrader_config.py`` lies, so its formgrader would
read none of ``autograder/``'s settings (the sanitiser of the pages that show a submission among them).
``use_course_config`` writes an ``nbgrader_config.py`` into the same config dir (nbgrader reads one from every
Jupyter config path) that loads ``autograder/nbgrader_config.py``; learner mode removes it.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

INSTRUCTOR_PLUGINS = (
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
    "@jupyter/nbgrader:menu",  # its menu links to Formgrader
    # Validate runs only the visible tests (in the learner's kernel) and says "Success!" where "Grade yourself"
    # (the hidden tests) may say 5/10: learners get one verdict, from grade_here().
    "@jupyter/nbgrader:validate-assignment",
)
# Disabled in learner mode too: the news popup is noise.
QUIET_PLUGINS = ("@jupyterlab/apputils-extension:announcements",)
INSTRUCTOR_SERVER_EXTENSIONS = (
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.course_list",
)
# Terminals open at the root the server serves (where `rlprep grade labs/...` works), not in the file browser's folder.
TERMINAL_MANAGER = "rlprep.lab_terminals.RootTerminalManager"
# A walkthrough is saved without its outputs, so running one never changes a git-tracked file (rlprep.lab_saves).
PRE_SAVE_HOOK = "rlprep.lab_saves.strip_walkthrough_outputs"
# A notebook opens clean: served with the language_info its kernel reports, which JupyterLab would otherwise write in.
CONTENTS_MANAGER = "rlprep.lab_saves.CourseContentsManager"
# A link to a Markdown file (the start page's to README.md#instructors-nbgrader) opens it rendered, where JupyterLab
# scrolls to the link's #fragment; its default, the text editor, opens at the top.
SETTING_OVERRIDES = {"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Markdown Preview"}}}


def _merge_json(path: Path, update) -> None:
    data = json.loads(path.read_text()) if path.is_file() else {}
    update(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def enable(config_dir, undo: bool = False) -> Path:
    """Disable (and lock) the instructor plugins for a JupyterLab started with ``JUPYTER_CONFIG_DIR=config_dir``."""
    config_dir = Path(config_dir)

    def page(data):
        for key in ("disabledExtensions", "lockedExtensions"):
            section = data.setdefault(key, {})
            for plugin in INSTRUCTOR_PLUGINS:
                if undo:
                    section.pop(plugin, None)
                else:
                    section[plugin] = True
        for plugin in QUIET_PLUGINS:
            if undo:
                data.get("disabledExtensions", {}).pop(plugin, None)
            else:
                data.setdefault("disabledExtensions", {})[plugin] = True

    def server(data):
        exts = data.setdefault("ServerApp", {}).setdefault("jpserver_extensions", {})
        for ext in INSTRUCTOR_SERVER_EXTENSIONS:
            if undo:
                exts.pop(ext, None)
            else:
                exts[ext] = False
        terminals = data.setdefault("TerminalsExtensionApp", {})
        if undo:
            terminals.pop("terminal_manager_class", None)
        else:
            terminals["terminal_manager_class"] = TERMINAL_MANAGER
        data.setdefault("ContentsManager", {})["pre_save_hook"] = PRE_SAVE_HOOK  # instructors' checkouts too
        data["ServerApp"]["contents_manager_class"] = CONTENTS_MANAGER  # a notebook opens clean (rlprep.lab_saves)

    def overrides(data):
        for plugin, values in SETTING_OVERRIDES.items():
            data.setdefault(plugin, {}).update(values)  # in both modes: instructors follow the same links

    _merge_json(config_dir / "labconfig" / "page_config.json", page)
    _merge_json(config_dir / "labconfig" / "default_setting_overrides.json", overrides)
    _merge_json(config_dir / "jupyter_server_config.json", server)
    return config_dir


def use_course_config(config_dir, course_config=None) -> Path:
    """Write ``config_dir/nbgrader_config.py`` loading ``course_config`` (the course's ``nbgrader_config.py``), or,
    with None, remove it. Returns its path."""
    target = Path(config_dir) / "nbgrader_config.py"
    if course_config is None:
        target.unlink(missing_ok=True)
        return target
    course_config = Path(course_config).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(
        "# Written by `rlprep lab --instructor` (rlprep.grading.learner_mode.use_course_config): formgrader, started\n"
        "# in the repository root, reads the course's grading config, which sanitises the pages showing a submission.\n"
        f"load_subconfig({str(course_config)!r})  # noqa: F821 - provided by traitlets when it loads this file\n",
        encoding="utf-8")
    os.replace(tmp, target)
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config-dir", default="build/jupyter-learner", help="JUPYTER_CONFIG_DIR for the learner")
    parser.add_argument("--undo", action="store_true", help="show the instructor tools again")
    args = parser.parse_args(argv)
    path = enable(args.config_dir, undo=args.undo)
    print(f"{'instructor tools shown' if args.undo else 'learner mode'}: JUPYTER_CONFIG_DIR={path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
