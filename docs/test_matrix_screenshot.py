"""Render the README's picture of the Tests view: the bundled workspace with its policy hook
broken (it keeps the shell tool), every test run, and the first failing run opened:

    .venv/bin/python docs/test_matrix_screenshot.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from docs.screenshots import DOCS, settle, shoot
from studio.core.app_settings import AppSettings
from studio.ui.main_window import MainWindow
from tests.support.workspaces import copy_bundled_workspace


def main() -> None:
    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_bundled_workspace(Path(tmp) / "sample-workspace")
        policy = root / "lib" / "policy.ts"
        policy.write_text(
            policy.read_text().replace(
                "['fs_read', 'fs_write']", "['fs_read', 'fs_write', 'shell']"
            )
        )
        window = MainWindow(AppSettings())
        window.resize(1366, 768)
        window.open_workspace(root)
        window.show()
        settle(800)
        finished: list[bool] = []
        window.test_matrix.runs_finished.connect(lambda: finished.append(True))
        window.run_tests()
        while not finished:
            settle(50)
        matrix = window.test_matrix
        failing = next(
            matrix.model.index(r, c)
            for r in range(matrix.model.rowCount())
            for c in range(matrix.model.columnCount())
            if matrix.model.cell(r, c).state == "fail"
        )
        matrix.table.setCurrentIndex(failing)
        QTest.keyClick(matrix.table, Qt.Key.Key_Return)
        settle(800)
        shoot(window, "test-matrix.png")
        window.close()
    del app
    assert (DOCS / "test-matrix.png").exists()


if __name__ == "__main__":
    main()
