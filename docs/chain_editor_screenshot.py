"""Render the README's picture of the chain editor from the real window, offscreen, on a copy of
the bundled workspace:

    .venv/bin/python docs/chain_editor_screenshot.py
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication, QScrollArea

from studio.core.app_settings import AppSettings
from studio.core.chain.chain_draft import ChainRow
from studio.ui.main_window import MainWindow

DOCS = Path(__file__).resolve().parent
BUNDLED = DOCS.parent / "resources" / "sample-workspace"


def settle(ms: int = 400) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def main() -> None:
    app = QApplication(sys.argv)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "sample-workspace"
        shutil.copytree(BUNDLED, workspace, ignore=shutil.ignore_patterns(".hookstudio"))
        window = MainWindow(AppSettings(), Path(tmp) / "settings.json")
        window.resize(1366, 768)
        window.show()
        window.open_workspace(workspace)
        # The bottom docks give their height to the editor, so the findings are in view.
        for dock in (window.records_dock, window.tests_dock, window.agent_log_dock):
            dock.hide()
        editor = window.config_editors.chain_editor
        window.editors.setCurrentWidget(editor)
        # A hook being added, with a function its file does not export: the finding says so.
        editor.add_hook("pre", ChainRow.user("lib/chain_hooks.ts:policySufix", "2000"))
        settle(3000)
        editor.findChild(QScrollArea).ensureWidgetVisible(editor.findings_list)
        settle()
        window.grab().save(str(DOCS / "chain-editor.png"))
        print("wrote", DOCS / "chain-editor.png")
        for stack in window.config_editors.stacks:
            stack.setClean()
        window.close()
    app.quit()


if __name__ == "__main__":
    main()
