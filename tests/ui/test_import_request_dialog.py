"""The Import request dialog, driven offscreen as a user would, and its place in the window."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from studio.core.app_settings import AppSettings
from studio.ui.import_request_dialog import ImportRequestDialog
from studio.ui.main_window import MainWindow
from tests.support.provider_bodies import anthropic_body, chat_body

WAIT_MS = 10_000


@pytest.fixture
def dialog(qtbot, tmp_path):
    samples = tmp_path / "samples"
    samples.mkdir()
    dialog = ImportRequestDialog(samples)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_a_pasted_body_is_detected_previewed_and_imported_from_the_keyboard(qtbot, dialog):
    dialog.body.setFocus()
    dialog.body.setPlainText(json.dumps(chat_body()))
    qtbot.waitUntil(lambda: dialog.imported is not None, timeout=WAIT_MS)
    assert "OpenAI Chat Completions (detected format)" in dialog.status.text()
    assert json.loads(dialog.sample.toPlainText())["request"]["options"]["maxTokens"] == 2048
    report = dialog.report.toPlainText()
    assert (
        "messages[3].tool_calls[1].function.arguments: changed: the arguments are not valid"
        in report
    )
    assert dialog.import_button.isEnabled()

    dialog.name.setFocus()
    dialog.name.selectAll()
    qtbot.keyClicks(dialog.name, "from-proxy")
    with qtbot.waitSignal(dialog.sample_imported, timeout=WAIT_MS) as imported:
        qtbot.keyClick(dialog.name, Qt.Key.Key_Return)
    assert imported.args == ["from-proxy"]
    written = json.loads((dialog.samples / "from-proxy.json").read_text())
    assert written == dialog.imported.sample
    original = (dialog.samples / "originals" / "from-proxy.json").read_text()
    assert json.loads(original) == chat_body()
    assert not dialog.isVisible()


def test_an_ambiguous_body_asks_for_the_format(qtbot, dialog):
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    dialog.body.setPlainText(json.dumps(body))
    dialog.refresh()
    assert "ambiguous" in dialog.status.text() and "choose the format" in dialog.status.text()
    assert not dialog.import_button.isEnabled()
    dialog.format.setCurrentIndex(dialog.format.findData("anthropic"))
    assert dialog.imported is not None and dialog.imported.format == "anthropic"
    assert dialog.import_button.isEnabled()


def test_a_file_keeps_its_bytes_and_names_the_sample(qtbot, dialog, tmp_path):
    path = tmp_path / "refund-capture.json"
    data = json.dumps(anthropic_body(), indent=3).encode()
    path.write_bytes(data)
    assert dialog.load_file(path)
    assert dialog.name.text() == "refund-capture"
    assert "Anthropic Messages" in dialog.status.text()
    assert dialog.import_sample()
    assert (dialog.samples / "originals" / "refund-capture.json").read_bytes() == data


def test_an_existing_sample_is_never_replaced(qtbot, dialog):
    (dialog.samples / "taken.json").write_text("{}")
    dialog.body.setPlainText(json.dumps(chat_body()))
    dialog.name.setText("taken")
    assert not dialog.import_sample()
    assert "A sample named taken exists already" in dialog.status.text()
    assert (dialog.samples / "taken.json").read_text() == "{}"
    assert dialog.isVisible()


def test_a_sample_that_fails_the_checks_cannot_be_imported(qtbot, dialog):
    call = {"type": "tool_use", "id": "t", "name": "x", "input": {}}
    body = {"system": "s", "messages": [{"role": "assistant", "content": [call]}]}
    dialog.body.setPlainText(json.dumps(body))
    dialog.refresh()
    assert "Not importable: /request/messages/0/content/0" in dialog.status.text()
    assert not dialog.import_button.isEnabled()
    assert not dialog.import_sample()
    assert list(dialog.samples.iterdir()) == []


def test_not_json_says_where(qtbot, dialog):
    dialog.body.setPlainText('{"messages": [}')
    dialog.refresh()
    assert "not JSON" in dialog.status.text() and "column 15" in dialog.status.text()
    assert not dialog.import_button.isEnabled()


@pytest.fixture
def window(qtbot, sample_workspace, tmp_path, monkeypatch):
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.show()
    assert win.open_workspace(sample_workspace)
    yield win
    win.close()


def test_the_window_imports_and_selects_the_sample(qtbot, window, sample_workspace):
    new_menu = window.sample_editor.sample_list.new_menu
    assert window.import_request_action in new_menu.actions()
    window.import_request_action.trigger()
    dialog = window.findChild(ImportRequestDialog)
    assert dialog is not None and dialog.isVisible()
    dialog.body.setPlainText(json.dumps(chat_body()))
    dialog.name.setText("proxy")
    assert dialog.import_sample()
    assert window.sample_box.currentText() == "proxy"
    assert window.sample_editor.current_sample() == "proxy"
    assert window.editors.currentWidget() is window.sample_editor
    assert "proxy" in window.sample_editor.sample_list.model.names
    assert "proxy.original" not in window.sample_editor.sample_list.model.names
    assert [s.name for s in window.workspace.samples()].count("proxy") == 1


def test_tab_goes_through_the_dialog_in_reading_order(qtbot, dialog):
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=WAIT_MS)
    dialog.body.setPlainText(json.dumps(chat_body()))
    dialog.refresh()
    dialog.body.setFocus()
    seen = [dialog.focusWidget()]
    for _ in range(8):
        qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Tab)
        seen.append(dialog.focusWidget())
    # the loss report sits on the preview's other page, reached by its tab (Alt+L)
    order = [dialog.body, dialog.open_button, dialog.preview.tabBar(), dialog.sample]
    order += [dialog.format, dialog.dynamic, dialog.name, dialog.import_button]
    assert seen[:8] == order
