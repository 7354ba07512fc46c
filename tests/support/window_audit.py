"""The studio's window on a screen of a given size, checked for what a user would see broken:
widgets drawn over one another, action buttons cut off or outside the window, a window larger
than asked. Run in its own process, since the screen's size and the scale factor are fixed when
Qt starts:

    python -m tests.support.window_audit 1024 640 [--scale 2] [--shot FILE] [--report FILE]

The screen is ``width × scale`` by ``height × scale`` device pixels, so that at scale 2 the
window still has ``width × height`` logical pixels, as on a 2048×1280 screen at 200 %. The report
is JSON: the window's size and minimum, and every problem found, each naming the view it was seen
in; then the same buttons with the Records dock dragged as tall as it goes. ``--shot`` saves
the window (Hook editor and Diff tab on show) as PNG.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QWidget

    from studio.ui.main_window import MainWindow

SAMPLE = "support-ticket"
DEADLINE_MS = 60_000


# ---- the checks ---------------------------------------------------------------------------------
def _parked(widget: QWidget, window: QWidget) -> bool:
    """Whether ``widget`` belongs to a part the main window parks outside itself while it is
    not on show: the dock of a tab that is not the current one, an unused tab bar of tabbed
    docks. Qt leaves them visible there; no user sees them."""
    current: QWidget | None = widget
    while current is not None and current is not window:
        if current.parentWidget() is window and not window.rect().intersects(current.geometry()):
            return True
        current = current.parentWidget()
    return False


def _stacked_on_purpose(parent: QWidget, child: QWidget) -> bool:
    """Children that Qt places over or outside their siblings by design, never seen as a
    collision: what a main window parks outside itself (see :func:`_parked`); a dock's float
    and close buttons, drawn in its title bar above its widget's top edge; the handles Qt lays
    over a splitter's edge; the two scroll arrows of a tab bar too narrow for its tabs, which
    the style draws sharing their border pixel."""
    from PySide6.QtWidgets import QDockWidget, QMainWindow, QSplitterHandle, QTabBar

    if isinstance(parent, QTabBar) and child.objectName() in (
        "ScrollLeftButton",
        "ScrollRightButton",
    ):
        return True

    if isinstance(parent, QMainWindow):
        return not parent.rect().intersects(child.geometry())
    if isinstance(parent, QDockWidget) and child.objectName() in (
        "qt_dockwidget_floatbutton",
        "qt_dockwidget_closebutton",
    ):
        return True
    return isinstance(child, QSplitterHandle)


def _shown_children(widget: QWidget) -> list[QWidget]:
    from PySide6.QtWidgets import QWidget

    return [
        c
        for c in widget.children()
        if isinstance(c, QWidget)
        and not c.isWindow()
        and c.isVisible()
        and not c.geometry().isEmpty()
    ]


def _name(widget: QWidget) -> str:
    return (
        f"{type(widget).__name__}#{widget.objectName()}"
        if widget.objectName()
        else (type(widget).__name__)
    )


def _path(widget: QWidget, window: QWidget) -> str:
    parts = []
    current: QWidget | None = widget
    while current is not None and current is not window:
        parts.append(_name(current))
        current = current.parentWidget()
    return "/".join(reversed(parts))


def overlaps(window: QWidget) -> list[str]:
    """Every pair of shown siblings whose rectangles share a pixel. Only shown widgets count,
    so the hidden pages of a stack or a tab widget never do; a scroll area's content is one
    child of its viewport and is compared with nothing but its own children."""
    found = []
    todo = [window]
    while todo:
        parent = todo.pop()
        children = [c for c in _shown_children(parent) if not _stacked_on_purpose(parent, c)]
        for i, a in enumerate(children):
            for b in children[i + 1 :]:
                shared = a.geometry().intersected(b.geometry())
                if not shared.isEmpty():
                    found.append(
                        f"overlap {shared.width()}x{shared.height()}: "
                        f"{_path(a, window)} and {_name(b)}"
                    )
        todo.extend(_shown_children(parent))
    return found


def _in_window(widget: QWidget, window: QWidget) -> QRect:
    from PySide6.QtCore import QPoint, QRect

    top_left = widget.mapTo(window, QPoint(0, 0))
    return QRect(top_left, widget.size())


def _scrolled(widget: QWidget) -> bool:
    """Whether ``widget`` sits in the scrolled content of a scroll area (a viewport's child):
    such a button may be scrolled out of view and comes back into view when it gets focus."""
    from PySide6.QtWidgets import QAbstractScrollArea

    current = widget.parentWidget()
    while current is not None:
        owner = current.parentWidget()
        if isinstance(owner, QAbstractScrollArea) and owner.viewport() is current:
            return True
        current = owner
    return False


def clipped_buttons(window: QWidget) -> list[str]:
    """Action buttons (push and tool buttons) outside the window, or cut by a parent that is
    smaller than they are. Buttons Qt draws as parts of other widgets (a tab bar's scroll
    arrows, a dock's title buttons) and buttons in scrolled content are not action buttons of
    the window in that sense."""
    from PySide6.QtWidgets import QDockWidget, QPushButton, QTabBar, QToolButton

    found = []
    whole = window.rect()
    for button in window.findChildren(QPushButton) + window.findChildren(QToolButton):
        if not button.isVisible() or isinstance(button.parentWidget(), (QTabBar, QDockWidget)):
            continue
        if _scrolled(button) or _parked(button, window):
            continue
        rect = _in_window(button, window)
        if not whole.contains(rect):
            found.append(f"outside the window: {_path(button, window)} at {rect.getRect()}")
            continue
        parent = button.parentWidget()
        while parent is not None and parent is not window:
            if not _in_window(parent, window).contains(rect):
                found.append(f"cut off by {_name(parent)}: {_path(button, window)}")
                break
            parent = parent.parentWidget()
    return found


def audit(window: QWidget) -> list[str]:
    return overlaps(window) + clipped_buttons(window)


# ---- the window -------------------------------------------------------------------------------
def _wait(condition: Any, what: str) -> None:
    """Run the event loop until ``condition()`` holds, or fail after the deadline."""
    from PySide6.QtCore import QDeadlineTimer
    from PySide6.QtWidgets import QApplication

    deadline = QDeadlineTimer(DEADLINE_MS)
    while not condition():
        if deadline.hasExpired():
            raise TimeoutError(f"gave up waiting for {what}")
        QApplication.processEvents()
        QApplication.sendPostedEvents()


def _settle() -> None:
    """Let posted layout requests and resizes run (they chain: a layout resizes a child, which
    posts its own)."""
    from PySide6.QtWidgets import QApplication

    for _ in range(5):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def views(window: MainWindow) -> list[tuple[str, Any]]:
    """Each editor tab with the Diff tab, then each shown results tab with the Hook editor."""
    out = []
    tabs = window.results.run.tabs
    for i in range(window.editors.count()):
        out.append((f"editor {window.editors.tabText(i)}", (i, 0)))
    for j in range(tabs.count()):
        if tabs.isTabVisible(j):
            out.append((f"results {tabs.tabText(j)}", (0, j)))
    return out


def check(width: int, height: int, shot: Path | None) -> dict[str, Any]:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QToolBar

    from studio.core.app_settings import AppSettings
    from studio.ui.main_window import MainWindow
    from tests.support.paths import BUNDLED_WORKSPACE

    app = QApplication.instance() or QApplication(sys.argv[:1])
    folder = Path(tempfile.mkdtemp(prefix="window-audit-"))
    workspace = folder / "sample-workspace"
    shutil.copytree(BUNDLED_WORKSPACE, workspace, ignore=shutil.ignore_patterns(".hookstudio"))
    window = MainWindow(AppSettings(), None)
    try:
        window.show()
        window.open_workspace(workspace)
        window.resize(width, height)
        _wait(window.isVisible, "the window on screen")
        _settle()
        finished: list[object] = []
        window.run_finished.connect(finished.append)
        window.sample_box.setCurrentText(SAMPLE)
        window.run_selected()
        _wait(lambda: bool(finished) and window.results.diff_ready, "the run and its diff")
        problems = []
        for label, (editor, tab) in views(window):
            window.editors.setCurrentIndex(editor)
            window.results.run.tabs.setCurrentIndex(tab)
            _settle()
            problems += [f"{label}: {p}" for p in audit(window)]
        window.editors.setCurrentWidget(window.hook_editor)
        window.results.run.tabs.setCurrentIndex(0)
        _settle()
        if shot is not None:
            window.grab().save(str(shot))
        # The Records dock dragged as tall as it goes: the hook editor keeps its Save in view.
        areas = window.saveState()
        window.resizeDocks([window.records_dock], [height], Qt.Orientation.Vertical)
        _settle()
        save = window.hook_editor.save_button
        tall_dock = {
            "save_shown": save.isVisible() and not _scrolled(save),
            "problems": clipped_buttons(window),
        }
        window.restoreState(areas)
        _settle()
        toolbar = window.findChild(QToolBar, "runToolbar")
        hidden = [
            a.text()
            for a in toolbar.actions()
            if not a.isSeparator() and not toolbar.widgetForAction(a).isVisible()
        ]
        report = {
            "size": [window.width(), window.height()],
            "minimum": [window.minimumSizeHint().width(), window.minimumSizeHint().height()],
            "screen": [app.primaryScreen().size().width(), app.primaryScreen().size().height()],
            "scale": app.primaryScreen().devicePixelRatio(),
            "problems": problems,
            "toolbar_hidden": hidden,
            "save_shown": save.isVisible() and not _scrolled(save),
            "tall_records_dock": tall_dock,
        }
        return report
    finally:
        window.undo_stack.setClean()
        window.close()
        app.processEvents()
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("width", type=int)
    parser.add_argument("height", type=int)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--shot", type=Path)
    parser.add_argument("--report", type=Path)
    args = parser.parse_args(argv)
    screen = {
        "screens": [
            {
                "name": "audit",
                "x": 0,
                "y": 0,
                "width": args.width * args.scale,
                "height": args.height * args.scale,
                "logicalDpi": 96,
                "logicalBaseDpi": 96,
                "dpr": 1,
            }
        ]
    }
    config = Path(tempfile.mkdtemp(prefix="screen-")) / "screen.json"
    config.write_text(json.dumps(screen), encoding="utf-8")
    # Both are read once, when Qt starts; nothing of Qt is imported before this point.
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"
    os.environ["QT_SCALE_FACTOR"] = str(args.scale)
    report = check(args.width, args.height, args.shot)
    text = json.dumps(report, indent=2)
    if args.report is not None:
        args.report.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
