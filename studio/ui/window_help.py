"""The Help menu's windows: the sheet of every keyboard shortcut, and About."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QMessageBox, QTabWidget, QWidget

from studio.ui.app import APP_NAME
from studio.ui.focus_areas import FocusAreas

if TYPE_CHECKING:
    # Imported when first opened: it is not needed to show the window.
    from studio.ui.shortcuts_sheet import ShortcutsSheet


def open_shortcuts_sheet(
    window: QMainWindow, editors: QTabWidget, areas: FocusAreas
) -> ShortcutsSheet:
    """The sheet of the window's shortcuts, each with where it works."""
    from studio.ui.shortcuts_sheet import ShortcutsSheet, shortcut_entries

    def place_of(widget: QWidget) -> str:
        for i in range(editors.count()):
            page = editors.widget(i)
            if page is not None and (page is widget or page.isAncestorOf(widget)):
                return f"{editors.tabText(i)} editor"
        area = areas.area_of(widget)
        return area.name.capitalize() if area is not None else "Window"

    sheet = ShortcutsSheet(shortcut_entries(window, place_of), window)
    sheet.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    sheet.open()
    return sheet


def open_about_box(parent: QWidget) -> QMessageBox:
    from studio import __version__

    box = QMessageBox(parent)
    box.setWindowTitle(f"About {APP_NAME}")
    box.setIcon(QMessageBox.Icon.Information)
    box.setText(f"<b>{APP_NAME}</b> {__version__}")
    box.setInformativeText(
        "Edit hooks for LLM agents, run them on sample requests in isolated workers, and "
        "read the record of what each hook decided. F1 lists the keyboard shortcuts."
    )
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
