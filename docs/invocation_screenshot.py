"""Render the README's picture of a layered invocation run from the real window, offscreen, on a
copy of the bundled workspace:

    .venv/bin/python docs/invocation_screenshot.py [OUT.png] [WIDTH HEIGHT] [--sample NAME]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from studio.core.app_settings import AppSettings
from studio.ui.main_window import MainWindow

DOCS = Path(__file__).resolve().parent
BUNDLED = DOCS.parent / "resources" / "sample-workspace"


def settle(ms: int = 400) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def main(argv: list[str]) -> None:
    sample = "invocation-pipeline-review"
    if "--sample" in argv:
        at = argv.index("--sample")
        sample = argv[at + 1]
        del argv[at : at + 2]
    out = Path(argv[0]) if argv else DOCS / "invocation-layered.png"
    width, height = (int(argv[1]), int(argv[2])) if len(argv) >= 3 else (1366, 768)
    app = QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "sample-workspace"
        shutil.copytree(BUNDLED, workspace, ignore=shutil.ignore_patterns(".hookstudio"))
        window = MainWindow(AppSettings(), Path(tmp) / "settings.json")
        window.resize(width, height)
        window.show()
        window.open_workspace(workspace)
        # The bottom docks give their height to the run view, so the layers are in view.
        for dock in (window.records_dock, window.tests_dock, window.agent_log_dock):
            dock.hide()
        settle(1500)
        done: list = []
        window.run_finished.connect(done.append)
        window.sample_box.setCurrentText(sample)
        window.run_selected()
        while not done:
            settle(30)
        settle(500)
        window.results.run.tabs.setCurrentIndex(0)
        settle()
        window.grab().save(str(out))
        print("wrote", out)
        window.close()
    app.quit()


if __name__ == "__main__":
    main(sys.argv[1:])
