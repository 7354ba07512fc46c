"""The list of a workspace's samples: a model over the sample files' names (unsaved ones
marked), renaming in place, and the panel around it with New, Duplicate, Rename and Delete."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRegularExpression,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QFont, QKeySequence, QRegularExpressionValidator
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QSizePolicy,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.registry import CONTRACTS
from studio.core.workspace.folder import SAMPLES_DIR
from studio.core.workspace.sample_files import NAME_PATTERN, NAME_RULE, clean_sample_name

AnyIndex = QModelIndex | QPersistentModelIndex


class SampleListModel(QAbstractListModel):
    """The workspace's sample files by name; unsaved samples marked. Renaming in place goes
    through ``rename(old, new) -> bool``, which does the work on disk."""

    NAME_ROLE = Qt.ItemDataRole.UserRole + 1

    def __init__(self, rename: Callable[[str, str], bool], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._names: list[str] = []
        self._modified: set[str] = set()
        self._rename = rename

    @property
    def names(self) -> list[str]:
        return list(self._names)

    def is_modified(self, name: str) -> bool:
        return name in self._modified

    def row_of(self, name: str) -> int:
        try:
            return self._names.index(name)
        except ValueError:
            return -1

    def set_names(self, names: Sequence[str]) -> None:
        """Change the rows to ``names`` (in the same order as before), row by row."""
        wanted = list(names)
        keep = set(wanted)
        for row in range(len(self._names) - 1, -1, -1):
            if self._names[row] not in keep:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._names[row]
                self.endRemoveRows()
        have = set(self._names)
        for row, name in enumerate(wanted):
            if name not in have:
                self.beginInsertRows(QModelIndex(), row, row)
                self._names.insert(row, name)
                self.endInsertRows()
        if self._names != wanted:  # a different order: not expected, but never show a wrong list
            self.beginResetModel()
            self._names = wanted
            self.endResetModel()

    def set_modified(self, names: Iterable[str]) -> None:
        new = set(names)
        changed = new ^ self._modified
        self._modified = new
        for name in changed:
            row = self.row_of(name)
            if row >= 0:
                index = self.index(row)
                self.dataChanged.emit(index, index)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._names)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._names):
            return None
        name = self._names[index.row()]
        modified = name in self._modified
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{name}  ●" if modified else name
        if role in (Qt.ItemDataRole.EditRole, self.NAME_ROLE):
            return name
        if role == Qt.ItemDataRole.ToolTipRole:
            note = " (unsaved changes)" if modified else ""
            return f"{SAMPLES_DIR}/{name}.json{note}\nF2 renames, Delete deletes"
        if role == Qt.ItemDataRole.FontRole and modified:
            font = QFont()
            font.setItalic(True)
            return font
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        old = self._names[index.row()]
        new = clean_sample_name(str(value))
        if new == old:
            return False
        return self._rename(old, new)


class SampleNameDelegate(QStyledItemDelegate):
    """Edits a sample name with a line edit that only accepts what a name may hold."""

    def createEditor(
        self, parent: QWidget, option: QStyleOptionViewItem, index: AnyIndex
    ) -> QWidget:
        editor = QLineEdit(parent)
        editor.setValidator(QRegularExpressionValidator(QRegularExpression(NAME_PATTERN), editor))
        editor.setToolTip(f"A sample name: {NAME_RULE}")
        return editor


class SampleListPanel(QWidget):
    """The samples by name, with buttons and a context menu to create, duplicate, rename and
    delete them. The work on disk is the owner's: this panel asks for it with signals."""

    picked = Signal(str)  # the user selected a sample
    activated = Signal()  # the user wants to edit the selected sample (Enter, double click)
    new_requested = Signal(str)  # a contract's name
    duplicate_requested = Signal()
    delete_requested = Signal()

    def __init__(
        self,
        rename: Callable[[str, str], bool],
        menu_actions: Sequence[QAction] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._menu_actions = list(menu_actions)
        self._quiet = False
        self._can_create = False
        self.model = SampleListModel(rename, self)
        self.view = QListView()
        self.view.setObjectName("sampleList")
        self.view.setModel(self.model)
        self.view.setItemDelegate(SampleNameDelegate(self.view))
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.setMinimumWidth(120)

        self.new_menu = QMenu("New", self)
        self.new_actions: dict[str, QAction] = {}
        for contract in CONTRACTS.values():
            action = self.new_menu.addAction(f"{contract.title} sample")
            action.setStatusTip(f"Create a sample from the {contract.label} template")
            action.triggered.connect(lambda _=False, c=contract.name: self.new_requested.emit(c))
            self.new_actions[contract.name] = action
        # The owner adds this one to itself, so Ctrl+N works wherever the focus is inside it.
        self.new_action = QAction("New", self)
        self.new_action.setShortcut(QKeySequence.StandardKey.New)
        self.new_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.new_action.triggered.connect(self._on_new_menu)
        self.duplicate_action = self._list_action(
            "Duplicate", "Ctrl+D", self.duplicate_requested.emit
        )
        self.rename_action = self._list_action("Rename", "F2", self.start_rename)
        self.delete_action = self._list_action(
            "Delete", QKeySequence.StandardKey.Delete, self.delete_requested.emit
        )

        # Two rows of two, so the list can be narrow next to the editor.
        buttons = QGridLayout()
        buttons.setSpacing(2)
        self.new_button = QToolButton()
        self.new_button.setObjectName("newSample")
        self.new_button.setText("New")
        self.new_button.setMenu(self.new_menu)
        self.new_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.new_button.setToolTip(
            f"Create a sample from a template ({self._keys(self.new_action)})"
        )
        tool_buttons = [self.new_button]
        for action in (self.duplicate_action, self.rename_action, self.delete_action):
            button = QToolButton()
            button.setDefaultAction(action)
            tool_buttons.append(button)
        for k, button in enumerate(tool_buttons):
            button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            buttons.addWidget(button, k // 2, k % 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        title = QLabel("Samples")
        title.setBuddy(self.view)
        layout.addWidget(title)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)

        # The selection, not the current row: focusing the list makes a row current without
        # anyone having picked it.
        self.view.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.view.activated.connect(self._on_activated)
        self.view.customContextMenuRequested.connect(self._on_menu)
        self.update_actions()

    def _list_action(self, text: str, keys: Any, handler: Callable[[], Any]) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(keys))
        action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        action.setToolTip(f"{text} the selected sample ({self._keys(action)})")
        action.triggered.connect(lambda _=False: handler())
        self.view.addAction(action)
        return action

    @staticmethod
    def _keys(action: QAction) -> str:
        return action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)

    def set_can_create(self, can: bool) -> None:
        """Whether there is a folder to create samples in."""
        self._can_create = can
        self.update_actions()

    def set_names(self, names: Sequence[str]) -> None:
        """Show ``names``; a row that goes away does not count as the user picking another."""
        self._quiet = True
        try:
            self.model.set_names(names)
        finally:
            self._quiet = False

    def select(self, name: str) -> None:
        """Select ``name``'s row, as the program's choice rather than the user's."""
        row = self.model.row_of(name)
        selection = self.view.selectionModel()
        if row < 0:
            return
        index = self.model.index(row)
        if selection.currentIndex() != index:
            self._quiet = True
            try:
                selection.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
            finally:
                self._quiet = False
        self.view.scrollTo(index)

    def selected_name(self) -> str | None:
        rows = self.view.selectionModel().selectedRows()
        return self.model.data(rows[0], SampleListModel.NAME_ROLE) if rows else None

    def update_actions(self) -> None:
        has = self.selected_name() is not None
        for action in (self.duplicate_action, self.rename_action, self.delete_action):
            action.setEnabled(has)
        self.new_button.setEnabled(self._can_create)

    def start_rename(self) -> None:
        """Let the user type a new name for the current row."""
        index = self.view.currentIndex()
        if index.isValid():
            self.view.setFocus()
            self.view.edit(index)

    def _on_selection_changed(self, *_: Any) -> None:
        self.update_actions()
        if self._quiet:
            return
        name = self.selected_name()
        if name:
            self.picked.emit(name)

    def _on_activated(self, _index: QModelIndex) -> None:
        self.activated.emit()

    def _on_menu(self, point: Any) -> None:
        menu = QMenu(self)
        menu.addMenu(self.new_menu)
        menu.addSeparator()
        for action in (self.duplicate_action, self.rename_action, self.delete_action):
            menu.addAction(action)
        if self._menu_actions:
            menu.addSeparator()
            for action in self._menu_actions:
                menu.addAction(action)
        menu.exec(self.view.viewport().mapToGlobal(point))

    def _on_new_menu(self) -> None:
        self.new_button.showMenu()
