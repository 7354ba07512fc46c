"""A workspace that holds, under a file's name, something that is not a file: a named pipe (no
writer ever comes) or a link to a device that never ends. The window opens it without waiting
and says what is there, and leaves it as it was."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox


@pytest.fixture(autouse=True)
def warnings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The warnings the window gave, kept until it is closed: a file watched since the open may
    still say so as the window closes."""
    said: list[str] = []

    def warning(_parent: object, _title: str, text: str, *args: object) -> Any:
        said.append(text)
        return QMessageBox.StandardButton.Ok

    monkeypatch.setattr(QMessageBox, "warning", warning)
    return said


def replace_with(path: Path, kind: str) -> None:
    path.unlink()
    if kind == "pipe":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/null")


@pytest.mark.parametrize(("kind", "said"), [("pipe", "a named pipe"), ("device", "a device")])
def test_an_agent_config_that_is_not_a_file_is_said_and_left(
    window, warnings, sample_workspace, kind, said
):
    agent = sample_workspace / "agent.json"
    replace_with(agent, kind)
    assert window.open_workspace(sample_workspace)
    assert window.document is None
    (warning,) = warnings
    assert "agent.json cannot be edited" in warning
    assert f"is {said}, not a file" in warning
    assert stat.S_ISFIFO(os.lstat(agent).st_mode) if kind == "pipe" else agent.is_symlink()


def test_a_hook_source_that_is_a_named_pipe_is_shown_as_unreadable(window, sample_workspace):
    source = sample_workspace / "lib" / "policy.py"
    replace_with(source, "pipe")
    assert window.open_workspace(sample_workspace)
    window.source_view.show_source("lib/policy.py", 1)
    view = window.source_view
    assert view.text.toPlainText() == "lib/policy.py cannot be read: is a named pipe, not a file"
    assert view.highlighter.language is None
    assert not view.editable
    assert stat.S_ISFIFO(os.lstat(source).st_mode)


def test_a_file_a_traceback_names_that_is_a_named_pipe_is_not_read(window, tmp_path):
    # A hook's traceback may name any path; opening its frame must not wait on a pipe.
    pipe = tmp_path / "frame.py"
    os.mkfifo(pipe)
    window.source_view.show_file(pipe, 3, "frame.py")
    view = window.source_view
    assert view.text.toPlainText() == "frame.py cannot be read: is a named pipe, not a file"
    assert view.highlighter.language is None
