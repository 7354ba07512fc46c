"""The studio's start: the window's Qt-free modules are imported before PySide6, which otherwise
reads the source of every module imported after it."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from studio.engine.collector import collector_paused
from studio.ui.start_collector import pause_until_painted, resume_once_painted
from tests.support.processes import wait_for
from tests.support.workspaces import copy_bundled_workspace

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


OPEN = """
import json, sys
from pathlib import Path
from studio.ui.app import import_before_qt
import_before_qt()
before = set(sys.modules)
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication
from studio.core.app_settings import AppSettings
from studio.ui.app import show_window
app = QApplication(sys.argv[:1])
late = []
class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if watched is window and event.type() == QEvent.Type.Paint and not self.seen:
            # Once the whole first paint has ended: what is made after it is not on the start path.
            self.seen = True
            QTimer.singleShot(0, painted)
        return False
def painted():
    loaded = set(sys.modules) - before
    late.extend(sorted(n for n in loaded if n.startswith(("studio.core", "studio.engine"))))
    app.quit()
probe = FirstPaint()
probe.seen = False
window = show_window(AppSettings(), None, Path(sys.argv[1]))
window.installEventFilter(probe)
app.exec()
window.undo_stack.setClean()
window.close()
print(json.dumps(late))
"""


def start_on_the_bundled_workspace(script: str, tmp_path: Path) -> Any:
    """What ``script``, started in a fresh offscreen process on a copy of the bundled
    workspace, prints as JSON on its last line."""
    workspace = copy_bundled_workspace(tmp_path / "ws")
    child = subprocess.run(
        [sys.executable, "-c", script, str(workspace)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    return json.loads(child.stdout.strip().splitlines()[-1])


def test_opening_the_bundled_workspace_imports_no_qt_free_module_after_qt_until_painted(
    tmp_path: Path,
) -> None:
    late = start_on_the_bundled_workspace(OPEN, tmp_path)
    assert late == []  # a name here belongs in studio.ui.app.QT_FREE_MODULES


PAINTED = """
import gc, json, sys
from pathlib import Path
from studio.ui.app import import_before_qt
import_before_qt()
seen = {"collecting at start": gc.isenabled()}
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from studio.core.app_settings import AppSettings
from studio.ui.app import show_window
app = QApplication(sys.argv[:1])
window = show_window(AppSettings(), None, Path(sys.argv[1]))
# Work released by the paint (a sample's check) may pause the collector on another thread for
# a moment just then, so it is waited for; a start's hold never released keeps it off for good.
waits = [2000]
def check():
    if not window._on_screen or (not gc.isenabled() and waits[0] > 0):
        waits[0] -= window._on_screen
        QTimer.singleShot(10, check)
        return
    seen["collecting once painted"] = gc.isenabled()
    app.quit()
check()
app.exec()
window.undo_stack.setClean()
window.close()
print(json.dumps(seen))
"""


def test_the_garbage_collector_is_off_for_the_start_and_on_once_the_window_is_painted(
    tmp_path: Path,
) -> None:
    seen = start_on_the_bundled_workspace(PAINTED, tmp_path)
    assert seen == {"collecting at start": False, "collecting once painted": True}


def test_an_engine_pause_overlapping_the_start_keeps_the_collector_off_until_both_end() -> None:
    # The collector is the process's: an earlier test's engine thread may still hold it.
    wait_for(gc.isenabled)
    pause_until_painted()
    assert not gc.isenabled()
    with collector_paused():
        resume_once_painted()
        assert not gc.isenabled()  # the engine still reads
    assert gc.isenabled()
    resume_once_painted()  # a second window painted: nothing was paused for it
    assert gc.isenabled()
