"""The dialogs that ask for a workspace to open: a folder, or an ADF agent file. Neither is
modal to the event loop: the choice, once made, is handed to ``open``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QWidget


def _open_dialog(
    parent: QWidget, title: str, start: Path, open: Callable[[Path], object]
) -> QFileDialog:
    dialog = QFileDialog(parent, title, str(start))
    dialog.setObjectName("openDialog")
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.fileSelected.connect(lambda chosen: open(Path(chosen)))
    return dialog


def choose_folder(parent: QWidget, start: Path, open: Callable[[Path], object]) -> QFileDialog:
    dialog = _open_dialog(parent, "Open a workspace folder", start, open)
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    dialog.open()
    return dialog


def choose_agent_file(parent: QWidget, start: Path, open: Callable[[Path], object]) -> QFileDialog:
    dialog = _open_dialog(parent, "Open an ADF agent file", start, open)
    dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    dialog.setNameFilters(["ADF agents (*.adf)", "All files (*)"])
    dialog.open()
    return dialog
