"""A JSON value as a lazy tree: children are made when a branch is opened, in batches, so a
5 MB request costs nothing until the user looks inside it. A JSON pointer finds its row."""

from __future__ import annotations

import itertools
import json
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFontDatabase, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from studio.core.json.deep import deep_json
from studio.core.json.surrogates import escape_lone_surrogates
from studio.ui.json_copy import copy_action, copy_button, copy_json
from studio.ui.result_style import show_wrapped

BATCH = 200
CHUNK = 1000
"""An array longer than this shows its items in ranges of CHUNK (of CHUNK² and so on when it
is longer still), as debuggers do, so no branch ever lays out more than CHUNK rows."""
PREVIEW_CHARS = 160
TOOLTIP_CHARS = 2000
DETAIL_CHARS = 200_000
POINTER_ROLE = Qt.ItemDataRole.UserRole + 1
EXPANDED_MOST = 2000
"""Values of up to this many members open whole; a larger one (a hook's 100,000 tools) opens
its first level, the rest as the user opens it: opening each row is the view's work, on the
GUI thread."""

Index = QModelIndex | QPersistentModelIndex


def members_more_than(value: Any, most: int) -> bool:
    """Whether ``value`` holds more than ``most`` members (array items and object members, at
    every depth); counts no further than that."""
    count = 0
    pending = [value] if isinstance(value, dict | list) else []
    while pending:
        current = pending.pop()
        for child in current.values() if isinstance(current, dict) else current:
            count += 1
            if count > most:
                return True
            if isinstance(child, dict | list):
                pending.append(child)
    return False


def parse_pointer(pointer: str) -> list[str] | None:
    """RFC 6901 tokens of ``pointer``; None when it is not a pointer (no leading slash)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        return None
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def escape_token(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """A one-line picture of ``value`` that never walks more of it than it shows."""
    if isinstance(value, dict):
        n = len(value)
        if n == 0:
            return "{}"
        names = [str(k) for k in itertools.islice(value, 4)]
        more = f", … {n} keys" if n > 4 else ""
        return "{" + ", ".join(names)[:limit] + more + "}"
    if isinstance(value, list):
        n = len(value)
        return "[]" if n == 0 else "[1 item]" if n == 1 else f"[{n} items]"
    if isinstance(value, str):
        head = value[: limit + 1]
        text = escape_lone_surrogates(json.dumps(head[:limit], ensure_ascii=False))
        if len(value) > limit:
            text = text[:-1] + f'…" ({len(value):,} characters)'
        return text
    return json_scalar(value)


def json_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    try:
        return escape_lone_surrogates(json.dumps(value, ensure_ascii=False, allow_nan=True))
    except (TypeError, ValueError):
        return repr(value)


def pretty(value: Any, limit: int = DETAIL_CHARS) -> str:
    """``value`` as indented JSON, cut at ``limit`` characters with the cut marked.

    A long string is shown as its text, not as one escaped line; a lone surrogate anywhere as
    its escape, which Qt would otherwise drop."""
    if isinstance(value, str):
        text = value
    else:
        try:
            with deep_json():
                text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=True)
        except (TypeError, ValueError):
            text = repr(value)
    # Escaped once cut: a hook's 50 MB string is shown by its first part only.
    if len(text) > limit:
        cut = escape_lone_surrogates(text[:limit])
        return cut + f"\n… (cut: {len(text):,} characters in all)"
    return escape_lone_surrogates(text)


class _Node:
    """A container the view has opened (or the root), or a range of a long array's items: its
    value, and how many of its rows the view has been told about. Rows themselves are not
    objects: an index is (row, id of the node it is in)."""

    __slots__ = (
        "bucket",
        "fetched",
        "id",
        "key",
        "keys",
        "kids",
        "parent",
        "row",
        "size",
        "span",
        "start",
        "value",
    )

    def __init__(
        self,
        node_id: int,
        parent: _Node | None,
        row: int,
        key: str | int | None,
        value: Any,
        *,
        start: int = 0,
        span: int | None = None,
        bucket: bool = False,
    ) -> None:
        self.id = node_id
        self.parent = parent
        self.row = row
        self.key = key
        self.value = value
        self.bucket = bucket
        self.fetched = 0
        self.kids: dict[int, _Node] = {}
        self.keys: list[str] | None = None
        self.start = start
        self.span = span if span is not None else (len(value) if isinstance(value, list) else 0)
        self.size = 1
        """Items per row: 1, or the range each row stands for when the array is long."""
        if isinstance(value, list):
            while self.span > self.size * CHUNK:
                self.size *= CHUNK

    @property
    def ranged(self) -> bool:
        return self.size > 1

    @property
    def total(self) -> int:
        v = self.value
        if isinstance(v, list):
            return -(-self.span // self.size)
        return len(v) if isinstance(v, dict) else 0

    def key_at(self, row: int) -> str | int:
        if isinstance(self.value, list):
            return self.start + row
        if self.keys is None:
            self.keys = list(self.value)
        return self.keys[row]

    def member(self, row: int) -> Any:
        return self.value[self.key_at(row)]

    def range_of(self, row: int) -> tuple[int, int]:
        """The items a row of a ranged node stands for: (first, count)."""
        first = self.start + row * self.size
        return first, min(self.size, self.start + self.span - first)

    def pointer(self) -> str:
        parts: list[str] = []
        node: _Node | None = self
        while node is not None and node.parent is not None:
            if not node.bucket:
                parts.append(escape_token(node.key if node.key is not None else ""))
            node = node.parent
        return "".join("/" + p for p in reversed(parts))


class JsonTreeModel(QAbstractItemModel):
    """Columns: key, value. The root value's members are the top-level rows (a scalar root is
    one row of its own).

    Members are announced to the view in batches as a branch opens (``fetchMore``); an index is
    a row and the id of its container, so a row costs nothing until it is shown, and an index
    that outlives a reset finds nothing instead of a freed object."""

    HEADERS = ("Key", "Value")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._ids = itertools.count(1)
        self._root = _Node(0, None, 0, None, {})
        self._nodes: dict[int, _Node] = {0: self._root}
        self._scalar_root = False
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    # ---- content ------------------------------------------------------------------------
    def set_value(self, value: Any) -> None:
        self.beginResetModel()
        self._scalar_root = not isinstance(value, dict | list)
        self._root = _Node(next(self._ids), None, 0, None, [value] if self._scalar_root else value)
        self._nodes = {self._root.id: self._root}
        self.endResetModel()

    @property
    def value(self) -> Any:
        return self._root.value[0] if self._scalar_root else self._root.value

    def _holder(self, index: Index) -> _Node | None:
        """The container an index's row is in (None for a stale index)."""
        return self._nodes.get(index.internalId())

    def _container(self, index: Index) -> _Node | None:
        """The node of the value at ``index`` (the root for no index); None unless it is a
        container."""
        if not index.isValid():
            return self._root
        holder = self._holder(index)
        if holder is None:
            return None
        return self._open(holder, index.row())

    def _open(self, holder: _Node, row: int) -> _Node | None:
        kid = holder.kids.get(row)
        if kid is None and holder.ranged:
            first, count = holder.range_of(row)
            kid = _Node(next(self._ids), holder, row, None, holder.value, start=first, span=count)
            kid.bucket = True
            holder.kids[row] = kid
            self._nodes[kid.id] = kid
        if kid is None:
            value = holder.member(row)
            if not isinstance(value, dict | list):
                return None
            key = None if holder is self._root and self._scalar_root else holder.key_at(row)
            kid = _Node(next(self._ids), holder, row, key, value)
            holder.kids[row] = kid
            self._nodes[kid.id] = kid
        return kid

    # ---- Qt model -----------------------------------------------------------------------
    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        node = self._container(parent)
        if node is not None and 0 <= row < node.fetched and 0 <= column < 2:
            return self.createIndex(row, column, node.id)
        return QModelIndex()

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        holder = self._holder(index)
        if holder is None or holder.parent is None:
            return QModelIndex()
        return self.createIndex(holder.row, 0, holder.parent.id)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return 0
        node = self._container(parent)
        return node.fetched if node is not None else 0

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 2

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        if not parent.isValid():
            return self._root.total > 0
        if parent.column() != 0:
            return False
        holder = self._holder(parent)
        if holder is None:
            return False
        if holder.ranged:
            return True
        value = holder.member(parent.row())
        return isinstance(value, dict | list) and len(value) > 0

    def canFetchMore(self, parent: Index) -> bool:
        if parent.isValid() and parent.column() != 0:
            return False
        node = self._container(parent)
        return node is not None and node.fetched < node.total

    def fetchMore(self, parent: Index) -> None:
        node = self._container(parent)
        if node is not None:
            self._fetch(node, parent, min(node.total, node.fetched + BATCH))

    def _fetch(self, node: _Node, index: Index, upto: int) -> None:
        start = node.fetched
        if upto <= start:
            return
        self.beginInsertRows(index, start, upto - 1)
        node.fetched = upto
        self.endInsertRows()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else _NO_FLAGS

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        holder = self._holder(index)
        if holder is None or not 0 <= index.row() < holder.total:
            return None
        row, col = index.row(), index.column()
        if holder.ranged:
            return self._range_data(holder, row, col, role)
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                if holder is self._root and self._scalar_root:
                    return "(value)"
                key = holder.key_at(row)
                return f"[{key}]" if isinstance(key, int) else str(key)
            return preview(holder.member(row))
        if role == Qt.ItemDataRole.ToolTipRole:
            value = holder.member(row)
            if col == 1 and isinstance(value, str) and len(value) > PREVIEW_CHARS:
                return value[:TOOLTIP_CHARS]
            return self.pointer_of(index) or "/"
        if role == Qt.ItemDataRole.FontRole and col == 1:
            return self._mono
        if (
            role == Qt.ItemDataRole.ForegroundRole
            and col == 1
            and isinstance(holder.member(row), dict | list)
        ):
            return QPalette().color(QPalette.ColorRole.PlaceholderText)
        if role == POINTER_ROLE:
            return self.pointer_of(index)
        return None

    def _range_data(self, holder: _Node, row: int, col: int, role: int) -> Any:
        first, count = holder.range_of(row)
        if role == Qt.ItemDataRole.DisplayRole:
            return f"[{first} … {first + count - 1}]" if col == 0 else f"{count} items"
        if role == Qt.ItemDataRole.ForegroundRole and col == 1:
            return QPalette().color(QPalette.ColorRole.PlaceholderText)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"items {first} to {first + count - 1} of {holder.pointer() or '/'}"
        return None

    # ---- pointers -----------------------------------------------------------------------
    def value_at(self, index: Index) -> Any:
        if not index.isValid():
            return self.value
        holder = self._holder(index)
        if holder is None:
            return None
        if holder.ranged:
            first, count = holder.range_of(index.row())
            return holder.value[first : first + min(count, CHUNK)]
        return holder.member(index.row())

    def pointer_of(self, index: Index) -> str:
        if not index.isValid():
            return ""
        holder = self._holder(index)
        if holder is None:
            return ""
        if (holder is self._root and self._scalar_root) or holder.ranged:
            return holder.pointer()
        return holder.pointer() + "/" + escape_token(holder.key_at(index.row()))

    def locate(self, pointer: str) -> tuple[QModelIndex, str, bool]:
        """The row of the value at ``pointer``, fetching the rows on the way; when the pointer
        does not resolve, the deepest row it reaches. Returns (index, reached pointer, found)."""
        tokens = parse_pointer(pointer)
        if tokens is None:
            return QModelIndex(), "", False
        if self._scalar_root:
            self._fetch(self._root, QModelIndex(), 1)
            return self.index(0, 0), "", not tokens
        node: _Node | None = self._root
        index = QModelIndex()
        for token in tokens:
            row = self._row_of(node, token) if node is not None else None
            if node is None or row is None:
                return index, self.pointer_of(index), False
            while node.ranged:  # down through the ranges to the item's own row
                step = row // node.size
                self._fetch(node, index, step + 1)
                index = self.createIndex(step, 0, node.id)
                ranged = self._open(node, step)
                assert ranged is not None
                row -= step * node.size
                node = ranged
            self._fetch(node, index, row + 1)
            index = self.createIndex(row, 0, node.id)
            node = self._open(node, row)
        return index, self.pointer_of(index), True

    @staticmethod
    def _row_of(node: _Node, token: str) -> int | None:
        value = node.value
        if isinstance(value, list):
            if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
                return None
            item = int(token)
            if not node.start <= item < node.start + node.span:
                return None
            return item - node.start
        if isinstance(value, dict):
            if token not in value:
                return None
            if node.keys is None:
                node.keys = list(value)
            return node.keys.index(token)
        return None


_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_NO_FLAGS = Qt.ItemFlag.NoItemFlags


class JsonTreeView(QWidget):
    """A JSON tree with a detail pane for the selected value, its pointer above it."""

    pointer_selected = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, detail: bool = True) -> None:
        super().__init__(parent)
        self.model = JsonTreeModel(self)
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, 200)
        self.tree.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.pointer_label = QLabel()
        self.pointer_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.detail.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.detail.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.detail.setPlaceholderText("Select a value to see it in full")
        self.copy_action = copy_action(
            self, self.copy_json, "Copy the selected value, or the whole value, as JSON"
        )
        self.copy_button = copy_button(self.copy_action, "copyJson")
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        # At the start of the row: a view wider than the pane it scrolls in still shows it.
        bar.addWidget(self.copy_button)
        bar.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(bar)
        if detail:
            split = QSplitter(Qt.Orientation.Vertical)
            split.addWidget(self.tree)
            lower = QWidget()
            lower_layout = QVBoxLayout(lower)
            lower_layout.setContentsMargins(0, 0, 0, 0)
            lower_layout.addWidget(self.pointer_label)
            lower_layout.addWidget(self.detail)
            split.addWidget(lower)
            split.setSizes([400, 140])
            layout.addWidget(split)
        else:
            self.pointer_label.hide()
            self.detail.hide()
            layout.addWidget(self.tree)
        self._detail_enabled = detail

    def set_value(self, value: Any, *, expand: int = 0) -> None:
        self.model.set_value(value)
        self.detail.clear()
        self.pointer_label.clear()
        if expand:
            self.tree.expandToDepth(expand - 1)

    def expand_all(self) -> None:
        """Every row open, or only the first level's for a value of more than
        :data:`EXPANDED_MOST` members."""
        if members_more_than(self.model.value, EXPANDED_MOST):
            self.tree.expandToDepth(0)
        else:
            self.tree.expandAll()

    def copied_value(self) -> Any:
        """What Copy as JSON takes: the selected value, else the whole value."""
        index = self.tree.currentIndex()
        if index.isValid() and self.tree.selectionModel().isSelected(index):
            return self.model.value_at(index)
        return self.model.value

    def copy_json(self) -> str:
        """Put the selected value (or the whole value) on the clipboard as JSON text."""
        return copy_json(self.copied_value())

    def select_pointer(self, pointer: str) -> bool:
        """Select and scroll to the value at ``pointer``; True when it resolved exactly."""
        index, _, found = self.model.locate(pointer)
        if not index.isValid():
            self.tree.clearSelection()
            return found
        parent = index.parent()
        while parent.isValid():
            self.tree.expand(parent)
            parent = parent.parent()
        self.tree.setCurrentIndex(index)
        self.tree.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        return found

    def current_pointer(self) -> str | None:
        index = self.tree.currentIndex()
        return self.model.pointer_of(index) if index.isValid() else None

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        pointer = self.model.pointer_of(current)
        if self._detail_enabled:
            self.pointer_label.setText(pointer or "/")
            show_wrapped(self.detail, pretty(self.model.value_at(current)))
        self.pointer_selected.emit(pointer)
