"""Starting the studio: the Qt application on an asyncio-aware loop, the window, the workspace."""

from __future__ import annotations

import asyncio
import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from studio.core.app_settings import AppSettings, load_settings
from studio.engine.node_binary import use_node_setting
from studio.ui.start_collector import pause_until_painted

if TYPE_CHECKING:
    from studio.ui.main_window import MainWindow

APP_NAME = "Hook Studio"
ORGANIZATION = "hook-studio"

QT_FREE_MODULES = (
    "studio.core.expectations.from_outcome",
    "studio.core.expectations.matrix",
    "studio.core.expectations.model",
    "studio.core.json.reindent",
    "studio.core.model_warmup",
    "studio.core.pre_llm.config_warnings",
    "studio.core.pre_llm.targets",
    "studio.core.records.store",
    "studio.core.shown_text",
    "studio.core.registry",
    "studio.core.workspace.adf_workspace",
    "studio.core.workspace.agent_document",
    "studio.core.workspace.agent_log",
    "studio.core.workspace.draft_recovery",
    "studio.core.workspace.folder",
    "studio.core.workspace.sample_check",
    "studio.core.workspace.sample_files",
    "studio.engine.runner",
    "studio.engine.runtimes",
)
"""The Qt-free modules the window imports until its first paint, imported before Qt (see
:func:`import_before_qt`); those of parts made later are imported when first used."""

GUI_SWITCH_INTERVAL = 0.001
"""Seconds a thread holds Python's interpreter while another waits for it. The engine's threads
read, hash and store a large run while the window shows it; at Python's default of 5 ms, each
time the GUI thread wants the interpreter back it may wait that long, and a view filling in
makes hundreds of such calls."""


def import_before_qt() -> None:
    """Import the window's Qt-free modules while PySide6 is not loaded yet.

    Once PySide6 is imported it reads the source of every module imported after it (to see
    whether that module uses Qt); for the window's own imports, that was the longest part of
    its start. A module missing from :data:`QT_FREE_MODULES` is only slower to import
    (tests/ui/test_app_start.py names it).

    Python's cycle collector is held off from here until the window's first paint (see
    :mod:`studio.ui.start_collector`)."""
    if "PySide6" in sys.modules:
        return
    pause_until_painted()
    for name in QT_FREE_MODULES:
        importlib.import_module(name)


def settings_file() -> Path:
    """The studio's settings file; the command line reads the same one, with no window."""
    from PySide6.QtCore import QCoreApplication, QStandardPaths

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

    sys.setswitchinterval(GUI_SWITCH_INTERVAL)
    window = MainWindow(settings, settings_path)
    window.show()
    if not window.open_workspace(target):
        window.open_workspace(bundled_workspace())
    return window


def run_studio(workspace: str | None = None) -> int:
    import_before_qt()
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
