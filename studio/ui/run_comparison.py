"""Runs side by side, the one comparer: a column per run (how it ended, what it changed, why it
failed) and, below, their content-free run records field by field (the contract's decision
record under ``inspection``), the fields that differ highlighted
(and, on request, the only ones shown); two runs also get their inputs and their results diffed
as requests. Run on every target compares the loops of one sample; the records view compares
two stored runs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.records.store import DECISION_KEY, run_record
from studio.core.run_outcome import RunOutcome
from studio.ui.contract_views import AMENDMENT, diff_sides, hook_text, result_view
from studio.ui.diff_cache import DiffCache
from studio.ui.engine_bridge import Job
from studio.ui.result_decision_view import amendment_summary
from studio.ui.result_diff_view import RequestDiffView
from studio.ui.result_json_tree import json_scalar, preview
from studio.ui.result_style import heading, note, set_accent, tint
from studio.ui.run_pair_sides import ComparedRun, Part, pair_sides
from studio.ui.run_view import duration_text, status_words

DIFF_ROLE = Qt.ItemDataRole.UserRole + 1
PATH_ROLE = Qt.ItemDataRole.UserRole + 2
CELL_CHARS = 200

_ABSENT: Any = object()
_ABSENT_TEXT = "(absent)"


class ComparisonColumn(QFrame):
    """One run of a comparison; ``details_requested`` when it should be shown in full."""

    details_requested = Signal()

    def __init__(self, label: str, outcome: RunOutcome) -> None:
        super().__init__()
        self.setObjectName(f"column:{label}")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumWidth(210)
        self.label = label
        self.outcome = outcome
        self.title = heading(label, size=1.15)
        text, kind = status_words(outcome)
        self.status = heading(text)
        self.status.setObjectName("columnStatus")
        set_accent(self.status, kind)
        self.summary = QLabel()
        self.summary.setObjectName("columnSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error = QLabel()
        self.error.setObjectName("columnError")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.decision = QLabel()
        self.decision.setObjectName("columnDecision")
        self.decision.setWordWrap(True)
        self.decision.setToolTip("From the decision record")
        self.meta = note()
        self.button = QPushButton("Show this run")
        self.button.setToolTip(f"Open the run {label} in the result tabs")
        self.button.clicked.connect(self.details_requested)
        top = QHBoxLayout()
        top.addWidget(self.title)
        top.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        for widget in (self.summary, self.error, self.decision, self.meta):
            layout.addWidget(widget)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addStretch(1)
        self._fill()

    def _fill(self) -> None:
        outcome = self.outcome
        if outcome.status == "not_applied":
            self.summary.setText("the hook does not target this loop: the request goes on as it is")
        elif outcome.status == "turn_error":
            self.summary.setText("nothing sent")
        else:
            self.summary.setText("computing the diff…")
        error = outcome.turn_error
        if error is not None:
            where = f" at {error.path}" if error.path else ""
            self.error.setText(f"{error.kind}{where}\n{error.title}\n{error.message}")
            set_accent(self.error, "error")
        else:
            self.error.hide()
        self.decision.setText(decision_digest(outcome))
        self.decision.setVisible(bool(self.decision.text()))
        parts = [duration_text(outcome.duration_ms)]
        hook = hook_text(outcome)
        if hook:
            parts.insert(0, hook)
        self.meta.setText(" · ".join(parts))

    def set_summary(self, text: str) -> None:
        self.summary.setText(text)


class RunComparison(QWidget):
    """Emits ``details_requested(index)`` when a column's run should be shown in full."""

    details_requested = Signal(int)

    def __init__(self, diffs: DiffCache, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._diffs = diffs
        self.digest = note()
        self.digest.setObjectName("comparisonDigest")
        self.row = QWidget()
        self.row_layout = QHBoxLayout(self.row)
        self.row_layout.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.row)

        self.fields_title = QLabel()
        self.fields_title.setObjectName("compareTitle")
        self.fields_title.setWordWrap(True)
        self.only_differences = QCheckBox("Only differences")
        self.only_differences.setObjectName("compareOnlyDifferences")
        self.only_differences.toggled.connect(self._on_only_differences_toggled)
        self.tree = QTreeWidget()
        self.tree.setObjectName("compareTree")
        self.tree.setUniformRowHeights(True)
        self.tree.setColumnWidth(0, 200)
        fields = QWidget()
        fields_layout = QVBoxLayout(fields)
        fields_layout.setContentsMargins(0, 0, 0, 0)
        fields_top = QHBoxLayout()
        fields_top.addWidget(self.fields_title, 1)
        fields_top.addWidget(self.only_differences, 0, Qt.AlignmentFlag.AlignTop)
        fields_layout.addLayout(fields_top)
        fields_layout.addWidget(self.tree, 1)

        self.input_diff = PairDiff("input")
        self.input_diff.setObjectName("compareInputs")
        self.result_diff = PairDiff("result")
        self.result_diff.setObjectName("compareResults")
        self.tabs = QTabWidget()
        self.tabs.setObjectName("compareTabs")
        self.tabs.setDocumentMode(True)
        self.fields_tab = self.tabs.addTab(fields, "Run records")
        self.tabs.setTabToolTip(self.fields_tab, "The run records, field by field")
        self.input_tab = self.tabs.addTab(self.input_diff, "Inputs")
        self.tabs.setTabToolTip(self.input_tab, "What each run was given: the two requests, diffed")
        self.result_tab = self.tabs.addTab(self.result_diff, "Results")
        self.tabs.setTabToolTip(
            self.result_tab, "What each run's hook gave back: the two requests, diffed"
        )

        self._scroll = scroll
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(scroll)
        self.split.addWidget(self.tabs)
        self.split.setStretchFactor(0, 0)
        self.split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.digest)
        layout.addWidget(self.split, 1)
        self.columns: list[ComparisonColumn] = []
        self._waiting: set[ComparisonColumn] = set()
        self._column_jobs: dict[ComparisonColumn, Job] = {}
        self._differences: list[str] = []

    # ---- content ------------------------------------------------------------------------
    def show_runs(
        self,
        runs: Sequence[tuple[str, RunOutcome]],
        digest: str,
        *,
        tally: bool = True,
        cleared: Sequence[bool] = (),
    ) -> None:
        """Compare ``runs`` (label, outcome), in that order; ``digest`` says what they are,
        followed (with ``tally``) by how many ended which way. ``cleared`` marks the stored
        runs whose payload was cleared. Two runs also get their inputs and results diffed."""
        for column in self.columns:
            column.setParent(None)
            column.deleteLater()
        self.columns = []
        self._waiting = set()
        self._column_jobs = {}
        counts: dict[str, int] = {}
        for index, (label, outcome) in enumerate(runs):
            column = ComparisonColumn(label, outcome)
            column.details_requested.connect(lambda i=index: self.details_requested.emit(i))
            self.row_layout.addWidget(column, 1)
            self.columns.append(column)
            word = status_words(outcome)[0][2:]
            counts[word] = counts.get(word, 0) + 1
            if outcome.status == "ok":
                self._waiting.add(column)
        ends = ", ".join(f"{n} {w}" for w, n in counts.items())
        self.digest.setText(f"{digest} {ends}." if tally else digest)
        self._show_fields(runs)
        self._show_pair(runs, cleared)
        self._fit_columns()
        if self._waiting:
            # Once the columns are on screen (see RequestDiffView.show_diff).
            QTimer.singleShot(0, self._ask_for_diffs)

    def _show_pair(self, runs: Sequence[tuple[str, RunOutcome]], cleared: Sequence[bool]) -> None:
        pair = len(runs) == 2
        for tab in (self.input_tab, self.result_tab):
            self.tabs.setTabVisible(tab, pair)
        if not pair:
            self.input_diff.clear()
            self.result_diff.clear()
            self.tabs.setCurrentIndex(self.fields_tab)
            return
        compared = [
            ComparedRun(label, outcome, index < len(cleared) and cleared[index])
            for index, (label, outcome) in enumerate(runs)
        ]
        for view in (self.input_diff, self.result_diff):
            view.show_pair(self._diffs, compared[0], compared[1])

    def _fit_columns(self) -> None:
        """The columns at their natural height (the field tree below takes the rest), up to
        two thirds of the room."""
        self.row.adjustSize()
        bar = self._scroll.horizontalScrollBar().sizeHint().height()
        slack = self.fontMetrics().height()  # wrapped lines once the columns have their width
        wanted = self.row.sizeHint().height() + bar + 2 * self._scroll.frameWidth() + slack
        total = max(self.split.height(), 3 * wanted // 2)
        self.split.setSizes([min(wanted, 2 * total // 3), total - min(wanted, 2 * total // 3)])

    @property
    def ready(self) -> bool:
        """Whether every column's summary of what changed is known, and the two runs' inputs
        and results are diffed (or known not to be)."""
        return not self._waiting and self.input_diff.ready and self.result_diff.ready

    @property
    def run_ids(self) -> tuple[str, ...]:
        return tuple(column.outcome.run_id for column in self.columns)

    def differing_fields(self) -> list[str]:
        """The dotted paths of the run record fields whose values differ
        (``inspection.tools.after`` is ``tools.after`` of the decision record)."""
        return list(self._differences)

    # ---- what each run changed --------------------------------------------------------------
    def _ask_for_diffs(self) -> None:
        for column in list(self._waiting):
            outcome = column.outcome
            sides = diff_sides(outcome)
            if result_view(outcome) == AMENDMENT:
                self._on_summary(column, amendment_summary(outcome))
            elif sides is None:
                self._on_summary(column, "no request to compare")
            else:
                job = self._diffs.job(outcome.run_id, sides)
                if job.done:
                    self._on_diff_done(column, job)
                else:
                    self._column_jobs[column] = job
                    # A method of this widget: Qt drops the connection when it is gone.
                    job.finished.connect(self._on_column_job_settled)
                    job.failed.connect(self._on_column_job_settled)

    def _on_column_job_settled(self, *_: object) -> None:
        for column, job in list(self._column_jobs.items()):
            if job.done:
                del self._column_jobs[column]
                self._on_diff_done(column, job)

    def _on_diff_done(self, column: ComparisonColumn, job: Job) -> None:
        if job.error is not None:
            self._on_summary(column, f"the diff could not be computed: {job.error}")
        else:
            self._on_summary(column, job.value.summary)

    def _on_summary(self, column: ComparisonColumn, text: str) -> None:
        if column not in self._waiting:
            return  # a column of an earlier comparison
        self._waiting.discard(column)
        column.set_summary(text)

    # ---- the run records, field by field -----------------------------------------------
    def _show_fields(self, runs: Sequence[tuple[str, RunOutcome]]) -> None:
        self._differences = []
        records = [run_record(outcome) for _, outcome in runs]
        tree = self.tree
        tree.setUpdatesEnabled(False)
        tree.clear()
        tree.setHeaderLabels(["Field", *(label for label, _ in runs)])
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        for column in range(1, len(runs) + 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
            tree.headerItem().setToolTip(column, run_title(runs[column - 1][1]))
        root = tree.invisibleRootItem()
        for key in _keys(records):
            self._add(root, key, (key,), [record.get(key, _ABSENT) for record in records])
        self._apply_filter()
        tree.setUpdatesEnabled(True)
        count = len(self._differences)
        self.fields_title.setText(
            f"Run records, field by field: {count} field{'s' if count != 1 else ''} differ"
            if count
            else "Run records, field by field: the same"
        )

    def _add(
        self, parent: QTreeWidgetItem, key: str, path: tuple[str, ...], values: list[Any]
    ) -> bool:
        moment = path == ("started_at",)
        texts = [_moment_text(v) if moment else _cell_text(v) for v in values]
        item = QTreeWidgetItem([key, *texts])
        item.setData(0, PATH_ROLE, ".".join(path))
        if path == (DECISION_KEY,):
            item.setToolTip(0, "The decision record: what the hook decided, without content")
        if moment:
            item.setToolTip(0, "When the run started (local time)")
        for column, text in enumerate(texts, 1):
            item.setToolTip(column, text)
        parent.addChild(item)
        container = True
        differs = False
        if all(isinstance(v, dict) for v in values):
            for child in _keys(values):
                differs |= self._add(
                    item, child, (*path, child), [v.get(child, _ABSENT) for v in values]
                )
        elif all(isinstance(v, list) for v in values):
            for i in range(max(len(v) for v in values)):
                differs |= self._add(
                    item, str(i), (*path, str(i)), [v[i] if i < len(v) else _ABSENT for v in values]
                )
        else:
            container = False
            differs = not _all_same(values)
            if differs:
                self._differences.append(".".join(path))
        item.setData(0, DIFF_ROLE, differs)
        muted = self.palette().placeholderText()
        for column, value in enumerate(values, 1):
            if value is _ABSENT or value is None or isinstance(value, dict | list):
                item.setForeground(column, muted)
        if differs:
            color = tint("changed", 30 if container else 80)
            font = item.font(0)
            font.setBold(True)
            for column in range(len(values) + 1):
                if color is not None:
                    item.setBackground(column, QBrush(color))
                item.setFont(column, font)
            item.setExpanded(container)
        return differs

    def _apply_filter(self) -> None:
        only = self.only_differences.isChecked()

        def walk(item: QTreeWidgetItem) -> None:
            for i in range(item.childCount()):
                child = item.child(i)
                if child is not None:
                    child.setHidden(only and not child.data(0, DIFF_ROLE))
                    walk(child)

        walk(self.tree.invisibleRootItem())

    def _on_only_differences_toggled(self, _checked: bool) -> None:
        self._apply_filter()


class PairDiff(QStackedWidget):
    """The inputs (or the results) of two runs as a request diff, or in words why not."""

    def __init__(self, part: Part) -> None:
        super().__init__()
        self.part = part
        self.diff = RequestDiffView()
        self.diff.left_text.setPlaceholderText(f"Select a row to see it in the {part} of A")
        self.diff.right_text.setPlaceholderText(f"…and in the {part} of B here")
        self.message = note()
        self.message.setObjectName("pairMessage")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.addWidget(self.diff)
        self.addWidget(self.message)
        self.clear()

    def clear(self) -> None:
        self.diff.clear()
        self.say("")

    def say(self, text: str) -> None:
        self.diff.clear()
        self.message.setText(text)
        self.setCurrentWidget(self.message)

    @property
    def ready(self) -> bool:
        return self.currentWidget() is self.message or self.diff.ready

    @property
    def problem(self) -> str | None:
        """Why the two runs' parts are not diffed; None while the diff is on show."""
        return self.message.text() if self.currentWidget() is self.message else None

    def show_pair(self, diffs: DiffCache, first: ComparedRun, second: ComparedRun) -> None:
        found = pair_sides(first, second, self.part)
        if found.sides is None:
            self.say(found.problem or "")
            return
        key = f"{first.outcome.run_id}|{second.outcome.run_id}|{self.part}"
        self.diff.show_diff(diffs, key, found.sides)
        self.setCurrentWidget(self.diff)


def run_title(outcome: RunOutcome) -> str:
    """A run in one line: its hook, loop and how it ended."""
    parts = [hook_text(outcome) or outcome.contract]
    if outcome.loop:
        parts.append(f"loop {outcome.loop}")
    text, _ = status_words(outcome)
    kind = f" ({outcome.turn_error.kind})" if outcome.turn_error is not None else ""
    parts.append(text + kind)
    return " · ".join(parts)


def decision_digest(outcome: RunOutcome) -> str:
    """The counts a decision record keeps as before and after (messages, tools…), with the
    names added and removed."""
    parts = []
    for key, value in (outcome.decision_record or {}).items():
        if not isinstance(value, dict) or value.get("after") is None:
            continue
        if "before" not in value:
            continue
        text = f"{key} {value['before']} → {value['after']}"
        removed = value.get("removed") or []
        added = value.get("added") or []
        if removed:
            text += " (−" + ", −".join(map(str, removed)) + ")"
        if added:
            text += " (+" + ", +".join(map(str, added)) + ")"
        parts.append(text)
    return " · ".join(parts)


def _keys(values: Sequence[Any]) -> list[str]:
    keys: list[str] = []
    seen: set[str] = set()
    for value in values:
        for key in value if isinstance(value, dict) else ():
            if key not in seen:
                seen.add(key)
                keys.append(key)
    return keys


def _all_same(values: Sequence[Any]) -> bool:
    if any(v is _ABSENT for v in values):
        return all(v is _ABSENT for v in values)
    texts = {json.dumps(v, sort_keys=True, default=str) for v in values}
    return len(texts) == 1


def _moment_text(value: Any) -> str:
    """A run's start time as a reader reads it, to the millisecond (never seconds since 1970)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        except (OverflowError, OSError, ValueError):
            pass
    return _cell_text(value)


def _cell_text(value: Any) -> str:
    if value is _ABSENT:
        return _ABSENT_TEXT
    if isinstance(value, dict | list):
        return preview(value)
    if isinstance(value, str):
        text = value[: CELL_CHARS + 1].replace("\n", " ⏎ ")
        return text[:CELL_CHARS] + ("…" if len(value) > CELL_CHARS else "")
    return json_scalar(value)
