"""The studio's start: the window's Qt-free modules are imported before PySide6, which otherwise
reads the source of every module imported after it."""

from __future__ import annotations

import json
import subprocess
import sys

START = """
import json, sys
from studio.ui.app import import_before_qt
import_before_qt()
qt_loaded = "PySide6" in sys.modules
before = set(sys.modules)
import studio.ui.main_window
late = sorted(
    name for name in set(sys.modules) - before if name.startswith(("studio.core", "studio.engine"))
)
print(json.dumps({"qt_loaded": qt_loaded, "late": late}))
"""


def test_every_qt_free_module_of_the_window_is_imported_before_qt() -> None:
    child = subprocess.run(
        [sys.executable, "-c", START], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    assert seen["qt_loaded"] is False  # none of them brings Qt in
    assert seen["late"] == []  # a name here belongs in studio.ui.app.QT_FREE_MODULES
