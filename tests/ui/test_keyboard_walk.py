"""The window by keyboard alone: Tab from the first field goes through the toolbar, the editor,
the findings, the results and the records and comes back around, and Shift+Tab the same way
back; no table keeps Tab to itself; F6 jumps between the areas; Ctrl+Tab switches editor tabs;
every shortcut is in a menu or listed in Help > Keyboard shortcuts."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractItemView, QApplication, QTableView, QWidget

from studio.core.app_settings import AppSettings
from studio.ui.main_window import MainWindow

RUN_TIMEOUT_MS = 30_000
# More stops than the window has fields: a walk that has not come back by then is trapped.
MAX_STEPS = 400


@pytest.fixture
def window(qtbot, sample_workspace, tmp_path):
    win = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    assert win.open_workspace(sample_workspace)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    win.sample_box.setCurrentText("support-ticket")
    with qtbot.waitSignal(win.run_finished, timeout=RUN_TIMEOUT_MS):
        win.run_selected()
    yield win
    win.undo_stack.setClean()
    win.close()


def focused() -> QWidget:
    widget = QApplication.focusWidget()
    assert widget is not None
    return widget


def walk(qtbot, start: QWidget, key: Qt.Key) -> list[QWidget]:
    """The widgets focus visits from ``start`` pressing ``key`` until it is back at ``start``;
    fails when it does not come back."""
    start.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is start)
    visited = [start]
    for _ in range(MAX_STEPS):
        QTest.keyClick(focused(), key)
        if focused() is start:
            return visited
        visited.append(focused())
    tail = [f"{type(w).__name__}#{w.objectName()}" for w in visited[-6:]]
    raise AssertionError(f"focus did not come back to the first field; last stops: {tail}")


def position(visited: list[QWidget], widget: QWidget) -> int:
    """Where ``widget`` (or a field inside it) was first reached."""
    for index, stop in enumerate(visited):
        if stop is widget or widget.isAncestorOf(stop):
            return index
    raise AssertionError(f"never reached: {type(widget).__name__}#{widget.objectName()}")


def landmarks(window: MainWindow) -> list[QWidget]:
    """In the order Tab must reach them."""
    editor = window.hook_editor
    records_table = window.records.findChild(QTableView, "recordsTable")
    assert records_table is not None
    return [
        window.sample_box,
        editor.source,
        editor.targets,
        editor.findings_list,
        editor.applies,
        editor.save_button,
        window.results.run.tabs.tabBar(),
        records_table,
    ]


def test_tab_walks_the_whole_window_in_order_and_comes_back(qtbot, window):
    visited = walk(qtbot, window.sample_box, Qt.Key.Key_Tab)
    places = [position(visited, w) for w in landmarks(window)]
    assert places == sorted(places)


@pytest.mark.parametrize("title", ["Step", "Invocation", "Chains"])
def test_tab_comes_back_around_through_every_form_editor(qtbot, window, title):
    """The editors whose fields are forms (the Sample and Source text editors indent with Tab;
    Ctrl+Tab and F6 leave them)."""
    index = next(i for i in range(window.editors.count()) if window.editors.tabText(i) == title)
    window.editors.setCurrentIndex(index)
    for key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
        visited = walk(qtbot, window.sample_box, key)
        assert any(window.editors.widget(index).isAncestorOf(w) for w in visited)


def test_shift_tab_walks_it_backwards_and_comes_back(qtbot, window):
    visited = walk(qtbot, window.sample_box, Qt.Key.Key_Backtab)
    places = [position(visited, w) for w in landmarks(window)[1:]]
    assert places == sorted(places, reverse=True)


def test_tab_leaves_every_table(qtbot, window):
    """Each table the walk meets is left by one Tab and by one Shift+Tab."""
    tables = [
        window.hook_editor.targets,
        window.hook_editor.applies,
        window.records.findChild(QTableView, "recordsTable"),
    ]
    for table in tables:
        for key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
            table.setFocus(Qt.FocusReason.OtherFocusReason)
            qtbot.waitUntil(lambda t=table: QApplication.focusWidget() is t)
            QTest.keyClick(table, key)
            assert not (focused() is table or table.isAncestorOf(focused())), (table, key)
    views = [v for v in window.findChildren(QAbstractItemView) if v.tabKeyNavigation()]
    assert views == []


def test_arrows_still_move_inside_the_targets_table(qtbot, window):
    table = window.hook_editor.targets
    table.setFocus(Qt.FocusReason.OtherFocusReason)
    table.setCurrentIndex(table.model().index(0, 0))
    QTest.keyClick(table, Qt.Key.Key_Down)
    assert table.currentIndex().row() == 1
    QTest.keyClick(table, Qt.Key.Key_Right)
    assert table.currentIndex().column() == 1


def test_f6_cycles_the_areas_and_shift_f6_goes_back(qtbot, window):
    window.sample_box.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.sample_box)
    areas = [window.editors, window.results, window.records_dock]
    for area in areas:
        QTest.keyClick(focused(), Qt.Key.Key_F6)
        assert area.isAncestorOf(focused()), area
    QTest.keyClick(focused(), Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)
    assert window.results.isAncestorOf(focused())
    QTest.keyClick(focused(), Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)
    assert window.editors.isAncestorOf(focused())
    QTest.keyClick(focused(), Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)
    assert window.toolbar.isAncestorOf(focused())


def test_f6_comes_back_to_the_field_that_had_focus(qtbot, window):
    window.hook_editor.timeout.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.hook_editor.timeout)
    QTest.keyClick(focused(), Qt.Key.Key_F6)
    assert window.results.isAncestorOf(focused())
    QTest.keyClick(focused(), Qt.Key.Key_F6, Qt.KeyboardModifier.ShiftModifier)
    assert focused() is window.hook_editor.timeout


def test_ctrl_tab_switches_editor_tabs_even_from_inside_a_table(qtbot, window):
    table = window.hook_editor.targets
    table.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is table)
    QTest.keyClick(table, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert window.editors.currentIndex() == 1
    assert window.editors.currentWidget().isAncestorOf(focused())
    QTest.keyClick(
        focused(),
        Qt.Key.Key_Backtab,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert window.editors.currentIndex() == 0


def menu_actions(window: MainWindow) -> list[QAction]:
    found = []
    todo = [a.menu() for a in window.menuBar().actions()]
    while todo:
        menu = todo.pop()
        for action in menu.actions():
            if action.menu() is not None:
                todo.append(action.menu())
            else:
                found.append(action)
    return found


def test_every_window_shortcut_is_in_a_menu(window):
    in_menus = {id(a) for a in menu_actions(window)}
    window_wide = [
        a
        for a in window.findChildren(QAction)
        if not a.shortcut().isEmpty()
        and a.shortcutContext()
        in (Qt.ShortcutContext.WindowShortcut, Qt.ShortcutContext.ApplicationShortcut)
    ]
    assert window_wide
    assert [a.text() for a in window_wide if id(a) not in in_menus] == []
    titles = [a.text() for a in window.menuBar().actions()]
    assert "&Help" in titles


def test_the_shortcuts_sheet_lists_every_shortcut_from_the_actions(qtbot, window):
    QTest.keyClick(window.sample_box, Qt.Key.Key_F1)
    sheet = window.findChild(QWidget, "shortcutsSheet")
    assert sheet is not None and sheet.isVisible()
    rows = sheet.rows()
    native = QKeySequence.SequenceFormat.NativeText
    for action in menu_actions(window):
        if action.shortcut().isEmpty():
            continue
        keys = action.shortcut().toString(native)
        assert any(keys in shown for _, _, shown in rows), action.text()
    shown = {(group, text): keys for group, text, keys in rows}
    assert shown[("File", "Save Hook")] == QKeySequence(QKeySequence.StandardKey.Save).toString(
        native
    )
    assert shown[("Help", "Keyboard Shortcuts")] == "F1, Ctrl+/"
    assert shown[("Records", "Export")] == "Ctrl+E"
    assert shown[("Targets table", "Add a target row")] in ("Ins", "Insert", "Ctrl+Shift+N")
    sheet.close()


def test_a_shortcut_added_later_is_listed_too(qtbot, window):
    """The sheet is read from the actions when it opens, so it cannot go stale."""
    extra = QAction("Frobnicate", window)
    extra.setShortcut(QKeySequence("Ctrl+Alt+F"))
    window.menuBar().actions()[0].menu().addAction(extra)
    sheet = window.show_shortcuts()
    assert ("File", "Frobnicate", "Ctrl+Alt+F") in sheet.rows()
    sheet.close()


def test_help_about_names_the_studio(window):
    box = window.show_about()
    assert "Hook Studio" in box.text()
    box.close()


def test_ctrl_tab_and_f6_leave_a_text_editor_where_tab_indents(qtbot, window):
    window.editors.setCurrentWidget(window.sample_editor)

    def shown_text() -> QWidget | None:
        texts = window.sample_editor.findChildren(QWidget, "sampleText")
        return next((t for t in texts if t.isVisible()), None)

    qtbot.waitUntil(lambda: shown_text() is not None)
    text = shown_text()
    assert text is not None
    text.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is text)
    QTest.keyClick(text, Qt.Key.Key_F6)
    assert window.results.isAncestorOf(focused())
    text.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is text)
    QTest.keyClick(text, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert window.editors.currentWidget() is not window.sample_editor
