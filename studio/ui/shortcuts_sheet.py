"""Help > Keyboard shortcuts: every action of the window that has a shortcut, read from the
actions themselves when the sheet opens, so the list is never out of date. Menu actions are
listed under their menu; the shortcuts that work in one place only (a table, the records) under
that place."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMainWindow,
    QMenu,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

NATIVE = QKeySequence.SequenceFormat.NativeText


@dataclass(frozen=True)
class ShortcutEntry:
    group: str
    text: str
    keys: str


def plain(text: str) -> str:
    """A menu text without its mnemonic marks and trailing ellipsis."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()


def keys_of(action: QAction) -> str:
    return ", ".join(s.toString(NATIVE) for s in action.shortcuts() if not s.isEmpty())


def menu_entries(menu: QMenu, group: str) -> Iterator[tuple[ShortcutEntry, QAction]]:
    for action in menu.actions():
        sub = action.menu()
        if isinstance(sub, QMenu):
            yield from menu_entries(sub, f"{group} › {plain(sub.title())}")
        elif not action.isSeparator() and keys_of(action):
            yield ShortcutEntry(group, plain(action.text()), keys_of(action)), action


def shortcut_entries(
    window: QMainWindow, place_of: Callable[[QWidget], str]
) -> list[ShortcutEntry]:
    """Menu actions by menu, then the actions and shortcuts that work in one place only
    (``place_of`` names the place of a widget)."""
    entries: list[ShortcutEntry] = []
    in_menus: set[int] = set()
    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            for entry, action in menu_entries(menu, plain(menu.title())):
                entries.append(entry)
                in_menus.add(id(action))
    local: list[ShortcutEntry] = []
    for action in window.findChildren(QAction):
        keys = keys_of(action)
        if not keys or id(action) in in_menus or not action.text():
            continue
        owner = action.parent()
        place = place_of(owner) if isinstance(owner, QWidget) else ""
        text = plain(action.text().split("\t")[0])
        local.append(ShortcutEntry(place or "Window", text, keys))
    for shortcut in window.findChildren(QShortcut):
        what = shortcut.whatsThis()
        owner = shortcut.parent()
        if not what or not isinstance(owner, QWidget):
            continue
        place, _, text = what.partition(": ")
        local.append(ShortcutEntry(place, text, shortcut.key().toString(NATIVE)))
    seen: set[ShortcutEntry] = set()
    for entry in sorted(local, key=lambda e: (e.group, e.text)):
        if entry not in seen:
            seen.add(entry)
            entries.append(entry)
    return entries


class ShortcutsSheet(QDialog):
    def __init__(self, entries: list[ShortcutEntry], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard Shortcuts")
        self.setObjectName("shortcutsSheet")
        self.tree = QTreeWidget()
        self.tree.setObjectName("shortcutsTree")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Action", "Shortcut"])
        self.tree.setRootIsDecorated(False)
        self.tree.setTabKeyNavigation(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        groups: dict[str, QTreeWidgetItem] = {}
        for entry in entries:
            group = groups.get(entry.group)
            if group is None:
                group = QTreeWidgetItem(self.tree, [entry.group])
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
                group.setFirstColumnSpanned(True)
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                groups[entry.group] = group
            QTreeWidgetItem(group, [entry.text, entry.keys])
        self.tree.expandAll()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree)
        layout.addWidget(buttons)
        self.resize(460, 520)

    def rows(self) -> list[tuple[str, str, str]]:
        """(group, action, shortcut) as listed."""
        out = []
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            assert group is not None
            for j in range(group.childCount()):
                item = group.child(j)
                assert item is not None
                out.append((group.text(0), item.text(0), item.text(1)))
        return out
