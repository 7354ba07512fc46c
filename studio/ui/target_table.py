"""The hook's target rows as a table model over the core's rows, and the view that edits them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLineEdit,
    QStyledItemDelegate,
    QToolButton,
    QWidget,
)

from studio.core.pre_llm.targets import (
    ALL_STREAMS_LABEL,
    FREE_NAME_LABEL,
    MAIN_LABEL,
    Rows,
    TargetKind,
    TargetRow,
    choose,
)
from studio.ui.ordered_rows_view import OrderedRowsView

AnyIndex = QModelIndex | QPersistentModelIndex
CHOOSE_LABEL = "Choose a target…"
CHOSEN = "chosen"
"""The property of a target combo set once the user has chosen an item in it."""
TARGET_COLUMN, NAME_COLUMN, REMOVE_COLUMN = 0, 1, 2


class TargetTableModel(QAbstractTableModel):
    """Rows are owned by the hook editor's draft; the model shows them and turns the user's edits
    into calls of ``edit(rows)``, which goes through the undo stack and comes back via
    ``set_rows``."""

    HEADERS = ("Target", "Loop name", "")

    def __init__(self, edit: Callable[[Rows, int | None], None]) -> None:
        super().__init__()
        self._rows: Rows = ()
        self._declared: tuple[str, ...] = ()
        self._problems: dict[int, str] = {}
        self._edit = edit

    # ---- state from the editor ---------------------------------------------------------------
    @property
    def rows(self) -> Rows:
        return self._rows

    def set_rows(self, rows: Rows) -> None:
        old = self._rows
        if rows == old:
            return
        if len(rows) == len(old):
            self._rows = rows
            for i, (a, b) in enumerate(zip(old, rows, strict=True)):
                if a != b:
                    self.dataChanged.emit(self.index(i, 0), self.index(i, 1))
            return
        if len(rows) == len(old) + 1 and rows[: len(old)] == old:
            self.beginInsertRows(QModelIndex(), len(old), len(old))
            self._rows = rows
            self.endInsertRows()
            return
        if len(rows) == len(old) - 1:
            for i in range(len(old)):
                if old[:i] + old[i + 1 :] == rows:
                    self.beginRemoveRows(QModelIndex(), i, i)
                    self._rows = rows
                    self.endRemoveRows()
                    return
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def set_declared_loops(self, loops: Sequence[str]) -> None:
        self._declared = tuple(loops)

    def set_problems(self, problems: dict[int, str]) -> None:
        self._problems = problems
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, 1))

    # ---- choices -------------------------------------------------------------------------------
    def choices(self) -> list[tuple[str, TargetRow | None]]:
        """What a row can be: All streams, Main, each declared loop, a free name."""
        items: list[tuple[str, TargetRow | None]] = [
            (ALL_STREAMS_LABEL, TargetRow.all_streams()),
            (MAIN_LABEL, TargetRow.main()),
        ]
        items += [(name, TargetRow.loop(name)) for name in self._declared]
        items.append((FREE_NAME_LABEL, None))
        return items

    def choice_label(self, row: TargetRow) -> str:
        if row.kind is TargetKind.EMPTY:
            return CHOOSE_LABEL
        if row.kind is TargetKind.LOOP and row.name not in self._declared:
            return FREE_NAME_LABEL
        return row.label()

    # ---- Qt model ------------------------------------------------------------------------------
    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 3

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        if orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole:
            return str(section + 1)
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        row = self._rows[index.row()]
        if index.column() == REMOVE_COLUMN:
            return Qt.ItemFlag.ItemIsEnabled
        if index.column() == TARGET_COLUMN:
            return base | Qt.ItemFlag.ItemIsEditable
        if row.kind is TargetKind.LOOP and row.name not in self._declared:
            return base | Qt.ItemFlag.ItemIsEditable
        return base

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        column = index.column()
        if column == REMOVE_COLUMN:
            return "Remove this target" if role == Qt.ItemDataRole.ToolTipRole else None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if column == TARGET_COLUMN:
                return self.choice_label(row)
            if row.kind is TargetKind.LOOP:
                return row.name
            if row.kind is TargetKind.ALL:
                return "every loop, now and later"
            if row.kind is TargetKind.MAIN:
                return "main"
            return ""
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._problems.get(index.row())
        if role == Qt.ItemDataRole.BackgroundRole and index.row() in self._problems:
            return QBrush(QColor(220, 60, 60, 60))
        grey = row.kind in (TargetKind.ALL, TargetKind.MAIN)
        if role == Qt.ItemDataRole.ForegroundRole and column == NAME_COLUMN and grey:
            return QBrush(QColor(128, 128, 128))
        return None

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        i = index.row()
        if index.column() == TARGET_COLUMN:
            choices = dict(self.choices())
            if value not in choices:
                return False
            chosen = choices[value]
            if chosen is None:
                current = self._rows[i]
                keep = current.name if current.kind is TargetKind.LOOP else ""
                chosen = TargetRow.loop(keep)
            self._edit(choose(self._rows, i, chosen), i)
            return True
        self._edit(choose(self._rows, i, TargetRow.loop(str(value).strip())), i)
        return True


class _TargetDelegate(QStyledItemDelegate):
    """A combo box of the row's choices in the Target column; a loop name's text is reported
    as it is typed (``typed(row, text)``), so its findings need not wait for Enter."""

    typed = Signal(int, str)

    def createEditor(self, parent: QWidget, option: Any, index: AnyIndex) -> QWidget:
        if index.column() != TARGET_COLUMN:
            editor = super().createEditor(parent, option, index)
            if isinstance(editor, QLineEdit):
                row = QPersistentModelIndex(index)
                editor.textEdited.connect(lambda text: self.typed.emit(row.row(), text))
            return editor
        model = index.model()
        assert isinstance(model, TargetTableModel)
        combo = QComboBox(parent)
        combo.addItems([label for label, _ in model.choices()])
        combo.activated.connect(lambda _=0: self._chosen(combo))
        return combo

    def _chosen(self, combo: QComboBox) -> None:
        combo.setProperty(CHOSEN, True)
        self.commitData.emit(combo)

    def setEditorData(self, editor: QWidget, index: AnyIndex) -> None:
        if isinstance(editor, QComboBox):
            editor.setCurrentText(index.data(Qt.ItemDataRole.EditRole))
            return
        super().setEditorData(editor, index)

    def setModelData(self, editor: QWidget, model: Any, index: AnyIndex) -> None:
        if isinstance(editor, QComboBox):
            # Only a choice the user made is committed: a combo closed by leaving the cell
            # (focus elsewhere) shows its first item, All streams, which would replace every row.
            if editor.property(CHOSEN):
                model.setData(index, editor.currentText(), Qt.ItemDataRole.EditRole)
            return
        super().setModelData(editor, model, index)


class TargetTableView(OrderedRowsView):
    """The rows with keyboard editing: Insert adds, Delete removes, Alt+Up/Down moves. Tab and
    Shift+Tab leave the table (arrows move between cells), so it is never a trap."""

    name_typed = Signal(int, str)
    """A loop name as it stands in its cell's editor, before it is committed."""
    name_editor_closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        delegate = _TargetDelegate(self)
        delegate.typed.connect(self.name_typed)
        delegate.closeEditor.connect(lambda *_: self.name_editor_closed.emit())
        self.setItemDelegate(delegate)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.SelectedClicked
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.horizontalHeader().setMinimumSectionSize(28)
        self.verticalHeader().setDefaultSectionSize(28)
        self.setMinimumHeight(120)
        self.setTabKeyNavigation(False)
        for keys, handler, what in (
            (QKeySequence(Qt.Key.Key_Insert), self.add_requested.emit, "Add a target row"),
            (QKeySequence("Ctrl+Shift+N"), self.add_requested.emit, "Add a target row"),
            (QKeySequence(Qt.Key.Key_Delete), self._remove_current, "Remove the target row"),
            (QKeySequence("Alt+Up"), lambda: self.move_current(-1), "Move the target row up"),
            (QKeySequence("Alt+Down"), lambda: self.move_current(1), "Move the target row down"),
        ):
            shortcut = QShortcut(keys, self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            # Listed in Help > Keyboard shortcuts, under the place where it works.
            shortcut.setWhatsThis(f"Targets table: {what}")
            shortcut.activated.connect(handler)

    def setModel(self, model: Any) -> None:
        super().setModel(model)
        header = self.horizontalHeader()
        header.setSectionResizeMode(REMOVE_COLUMN, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(REMOVE_COLUMN, 34)
        for changed in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            changed.connect(self._place_remove_buttons)
        self._place_remove_buttons()

    def _place_remove_buttons(self, *_: Any) -> None:
        """Each row has its own remove button."""
        model = self.model()
        if model is None:
            return
        for row in range(model.rowCount()):
            index = model.index(row, REMOVE_COLUMN)
            if self.indexWidget(index) is None:
                button = QToolButton(self)
                button.setText("✕")
                button.setAutoRaise(True)
                # Delete does the same from the keyboard; a stop per row would only slow Tab.
                button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
                button.setObjectName("removeTarget")
                button.setToolTip("Remove this target (Delete)")
                button.clicked.connect(lambda _=False, b=button: self._remove_row_of(b))
                self.setIndexWidget(index, button)

    def _remove_row_of(self, button: QWidget) -> None:
        index = self.indexAt(button.pos())
        if index.isValid():
            self.remove_requested.emit(index.row())

    def remove_button(self, row: int) -> QWidget | None:
        model = self.model()
        return self.indexWidget(model.index(row, REMOVE_COLUMN)) if model is not None else None
