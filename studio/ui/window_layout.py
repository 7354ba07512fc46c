"""How the window fits the screen it is on: parts that scroll instead of pushing the window's
minimum size up, the first size and the share of each area, and the keyboard rules every view of
the window follows (Tab leaves a table, a read-only text moves focus on Tab)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDockWidget,
    QFrame,
    QMainWindow,
    QPlainTextEdit,
    QScrollArea,
    QStackedWidget,
    QTextEdit,
    QWidget,
)

# The size the window opens at when the screen has room for it.
PREFERRED = QSize(1400, 880)
# The share of the window's height the Records dock starts with, and its bounds in pixels.
RECORDS_SHARE, RECORDS_MIN, RECORDS_MAX = 0.3, 150, 260
# The share of the window's width the Workspace dock starts with, and its bounds.
WORKSPACE_SHARE, WORKSPACE_MIN, WORKSPACE_MAX = 0.15, 150, 230
# The editors' share of the central area (the results have the rest).
EDITORS_SHARE = 0.49
# A long sample name shows this many characters in the toolbar; the rest is in the tooltip.
SAMPLE_BOX_CHARS = 24


class _MinimumHost(QWidget):
    """Holds one widget and gives it all its room. A scroll area asks a widget whose layout
    wraps text for its preferred height at the given width and scrolls below that; through this
    host it asks for the minimum size only, so a page shrinks as far as its content allows
    before a scroll bar appears."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.widget = widget
        widget.setParent(self)

    def minimumSizeHint(self) -> QSize:
        return self.widget.minimumSizeHint().expandedTo(self.widget.minimumSize())

    def sizeHint(self) -> QSize:
        return self.widget.sizeHint()

    def resizeEvent(self, event: QResizeEvent) -> None:
        self.widget.setGeometry(self.rect())

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            # The widget's size needs changed: let the scroll area know.
            self.updateGeometry()
        return super().event(event)


def scroll_below_minimum(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless scroll area: it keeps its natural minimum size inside, and
    below that the area scrolls instead of making the window larger than the screen. The area
    itself takes no focus, so Tab goes straight to the widget's fields."""
    area = QScrollArea()
    area.setWidget(_MinimumHost(widget))
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    area.setObjectName(f"{widget.objectName() or type(widget).__name__}Scroll")
    return area


class CurrentPageStack(QStackedWidget):
    """A stack whose minimum size is its current page's, not its largest page's: a page that
    is not on show does not make the window larger."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.currentChanged.connect(lambda _index: self.updateGeometry())

    def minimumSizeHint(self) -> QSize:
        page = self.currentWidget()
        if page is None:
            return super().minimumSizeHint()
        return page.minimumSizeHint().expandedTo(page.minimumSize())

    def sizeHint(self) -> QSize:
        page = self.currentWidget()
        return page.sizeHint() if page is not None else super().sizeHint()


def keep_narrow(box: QComboBox, chars: int = SAMPLE_BOX_CHARS) -> None:
    """A combo box whose width does not follow its longest item: a long name is elided in the
    box and shown whole in its popup and tooltip."""
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(chars)
    tip = box.toolTip()

    def show_whole(text: str) -> None:
        box.setToolTip(f"{text}\n{tip}" if text else tip)

    box.currentTextChanged.connect(show_whole)


def first_size(available: QSize) -> QSize:
    """The window's first size: the preferred one, or the screen's available area when that is
    smaller."""
    return PREFERRED.boundedTo(available)


def share(total: int, part: float, low: int, high: int) -> int:
    return max(low, min(high, round(total * part)))


def lay_out_areas(window: QMainWindow, records: QDockWidget, workspace: QDockWidget) -> None:
    """The docks' and the central splitter's sizes for the window's present size: on a small
    screen the Records dock takes less than a third of the height, never half of it."""
    size = window.size()
    window.resizeDocks(
        [records],
        [share(size.height(), RECORDS_SHARE, RECORDS_MIN, RECORDS_MAX)],
        Qt.Orientation.Vertical,
    )
    window.resizeDocks(
        [workspace],
        [share(size.width(), WORKSPACE_SHARE, WORKSPACE_MIN, WORKSPACE_MAX)],
        Qt.Orientation.Horizontal,
    )


def central_sizes(width: int) -> list[int]:
    editors = round(width * EDITORS_SHARE)
    return [editors, width - editors]


def no_tab_traps(root: QWidget) -> None:
    """Tab and Shift+Tab leave every table and list (arrows move inside them), and a read-only
    text view passes Tab on instead of swallowing it. Views made later call this for themselves
    or are reached by the window calling it again."""
    # One pass over the widgets: each pass wraps every object below ``root`` for Python, which
    # for the whole window took a good part of its start.
    for widget in root.findChildren(QWidget):
        if isinstance(widget, QAbstractItemView):
            widget.setTabKeyNavigation(False)
        elif isinstance(widget, QPlainTextEdit | QTextEdit) and widget.isReadOnly():
            widget.setTabChangesFocus(True)
