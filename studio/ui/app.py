"""Starting the studio: the Qt application on an asyncio-aware loop, the window, the workspace."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QStandardPaths

from studio.core.app_settings import AppSettings, load_settings
from studio.engine.node_binary import use_node_setting

if TYPE_CHECKING:
    from studio.ui.main_window import MainWindow

APP_NAME = "Hook Studio"
ORGANIZATION = "hook-studio"


def settings_file() -> Path:
    """The studio's settings file; the command line reads the same one, with no window."""
    QCoreApplication.setOrganizationName(ORGANIZATION)
    QCoreApplication.setApplicationName(ORGANIZATION)
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppConfigLocation)
    return Path(folder or Path.home() / ".config" / "hook-studio") / "settings.json"


def bundled_workspace() -> Path:
    return Path(__file__).resolve().parents[2] / "resources" / "sample-workspace"


def choose_workspace(requested: str | None, last: str | None) -> Path:
    """The folder or ``.adf`` file named on the command line, else the last one opened, else
    the bundled workspace."""
    if requested:
        return Path(requested)
    if last and Path(last).exists():
        return Path(last)
    return bundled_workspace()


def show_window(settings: AppSettings, settings_path: Path | None, target: Path) -> MainWindow:
    """The window, shown, with ``target`` opened (the bundled workspace when it cannot be)."""
    from studio.ui.main_window import MainWindow

    window = MainWindow(settings, settings_path)
    window.show()
    if not window.open_workspace(target):
        window.open_workspace(bundled_workspace())
    return window


def run_studio(workspace: str | None = None) -> int:
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)  # the studio's widgets need a QApplication
    app.setApplicationDisplayName(APP_NAME)
    path = settings_file()
    settings = load_settings(path)
    use_node_setting(settings.node)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    closed = asyncio.Event()
    app.aboutToQuit.connect(closed.set)
    window = show_window(settings, path, choose_workspace(workspace, settings.last_workspace))
    with loop:
        loop.run_until_complete(closed.wait())
    del window  # held until here: the loop's only tie to it is Qt's
    return 0
