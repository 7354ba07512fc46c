"""Starting the studio: the Qt application on an asyncio-aware loop, the window, the workspace."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QStandardPaths

from studio.core.app_settings import load_settings
from studio.engine.node_binary import use_node_setting

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


def run_studio(workspace: str | None = None) -> int:
    import qasync
    from PySide6.QtWidgets import QApplication

    from studio.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)  # the studio's widgets need a QApplication
    app.setApplicationDisplayName(APP_NAME)
    path = settings_file()
    settings = load_settings(path)
    use_node_setting(settings.node)
    window = MainWindow(settings, path)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    closed = asyncio.Event()
    app.aboutToQuit.connect(closed.set)
    target = choose_workspace(workspace, settings.last_workspace)
    window.show()
    if not window.open_workspace(target):
        window.open_workspace(bundled_workspace())
    with loop:
        loop.run_until_complete(closed.wait())
    return 0
