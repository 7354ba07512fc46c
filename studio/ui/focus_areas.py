"""The window's main areas for the keyboard: Tab goes through them in one order (toolbar, editor,
results, records, then the workspace panel) and round again, and F6 / Shift+F6 jump from area to
area, back to the field that last had focus there. The window asks :meth:`FocusAreas.next_field`
on every Tab, so a page built later (a new editor tab) takes its place in the order too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QApplication, QWidget


@dataclass(frozen=True)
class Area:
    name: str
    root: QWidget
    # Where F6 looks for the first field when nothing in the area had focus yet (None: the
    # whole area, e.g. the editors' current page rather than their tab bar).
    entry: Callable[[], QWidget | None] | None = None


def takes_tab(widget: QWidget) -> bool:
    """Whether Tab can stop at ``widget`` as it is now."""
    return (
        bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus)
        and widget.isVisible()
        and widget.isEnabled()
        and widget.focusProxy() is None
    )


def parked(widget: QWidget, window: QWidget) -> bool:
    """Whether ``widget`` is shown but placed outside the window (a main window parks the tab
    bar of tabbed docks there while it has no use for it)."""
    corner = widget.mapTo(window, widget.rect().topLeft())
    return not window.rect().intersects(widget.rect().translated(corner))


def depth(widget: QWidget) -> int:
    count = 0
    parent = widget.parentWidget()
    while parent is not None:
        count += 1
        parent = parent.parentWidget()
    return count


def focus_chain(window: QWidget) -> list[QWidget]:
    """Every widget of ``window`` that can take focus by Tab, shown or not, in the present
    tab order."""
    chain: list[QWidget] = []
    widget = window.nextInFocusChain()
    while widget is not None and widget is not window and len(chain) < 10_000:
        if widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.focusProxy() is None:
            chain.append(widget)
        widget = widget.nextInFocusChain()
    return chain


class FocusAreas(QObject):
    def __init__(self, window: QWidget, areas: Sequence[Area]) -> None:
        super().__init__(window)
        self.window = window
        self.areas = list(areas)
        self._last: dict[str, QWidget] = {}
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.focusChanged.connect(self._on_focus_changed)

    def area_of(self, widget: QWidget | None) -> Area | None:
        while widget is not None:
            for area in self.areas:
                if widget is area.root:
                    return area
            widget = widget.parentWidget()
        return None

    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        area = self.area_of(new)
        if area is not None and new is not None:
            self._last[area.name] = new

    # ---- Tab --------------------------------------------------------------------------------
    def tab_stops(self) -> list[QWidget]:
        """The fields Tab stops at now, area by area, in the focus chain's order inside each
        area; fields of no area (none today) come last."""
        grouped: dict[str, list[QWidget]] = {area.name: [] for area in self.areas}
        rest: list[QWidget] = []
        for widget in focus_chain(self.window):
            if not takes_tab(widget) or parked(widget, self.window):
                continue
            area = self.area_of(widget)
            (grouped[area.name] if area is not None else rest).append(widget)
        return [w for area in self.areas for w in grouped[area.name]] + rest

    def next_field(self, forward: bool) -> QWidget | None:
        """The field after (or before) the one with focus, going round at the ends; None when
        nothing of the window has focus."""
        stops = self.tab_stops()
        current = QApplication.focusWidget()
        if not stops or current is None:
            return None
        index = next((i for i, w in enumerate(stops) if w is current), None)
        if index is None:
            # Focus inside a compound field (a scroll area that takes focus, a combo box's
            # line edit): go on from the innermost stop that holds it.
            holders = [i for i, w in enumerate(stops) if w.isAncestorOf(current)]
            if not holders:
                return None  # a field Tab does not stop at (hidden, or focused by a click)
            index = max(holders, key=lambda i: depth(stops[i]))
        return stops[(index + (1 if forward else -1)) % len(stops)]

    # ---- F6 ---------------------------------------------------------------------------------
    def shown(self) -> list[Area]:
        return [area for area in self.areas if area.root.isVisible()]

    def cycle(self, step: int) -> QWidget | None:
        """Focus the next (``step`` 1) or previous (-1) area shown; returns the widget that
        took focus."""
        shown = self.shown()
        if not shown:
            return None
        current = self.area_of(QApplication.focusWidget())
        start = shown.index(current) if current in shown else (-1 if step > 0 else 0)
        for offset in range(1, len(shown) + 1):
            area = shown[(start + step * offset) % len(shown)]
            target = self._entry(area)
            if target is not None:
                target.setFocus(Qt.FocusReason.OtherFocusReason)
                return target
        return None

    def _entry(self, area: Area) -> QWidget | None:
        last = self._last.get(area.name)
        try:
            if last is not None and takes_tab(last) and area.root.isAncestorOf(last):
                return last
        except RuntimeError:
            del self._last[area.name]  # that field is gone (a page was rebuilt)
        root = area.entry() if area.entry is not None else area.root
        return self.first_field(root) if root is not None else None

    def first_field(self, root: QWidget) -> QWidget | None:
        """The first field inside ``root`` that Tab stops at now."""
        return next((w for w in self.tab_stops() if root.isAncestorOf(w)), None)
