"""The Settings dialog, driven from the keyboard only: it checks the chosen Node on the engine's
threads, refuses OK with the reason while the Node is not usable, and, from the window's menu,
keeps the choice so that the next run goes to that Node."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from studio.core.app_settings import AppSettings, load_settings
from studio.engine.node_binary import NODE_VARIABLE, bundled_node, node_setting, use_node_setting
from studio.ui.engine_bridge import EngineBridge
from studio.ui.main_window import MainWindow
from studio.ui.settings_dialog import SettingsDialog
from tests.support.workspaces import without_sandbox

WAIT_MS = 20_000
BUNDLED = bundled_node()


@pytest.fixture(autouse=True)
def bundled_setting() -> Iterator[None]:
    use_node_setting("")
    yield
    use_node_setting("")


@pytest.fixture
def bridge() -> Iterator[EngineBridge]:
    engine = EngineBridge()
    yield engine
    engine.shutdown()


def script(path: Path, text: str, mode: int = 0o755) -> str:
    path.write_text(text)
    path.chmod(mode)
    return str(path)


def wrapper(folder: Path) -> tuple[str, Path]:
    """A second Node: notes each start in a marker file, then becomes the bundled Node."""
    marker = folder / "starts.txt"
    text = f'#!/bin/sh\necho "$$ $*" >> {marker}\nexec {BUNDLED} "$@"\n'
    return script(folder / "node-wrapper", text), marker


def open_dialog(qtbot: QtBot, bridge: EngineBridge, node: str = "", **kw) -> SettingsDialog:
    dialog = SettingsDialog(node, bridge, environ=kw.get("environ", {}))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None, timeout=WAIT_MS)
    checked(qtbot, dialog)
    return dialog


def checked(qtbot: QtBot, dialog: SettingsDialog) -> str:
    qtbot.waitUntil(lambda: not dialog.checking, timeout=WAIT_MS)
    return dialog.status.text()


def key(qtbot: QtBot, which: Qt.Key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    focused = QApplication.focusWidget()
    assert focused is not None
    qtbot.keyClick(focused, which, modifier)


def type_path(qtbot: QtBot, dialog: SettingsDialog, path: str) -> None:
    """From the checked "bundled" box: Space clears it and the path field takes the focus."""
    assert QApplication.focusWidget() is dialog.bundled_box
    key(qtbot, Qt.Key.Key_Space)
    assert QApplication.focusWidget() is dialog.path_edit
    dialog.path_edit.selectAll()
    qtbot.keyClicks(dialog.path_edit, path)


def test_the_bundled_node_is_checked_and_shown_with_its_version(qtbot, bridge):
    dialog = open_dialog(qtbot, bridge)
    assert dialog.bundled_box.isChecked() and not dialog.path_edit.isEnabled()
    shown = re.fullmatch(r"✓ Node (\d+)\.(\d+)\.\d+ \((.+)\)", checked(qtbot, dialog))
    assert shown is not None, dialog.status.text()
    assert (int(shown[1]), int(shown[2])) >= (22, 13) and shown[3] == BUNDLED
    assert dialog.problem is None and dialog.node() == ""


def test_tab_moves_through_the_choice_the_path_browse_ok_and_cancel(qtbot, bridge, tmp_path):
    dialog = open_dialog(qtbot, bridge)
    assert QApplication.focusWidget() is dialog.bundled_box
    key(qtbot, Qt.Key.Key_Tab)  # the path and Browse are off while the bundled Node is used
    assert QApplication.focusWidget() is dialog.ok_button
    key(qtbot, Qt.Key.Key_Backtab)
    type_path(qtbot, dialog, wrapper(tmp_path)[0])
    order = []
    for _ in range(3):
        key(qtbot, Qt.Key.Key_Tab)
        order.append(QApplication.focusWidget())
    cancel = dialog.buttons.button(dialog.buttons.StandardButton.Cancel)
    assert order == [dialog.browse_button, dialog.ok_button, cancel]


def test_enter_keeps_a_usable_node_even_while_it_is_being_checked(qtbot, bridge, tmp_path):
    chosen, _ = wrapper(tmp_path)
    dialog = open_dialog(qtbot, bridge)
    type_path(qtbot, dialog, chosen)
    assert dialog.checking
    with qtbot.waitSignal(dialog.accepted, timeout=WAIT_MS):
        key(qtbot, Qt.Key.Key_Return)
    assert dialog.node() == chosen
    assert dialog.status.text().startswith("✓ Node 24.")


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda d: str(d / "missing" / "node"), "does not exist"),
        (lambda d: str(d), "is a folder, not a program"),
        (
            lambda d: script(d / "old", "#!/bin/sh\necho 20.1.0 undefined\n"),
            "is Node 20.1.0; TypeScript and JavaScript hooks need Node 22.13 or newer",
        ),
        (
            lambda d: script(d / "stripless", "#!/bin/sh\necho 22.13.0 undefined\n"),
            "is Node 22.13.0 without module.stripTypeScriptTypes",
        ),
        (lambda d: script(d / "plain", "#!/bin/sh\n", mode=0o644), "is not executable"),
    ],
    ids=["missing", "folder", "too-old", "no-type-stripping", "not-executable"],
)
def test_enter_is_refused_with_the_reason_while_the_node_is_not_usable(
    qtbot, bridge, tmp_path, make, problem
):
    dialog = open_dialog(qtbot, bridge)
    accepted = []
    dialog.accepted.connect(lambda: accepted.append(True))
    path = make(tmp_path)
    type_path(qtbot, dialog, path)
    key(qtbot, Qt.Key.Key_Return)
    shown = checked(qtbot, dialog)
    assert shown.startswith("✗ this Node") and path in shown and problem in shown
    assert dialog.problem is not None and problem in dialog.problem
    assert dialog.isVisible() and not accepted
    key(qtbot, Qt.Key.Key_Return)
    assert dialog.isVisible() and not accepted


def test_escape_cancels(qtbot, bridge, tmp_path):
    dialog = open_dialog(qtbot, bridge, node=str(tmp_path / "missing"))
    assert not dialog.bundled_box.isChecked()
    with qtbot.waitSignal(dialog.rejected, timeout=WAIT_MS):
        key(qtbot, Qt.Key.Key_Escape)


def test_the_environment_variable_is_shown_as_overriding(qtbot, bridge):
    dialog = open_dialog(qtbot, bridge, environ={NODE_VARIABLE: "/opt/node/bin/node"})
    assert dialog.override_note.isVisible()
    assert f"{NODE_VARIABLE}=/opt/node/bin/node" in dialog.override_note.text()
    assert "overrides this choice" in dialog.override_note.text()
    assert not open_dialog(qtbot, bridge).override_note.isVisible()


# ---- from the window ---------------------------------------------------------------------------


@pytest.fixture
def window(qtbot, sample_workspace, tmp_path, monkeypatch) -> Iterator[MainWindow]:
    monkeypatch.delenv(NODE_VARIABLE, raising=False)
    # The second Node notes its starts in a file outside the workspace.
    without_sandbox(sample_workspace)
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.show()
    assert win.open_workspace(sample_workspace)
    yield win
    win.close()


def test_the_menu_entry_keeps_the_choice_and_the_next_run_uses_that_node(qtbot, window, tmp_path):
    action = window.settings_action
    menus = {a.text(): a.menu() for a in window.menuBar().actions()}
    assert action in menus["&Edit"].actions()
    assert action.shortcut() == QKeySequence(QKeySequence.StandardKey.Preferences)
    folder = tmp_path / "second"
    folder.mkdir()
    chosen, marker = wrapper(folder)
    dialog = window.edit_settings()
    qtbot.waitUntil(lambda: not dialog.checking, timeout=WAIT_MS)
    dialog.activateWindow()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is dialog.bundled_box, timeout=WAIT_MS)
    type_path(qtbot, dialog, chosen)
    with qtbot.waitSignal(dialog.accepted, timeout=WAIT_MS):
        key(qtbot, Qt.Key.Key_Return)
    assert node_setting() == chosen
    assert load_settings(tmp_path / "settings.json").node == chosen
    job = window.runs.start_run("step-escalated", hook="lib/prepare.ts")
    with qtbot.waitSignal(job.finished, timeout=WAIT_MS) as done:
        pass
    assert done.args[0].status == "ok", done.args[0].turn_error
    assert any("host.mjs" in line for line in marker.read_text().splitlines())
    assert json.loads((tmp_path / "settings.json").read_text())["changed"]["node"] == chosen
