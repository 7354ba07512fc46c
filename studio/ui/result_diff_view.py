"""The request diff, side by side: system, each message (and the blocks of a changed one), each
tool and each option, original on the left and transformed on the right, with the summary line
on top. The diff is computed once per outcome, by the engine's worker threads; rows are a model
over it, and a row's full text is only rendered when it is selected.

This module holds the widget, ``diff_cache`` the diffs computed; ``result_diff_sides`` says what a
diff compares, ``result_diff_rows`` builds the rows, ``result_diff_model`` shows them to Qt and
``result_diff_detail`` shows the selected row in full."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from studio.core.pre_llm.diff import TEXT_DIFF_MOST, RequestDiff, diff_text
from studio.ui.after_paint import after_pending_paint
from studio.ui.diff_cache import DiffCache as DiffCache
from studio.ui.engine_bridge import Job
from studio.ui.result_diff_detail import MISSING, SideText, row_values
from studio.ui.result_diff_model import DiffModel
from studio.ui.result_diff_rows import DiffRow, build_rows
from studio.ui.result_diff_sides import DiffSides
from studio.ui.result_json_tree import pretty
from studio.ui.result_style import heading, note

EXPANDED_MESSAGES = 50


class RequestDiffView(QWidget):
    """Summary line, "Only changes", the side-by-side rows, and the selected item in full.

    ``diff_shown`` once the diff asked for by :meth:`show_diff` is in the view (or said to have
    failed)."""

    diff_shown = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary_label = heading()
        self.summary_label.setObjectName("diffSummary")
        self.problems_label = note()
        self.only_changes = QCheckBox("Only changes")
        self.only_changes.setToolTip("Hide unchanged messages, tools, options and system lines")
        self.only_changes.toggled.connect(self._on_only_changes_toggled)
        self.model = DiffModel(self)
        self.tree = QTreeView()
        self.tree.setObjectName("diffTree")
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.tree.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.left_text = SideText("Select a row to see the original in full")
        self.right_text = SideText("…and the transformed one here")
        self.detail_label = note()

        top = QHBoxLayout()
        top.addWidget(self.summary_label, 1)
        top.addWidget(self.only_changes, 0, Qt.AlignmentFlag.AlignTop)
        details = QWidget()
        details_layout = QVBoxLayout(details)
        details_layout.setContentsMargins(0, 0, 0, 0)
        details_layout.addWidget(self.detail_label)
        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.addWidget(self.left_text)
        sides.addWidget(self.right_text)
        details_layout.addWidget(sides)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(details)
        split.setSizes([420, 160])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.problems_label)
        layout.addWidget(split, 1)
        self.problems_label.hide()

        self.diff: RequestDiff | None = None
        self.sides: DiffSides | None = None
        self._cache: DiffCache | None = None
        self._key: str | None = None
        self._job: Job | None = None

    # ---- content ------------------------------------------------------------------------
    def show_diff(self, cache: DiffCache, key: str, sides: DiffSides) -> None:
        """Show the diff of ``sides`` (known in ``cache`` as ``key``); the rows appear when it
        is ready. It is asked for once the caller's own work is done and painted: a diff thread
        holding the interpreter lock would slow every call the views and the paint make into
        Python meanwhile."""
        self._cache, self._key, self._job = cache, key, None
        self.diff = None
        self.sides = sides
        self.summary_label.setText("Computing the diff…")
        self.problems_label.hide()
        self.model.set_root(DiffRow("same", "", ""))
        self._clear_detail()
        after_pending_paint(self, self._ask_for_diff)

    def _ask_for_diff(self) -> None:
        if self._cache is None or self._key is None or self.sides is None:
            return
        job = self._cache.job(self._key, self.sides)
        self._job = job
        if job.done:
            self._on_diff_done(job)
        else:
            # A method of this widget, not a closure: Qt drops the connection when the widget
            # is gone before the diff is done.
            job.finished.connect(self._on_job_settled)
            job.failed.connect(self._on_job_settled)

    def _on_job_settled(self, *_: object) -> None:
        if self._job is not None and self._job.done:
            self._on_diff_done(self._job)

    @property
    def summary(self) -> str:
        """The diff's summary line, in the words of what is compared."""
        if self.diff is None or self.sides is None:
            return ""
        text = self.diff.summary
        if self.sides.system_word != "system" and text.startswith("system changed"):
            text = self.sides.system_word + text[len("system") :]
        return text

    @property
    def ready(self) -> bool:
        return self.diff is not None or self.failed

    def clear(self) -> None:
        self._cache = self._key = self._job = None
        self.diff = None
        self.sides = None
        self.summary_label.clear()
        self.problems_label.hide()
        self.model.set_root(DiffRow("same", "", ""))
        self._clear_detail()

    @property
    def failed(self) -> bool:
        """Whether the diff on show could not be computed."""
        return self._job is not None and self._job.error is not None

    def _on_diff_done(self, job: Job) -> None:
        if job is not self._job:
            return  # another run is on show by now
        if job.error is not None:
            self.summary_label.setText(f"The diff could not be computed: {job.error}")
        else:
            self.diff = job.value
            self.summary_label.setText(self.summary)
            problems = [p for p in self.diff.problems if p not in self.diff.summary]
            self.problems_label.setText("; ".join(problems))
            self.problems_label.setVisible(bool(problems))
            self._rebuild()
        self.diff_shown.emit()

    def _rebuild(self) -> None:
        if self.diff is None or self.sides is None:
            return
        root = build_rows(self.diff, self.sides, self.only_changes.isChecked())
        self.model.set_root(root, self.sides.headers)
        for row in range(self.model.rowCount()):
            self.tree.setFirstColumnSpanned(row, QModelIndex(), True)
            self.tree.expand(self.model.index(row, 0))
        self._open_changed_messages(root.child(1))
        self._clear_detail()
        self._select_first_change(root)

    def _open_changed_messages(self, node: DiffRow) -> None:
        """Open the first changed messages (to show their blocks) and the ranges they are in."""
        opened = 0
        stack = [node]
        while stack and opened < EXPANDED_MESSAGES:
            current = stack.pop()
            if current.make is None:  # ranges: open those with changes, first one first
                changed = [c for c in current.children if c.kind != "same"]
                for child in reversed(changed[:2]):
                    self.tree.expand(self.model.index_of(child))
                    stack.append(child)
                continue
            for k, entry in enumerate(current.entries):
                if opened >= EXPANDED_MESSAGES:
                    break
                if entry.kind == "changed":
                    self.tree.expand(self.model.index_of(current.child(k)))
                    opened += 1

    def _select_first_change(self, root: DiffRow) -> None:
        """Select the first change, so that its full text shows below at once: a changed system
        prompt as a whole, else the first changed message, tool or option."""
        for row in range(root.count):
            section = root.child(row)
            if section.payload == ("system",):
                if section.kind != "same":
                    self.tree.setCurrentIndex(self.model.index_of(section))
                    return
                continue
            node = section
            first = node.first_change()
            while first is not None:
                node = node.child(first)
                if node.payload != ("range",):
                    self.tree.setCurrentIndex(self.model.index_of(node))
                    return
                first = node.first_change()

    def _on_only_changes_toggled(self, _checked: bool) -> None:
        self._rebuild()

    # ---- rows as text -----------------------------------------------------------------------
    def row_texts(self) -> list[tuple[str, str]]:
        """Every row's (left, right) text, depth first: what a reader sees, for tests."""
        out: list[tuple[str, str]] = []

        def walk(node: DiffRow) -> None:
            for row in range(node.count):
                child = node.child(row)
                out.append((child.left, child.right))
                walk(child)

        walk(self.model.row_of(QModelIndex()))
        return out

    # ---- details --------------------------------------------------------------------------
    def _clear_detail(self) -> None:
        self.left_text.clear()
        self.right_text.clear()
        self.detail_label.clear()

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid() or self.sides is None:
            return
        row = self.model.row_of(current)
        a, b, label = row_values(self.sides, row.payload)
        self.detail_label.setText(label)
        if a is MISSING and b is MISSING:
            self._clear_detail()
            self.detail_label.setText(label)
            return
        text_a = "" if a is MISSING else pretty(a)
        text_b = "" if b is MISSING else pretty(b)
        if (
            a is not MISSING
            and b is not MISSING
            and len(text_a) + len(text_b) <= TEXT_DIFF_MOST
            and text_a != text_b
        ):
            segments = diff_text(text_a, text_b)
            self.left_text.show_segments(segments, "left")
            self.right_text.show_segments(segments, "right")
        else:
            self.left_text.setPlainText(text_a)
            self.right_text.setPlainText(text_b)
        if a is MISSING:
            self.left_text.setPlainText(f"(not in the {self.sides.headers[0].lower()})")
        if b is MISSING:
            self.right_text.setPlainText(f"(not in the {self.sides.headers[1].lower()})")
