"""Every stored run of the workspace: a sortable, filterable table, the detail of the selected
run (shown as the results panel shows a run), two runs compared, export as JSON Lines and
clearing payloads.

The view observes a ``RecordStore`` and owns no data: every read and write of the store is a job
of the engine bridge, off the GUI thread, and a job for a store no longer shown is cancelled. A
reload keeps the selection and the scroll position.

A large store stays quick: the newest page of runs is read and painted first, every run after;
the table is handed rows as it scrolls (see ``records_model``); past ``INLINE_ROWS`` runs, each
filter and sort is a bridge job too, the latest request wins and at most one runs at a time.

Keyboard: the main window's Find (Ctrl+F) calls ``focus_filter``; Enter on a row opens its
detail; Ctrl+R reruns the current run, Ctrl+Shift+N opens its input as a new sample, Ctrl+C
copies it as JSON, the menu key opens the table's context menu with all of these; Ctrl+E
exports; Delete clears the payloads of the selected runs (after confirmation).
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import (
    QItemSelection,
    QItemSelectionModel,
    QItemSelectionRange,
    QModelIndex,
    QPoint,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QSplitter,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.records.store import RecordStore
from studio.core.registry import CONTRACTS
from studio.core.run_outcome import RunOutcome
from studio.core.workspace.folder import Workspace
from studio.ui.diff_cache import DiffCache
from studio.ui.engine_bridge import EngineBridge, Job
from studio.ui.record_actions import RecordActions
from studio.ui.record_detail import RecordDetail, RecordDetailData, load_detail
from studio.ui.records_cells import (
    CONTRACT,
    DURATION,
    HOOK,
    LOOP,
    OUTCOME,
    RUN_ID_ROLE,
    SAMPLE,
    TIME,
    RunDays,
    outcome_label,
    time_label,
)
from studio.ui.records_model import RecordsModel
from studio.ui.records_rows import (
    Arranged,
    FirstPage,
    Load,
    Loaded,
    Ordered,
    RowFilter,
    Selection,
    arrange,
    load_first_page,
    load_rows,
)
from studio.ui.window_layout import CurrentPageStack, no_tab_traps, scroll_below_minimum

if TYPE_CHECKING:
    from studio.ui.run_comparison import RunComparison

EXPORT_NAME = "records.jsonl"
_COLUMN_WIDTHS = {TIME: 118, CONTRACT: 120, LOOP: 84, SAMPLE: 120, OUTCOME: 180, DURATION: 78}
_DETAIL_DELAY_MS = 40
FIRST_PAGE = 200
"""Runs read first, to paint the table while the rest are read."""


@dataclass(frozen=True)
class _ViewState:
    """What a reload must give back: the selected runs, the current one, the scroll position."""

    selected: tuple[str, ...]
    current: str | None
    at_top: bool
    top_run: str | None
    horizontal: int


# --- work done off the GUI thread -----------------------------------------------------------


def _load_runs(store: RecordStore, run_ids: list[str]) -> list[tuple[RunOutcome, bool] | None]:
    """The stored runs rebuilt as outcomes, each with whether its payload was cleared (None for
    one no longer stored)."""
    runs = [store.get(run_id) for run_id in run_ids]
    return [None if run is None else (run.outcome(), run.payload is None) for run in runs]


def _export(store: RecordStore, run_ids: list[str], path: str) -> int:
    """Write the runs to ``path`` as JSON Lines, all at once: a temporary file in the same folder
    replaces the target only when it is complete."""
    target = Path(path)
    temp = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        with temp.open("w", encoding="utf-8", newline="\n") as stream:
            written = store.export_jsonl(run_ids, stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    return written


def _clear(store: RecordStore, run_ids: list[str] | None) -> int:
    return store.clear_payloads(run_ids)


def _runs(rows: Sequence[int]) -> Iterator[tuple[int, int]]:
    """The sorted ``rows`` as (first, last) pairs of consecutive rows."""
    start = previous = None
    for row in rows:
        if previous is not None and row == previous + 1:
            previous = row
            continue
        if start is not None and previous is not None:
            yield start, previous
        start = previous = row
    if start is not None and previous is not None:
        yield start, previous


def _time_width(table: QTableView) -> int:
    """Room for a date and time of the longest kind the Time column shows in this locale."""
    sample = RunDays(date(2000, 1, 1)).cell(datetime(2026, 12, 28, 20, 58, 58).timestamp())
    return max(_COLUMN_WIDTHS[TIME], table.fontMetrics().horizontalAdvance(sample) + 18)


class ElideLeftDelegate(QStyledItemDelegate):
    """Elides at the start, so that the end of a path (the hook's function) stays visible."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: Any) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideLeft


class _RecordsTable(QTableView):
    """Select All takes every run shown, also those the table has not been handed yet."""

    def selectAll(self) -> None:
        model = self.model()
        if isinstance(model, RecordsModel):
            model.fetch_to(len(model.rows) - 1)
        super().selectAll()


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


class RecordsView(QWidget):
    """Signals: ``open_source(file, line)`` from a traceback frame of a run's detail;
    ``rerun_requested(RecordSample)`` to run a stored run's sample again (see
    ``record_actions``); ``sample_created(name)`` once a run's input was written as a sample."""

    open_source = Signal(str, int)
    rerun_requested = Signal(object)
    sample_created = Signal(str)

    INLINE_ROWS = 5_000
    """Up to this many runs, a filter or sort is applied at once on the GUI thread (a few
    milliseconds); beyond, it is a bridge job."""

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._store: RecordStore | None = None
        self._workspace: Workspace | None = None
        self._jobs: list[Job] = []
        self._detail_job: Job | None = None
        self._loading = False
        self._reload_wanted = False
        self._busy = False
        self._loaded: Loaded | None = None
        self._ordered: Ordered | None = None
        self._loading_total: int | None = None
        self._generation = 0
        self._select_job: Job | None = None
        self._select_wanted = False
        self._context_menu: QMenu | None = None

        self._build()
        self._update_actions()

    # ---- construction ------------------------------------------------------------------------
    def _build(self) -> None:
        self._filter = QLineEdit()
        self._filter.setObjectName("recordsFilter")
        self._filter.setPlaceholderText(
            "Filter runs: hook, sample, loop, outcome, run id… (Ctrl+F)"
        )
        self._filter.setClearButtonEnabled(True)
        self._filter.setToolTip(
            "Every word must occur in the run's hook, sample, loop, outcome or id"
        )
        self._filter.textChanged.connect(self._on_filter_changed)
        self._filter.returnPressed.connect(self._on_filter_return)

        self._contract_box = QComboBox()
        self._contract_box.setObjectName("recordsContract")
        self._contract_box.setToolTip("Show the runs of one contract")
        self._contract_box.addItem("All contracts", None)
        for contract in CONTRACTS.values():
            self._contract_box.addItem(contract.title, contract.name)
        self._contract_box.currentIndexChanged.connect(self._on_filter_changed)

        self._outcome_box = QComboBox()
        self._outcome_box.setObjectName("recordsOutcome")
        self._outcome_box.setToolTip("Show the runs that ended this way")
        self._outcome_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._fill_outcomes(set())
        self._outcome_box.currentIndexChanged.connect(self._on_filter_changed)

        self._compare_action = QAction("Compare", self)
        self._compare_action.setToolTip(
            "Compare the two selected runs: their decision records, inputs and results"
        )
        self._compare_action.triggered.connect(self._on_compare)
        self._export_action = QAction("Export…", self)
        self._export_action.setShortcut(QKeySequence("Ctrl+E"))
        self._export_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._export_action.setToolTip(
            "Export the selected runs (or every run shown) as JSON Lines (Ctrl+E)"
        )
        self._export_action.triggered.connect(self._on_export)
        self._clear_selected_action = QAction("Clear Payloads of Selected Runs…", self)
        self._clear_selected_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self._clear_selected_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self._clear_selected_action.setToolTip(
            "Forget the input, result and output of the selected runs; their decision records "
            "stay (Delete)"
        )
        self._clear_selected_action.triggered.connect(self._on_clear_selected)
        self._clear_all_action = QAction("Clear All Payloads…", self)
        self._clear_all_action.setToolTip(
            "Forget the input, result and output of every run; the decision records stay"
        )
        self._clear_all_action.triggered.connect(self._on_clear_all)
        self.addAction(self._export_action)

        rerun_button = QToolButton()
        rerun_button.setObjectName("recordsRerunButton")
        sample_button = QToolButton()
        sample_button.setObjectName("recordsSampleButton")
        compare_button = QToolButton()
        compare_button.setObjectName("recordsCompareButton")
        compare_button.setDefaultAction(self._compare_action)
        export_button = QToolButton()
        export_button.setObjectName("recordsExportButton")
        export_button.setDefaultAction(self._export_action)
        clear_button = QToolButton()
        clear_button.setObjectName("recordsClearButton")
        clear_button.setText("Clear Payloads ▾")
        clear_button.setStyleSheet("QToolButton::menu-indicator { image: none; width: 0px; }")
        clear_button.setToolTip("Forget what runs carried; their decision records stay")
        clear_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        clear_menu = QMenu(clear_button)
        clear_menu.addAction(self._clear_selected_action)
        clear_menu.addAction(self._clear_all_action)
        clear_button.setMenu(clear_menu)
        self._clear_button = clear_button

        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self._filter, 3)
        bar.addWidget(self._contract_box)
        bar.addWidget(self._outcome_box)
        bar.addSpacing(8)
        bar.addWidget(rerun_button)
        bar.addWidget(sample_button)
        bar.addWidget(compare_button)
        bar.addWidget(export_button)
        bar.addWidget(clear_button)

        self._model = RecordsModel(self)
        self._model.sort_requested.connect(self._on_sort_requested)
        table = _RecordsTable()
        table.setObjectName("recordsTable")
        table.setModel(self._model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setAlternatingRowColors(True)
        table.setShowGrid(False)
        table.setWordWrap(False)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self._elide_left = ElideLeftDelegate(table)
        table.setItemDelegateForColumn(HOOK, self._elide_left)
        table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        vertical = table.verticalHeader()
        vertical.hide()
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vertical.setDefaultSectionSize(table.fontMetrics().height() + 8)
        header = table.horizontalHeader()
        header.setHighlightSections(False)
        header.setSectionsMovable(True)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(HOOK, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(48)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        for column, width in _COLUMN_WIDTHS.items():
            table.setColumnWidth(column, width)
        table.setColumnWidth(TIME, _time_width(table))
        # The header asks its selection model whether each column is wholly selected, row by
        # row, on every paint: with 10,000 rows selected that is 70,000 calls into this Python
        # model (a sixth of a second). Sections are never highlighted, so the header gets a
        # selection model of its own that stays empty.
        self._header_selection = QItemSelectionModel(self._model, self)
        header.setSelectionModel(self._header_selection)
        header.setSortIndicator(TIME, Qt.SortOrder.DescendingOrder)
        table.setSortingEnabled(True)
        table.addAction(self._clear_selected_action)
        table.activated.connect(self._on_row_activated)
        self.record_actions = RecordActions(
            self,
            table,
            self._current_run_id,
            lambda: (self._store, self._workspace),
            self._submit,
            self._set_message,
        )
        self.record_actions.rerun_requested.connect(self.rerun_requested)
        self.record_actions.sample_created.connect(self.sample_created)
        rerun_button.setDefaultAction(self.record_actions.rerun_action)
        sample_button.setDefaultAction(self.record_actions.sample_action)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.customContextMenuRequested.connect(self._on_context_menu)
        selection = table.selectionModel()
        selection.selectionChanged.connect(self._on_selection_changed)
        selection.currentRowChanged.connect(self._on_current_changed)
        self._table = table

        self._detail = RecordDetail(self._bridge)
        self._detail.setObjectName("recordDetail")
        self._detail.open_source.connect(self.open_source)
        self._compare: RunComparison | None = None
        self._pages = CurrentPageStack()
        self._pages.setObjectName("recordPages")
        self._pages.addWidget(self._detail)

        self._splitter = QSplitter(Qt.Orientation.Horizontal)
        self._splitter.setObjectName("recordsSplitter")
        self._splitter.addWidget(table)
        # A short Records dock scrolls the detail instead of growing the window.
        self._splitter.addWidget(scroll_below_minimum(self._pages))
        self._splitter.setStretchFactor(0, 3)
        self._splitter.setStretchFactor(1, 2)
        self._splitter.setSizes([600, 400])

        self._count = QLabel()
        self._count.setObjectName("recordsCount")
        self._message = QLabel()
        self._message.setObjectName("recordsMessage")
        self._message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        footer = QHBoxLayout()
        footer.setContentsMargins(0, 0, 0, 0)
        footer.addWidget(self._count)
        footer.addStretch(1)
        footer.addWidget(self._message)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self._splitter, 1)
        layout.addLayout(footer)

        self._detail_timer = QTimer(self)
        self._detail_timer.setSingleShot(True)
        self._detail_timer.setInterval(_DETAIL_DELAY_MS)
        self._detail_timer.timeout.connect(self._load_current_detail)

    def _fill_outcomes(self, kinds: set[str]) -> None:
        box = self._outcome_box
        current = box.currentData()
        box.blockSignals(True)
        box.clear()
        box.addItem("Any outcome", None)
        box.addItem("ok", "ok")
        box.addItem("not applied", "not_applied")
        box.addItem("turn error (any kind)", "turn_error")
        wanted = set(kinds)
        if isinstance(current, str) and current.startswith("turn_error/"):
            wanted.add(current.split("/", 1)[1])
        for kind in sorted(wanted):
            box.addItem(outcome_label("turn_error", kind), f"turn_error/{kind}")
        index = box.findData(current)
        box.setCurrentIndex(max(index, 0))
        box.blockSignals(False)

    # ---- the interface -------------------------------------------------------------------------
    def set_store(self, store: RecordStore | None, workspace: Workspace | None = None) -> None:
        """Show the runs of ``store`` (``None``: no store, an empty view)."""
        self._store = store
        self._workspace = workspace
        for job in self._jobs:
            job.cancel()
        self._jobs = []
        self._detail_job = None
        self._select_job = None
        self._select_wanted = False
        self._loaded = None
        self._ordered = None
        self._loading_total = None
        self._generation += 1
        self._loading = False
        self._reload_wanted = False
        self._busy = False
        self._detail_timer.stop()
        self._model.clear()
        self._fill_outcomes(set())
        self._detail.set_workspace_root(workspace.root if workspace else None)
        self._pages.setCurrentWidget(self._detail)
        self._set_message("")
        if store is None:
            self._detail.show_placeholder("No record store: open a workspace to see its runs.")
        else:
            self._detail.show_placeholder("Loading the runs…")
            self.refresh()
        self._update_count()
        self._update_actions()

    def refresh(self) -> None:
        """Reload the runs off the GUI thread; the selection and the scroll position stay."""
        if self._store is None:
            return
        if self._loading:
            self._reload_wanted = True
            return
        self._loading = True
        self._reload_wanted = False
        if self._loaded is None and self._model.fetched == 0 and self._newest_first_unfiltered():
            self._generation += 1
            generation = self._generation
            self._submit(
                lambda page, error: self._on_first_page(generation, page, error),
                load_first_page,
                self._store,
                FIRST_PAGE,
                generation,
            )
        else:
            self._load_everything()

    @property
    def filter_pending(self) -> bool:
        """Whether the rows shown are still to follow the filter, the sort or a reload."""
        return self._loading or self._select_job is not None or self._loaded is None

    def menu_actions(self) -> list[QAction]:
        """The records' commands, for the window's Records menu (their shortcuts still work
        only in the records)."""
        actions = self.record_actions
        return [
            actions.rerun_action,
            actions.sample_action,
            actions.copy_action,
            self._compare_action,
            self._export_action,
            self._clear_selected_action,
            self._clear_all_action,
        ]

    def focus_filter(self) -> None:
        self._filter.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self._filter.selectAll()

    # ---- the bridge ----------------------------------------------------------------------------
    def _submit(
        self, then: Callable[[Any, BaseException | None], None], function: Any, *args: Any
    ) -> Job:
        """Run ``function(*args)`` off the GUI thread; ``then(result, error)`` on its answer."""
        self._jobs = [job for job in self._jobs if not job.done]
        job = self._bridge.submit(function, *args)
        job.finished.connect(lambda result: then(result, None))
        job.failed.connect(lambda error: then(None, error))
        self._jobs.append(job)
        return job

    # ---- rows ----------------------------------------------------------------------------------
    def _row_filter(self) -> RowFilter:
        return RowFilter.of(
            self._filter.text(), self._contract_box.currentData(), self._outcome_box.currentData()
        )

    def _newest_first_unfiltered(self) -> bool:
        model = self._model
        return model.sort_column == TIME and model.descending and not self._row_filter().active

    def _load_everything(self) -> None:
        assert self._store is not None
        self._generation += 1
        generation = self._generation
        model = self._model
        self._submit(
            lambda loaded, error: self._on_rows_loaded(generation, loaded, error),
            load_rows,
            self._store,
            self._row_filter(),
            model.sort_column,
            model.descending,
            generation,
        )

    def _on_first_page(
        self, generation: int, page: FirstPage | None, error: BaseException | None
    ) -> None:
        if error is not None or page is None:
            self._loading = False
            self._set_message(f"The runs could not be read: {error}", error=True)
            return
        if page.load is not None:  # every run there is
            self._on_rows_loaded(generation, page.load, None)
            return
        if self._loaded is None and self._newest_first_unfiltered():
            self._show_selection(Selection(page.rows, None, TIME, True, RowFilter()))
            self._loading_total = page.total
            self._update_count()
        self._load_everything()

    def _capture_state(self) -> _ViewState:
        table = self._table
        selected = tuple(self._selected_ids())
        current = table.currentIndex()
        bar = table.verticalScrollBar()
        top = table.indexAt(QPoint(0, 0))
        return _ViewState(
            selected=selected,
            current=current.data(RUN_ID_ROLE) if current.isValid() else None,
            at_top=bar.value() <= bar.minimum(),
            top_run=top.data(RUN_ID_ROLE) if top.isValid() else None,
            horizontal=table.horizontalScrollBar().value(),
        )

    def _view_row(self, run_id: str | None) -> int | None:
        """The table row of ``run_id``, handed to the table if it was not yet."""
        row = self._model.row_of(run_id)
        if row is not None:
            self._model.fetch_to(row)
        return row

    def _restore_state(self, state: _ViewState) -> None:
        table = self._table
        model = self._model
        wanted = [model.row_of(run_id) for run_id in state.selected]
        rows = sorted(row for row in wanted if row is not None)
        if rows:
            model.fetch_to(rows[-1])
        selection = QItemSelection()
        last = model.columnCount() - 1
        for start, end in _runs(rows):
            selection.select(model.index(start, 0), model.index(end, last))
        flags = QItemSelectionModel.SelectionFlag
        selection_model = table.selectionModel()
        selection_model.select(selection, flags.ClearAndSelect | flags.Rows)
        current = self._view_row(state.current)
        if current is not None:
            selection_model.setCurrentIndex(model.index(current, 0), flags.NoUpdate)
        table.doItemsLayout()  # the scroll range of the new rows, now rather than on next paint
        if state.at_top:
            table.scrollToTop()
        else:
            top = self._view_row(state.top_run)
            if top is not None:
                table.doItemsLayout()
                table.scrollTo(model.index(top, 0), QAbstractItemView.ScrollHint.PositionAtTop)
        table.horizontalScrollBar().setValue(state.horizontal)

    def _show_selection(self, selection: Selection) -> None:
        state = self._capture_state()
        if self._model.set_selection(selection):
            self._restore_state(state)

    def _on_rows_loaded(
        self, generation: int, load: Load | None, error: BaseException | None
    ) -> None:
        self._loading = False
        if error is not None or load is None:
            self._set_message(f"The runs could not be read: {error}", error=True)
        else:
            loaded = self._loaded = load.loaded
            self._ordered = load.arranged.ordered
            # A hundred thousand rows are a few hundred thousand objects without cycles (freed
            # by reference counting); each full pass of the cycle collector over them would
            # hold the interpreter lock, and the window, for tens of milliseconds. Frozen, they
            # are skipped.
            gc.freeze()
            self._fill_outcomes(set(loaded.kinds))
            if generation == self._generation:
                self._show_selection(load.arranged.selection)
            else:  # the filter or the sort changed while the runs were read
                self._select()
            self._update_count()
            self._update_actions()
            if not loaded.rows:
                self._detail.show_placeholder(
                    "No runs yet. Run a hook on a sample (Ctrl+Return) and its record shows here."
                )
            elif self._current_run_id() is None:
                self._detail.show_placeholder("Select a run to see its decision record.")
            else:
                self._load_current_detail()
        if self._reload_wanted:
            self.refresh()

    def _update_count(self) -> None:
        shown = len(self._model.rows)
        if self._store is None:
            text = ""
        elif self._loaded is None:
            total = self._loading_total
            text = f"Loading {_plural(total, 'run')}…" if total is not None else ""
        elif shown == len(self._loaded.rows):
            text = _plural(shown, "run")
        else:
            text = f"{shown:,} of {_plural(len(self._loaded.rows), 'run')} shown"
        selected = self._selected_count()
        if selected > 1:
            text += f" · {selected:,} selected"
        self._count.setText(text)

    # ---- filters and sort ----------------------------------------------------------------------
    def _on_filter_changed(self, *_: Any) -> None:
        self._select()

    def _on_sort_requested(self, *_: Any) -> None:
        self._select()

    def _select(self) -> None:
        """Show the loaded runs the filter keeps, in the current sort."""
        self._generation += 1
        loaded = self._loaded
        if loaded is None:
            return  # the load under way picks the new filter up when it is done
        if self._select_job is not None:
            self._select_wanted = True  # the newest request runs once this one is done
            return
        model = self._model
        args = (
            loaded,
            self._ordered,
            self._row_filter(),
            model.sort_column,
            model.descending,
            self._generation,
            model.selection,
        )
        if len(loaded.rows) <= self.INLINE_ROWS:
            self._apply(arrange(*args))
            return
        self._select_job = self._submit(self._on_arranged, arrange, *args)

    def _on_arranged(self, arranged: Arranged | None, error: BaseException | None) -> None:
        self._select_job = None
        if error is not None or arranged is None:
            self._set_message(f"The runs could not be filtered: {error}", error=True)
        elif not self._select_wanted and arranged.selection.generation == self._generation:
            self._apply(arranged)
        if self._select_wanted:
            self._select_wanted = False
            self._select()

    def _apply(self, arranged: Arranged) -> None:
        self._ordered = arranged.ordered
        self._show_selection(arranged.selection)
        self._update_count()
        self._update_actions()

    def _on_filter_return(self) -> None:
        if self._model.rowCount() == 0:
            return
        self._table.setFocus(Qt.FocusReason.OtherFocusReason)
        if not self._table.currentIndex().isValid():
            self._table.selectRow(0)

    # ---- selection and detail ------------------------------------------------------------------
    def _selection(self) -> Iterable[QItemSelectionRange]:
        # QItemSelection iterates over its ranges; the binding's stubs do not say so.
        return cast(Iterable[QItemSelectionRange], self._table.selectionModel().selection())

    def _selected_count(self) -> int:
        return sum(r.height() for r in self._selection())

    def _selected_ids(self) -> list[str]:
        """The selected runs, in the table's order (from the selection's ranges: with every one
        of 10,000 rows selected, ``selectedRows`` alone takes a tenth of a second)."""
        rows: set[int] = set()
        for selected in self._selection():
            rows.update(range(selected.top(), selected.bottom() + 1))
        model_rows = self._model.rows
        return [model_rows[row].run_id for row in sorted(rows) if row < len(model_rows)]

    def _shown_ids(self) -> list[str]:
        return [summary.run_id for summary in self._model.rows]

    def _current_run_id(self) -> str | None:
        index = self._table.currentIndex()
        return index.data(RUN_ID_ROLE) if index.isValid() else None

    def _on_selection_changed(self, *_: Any) -> None:
        self._update_actions()
        self._update_count()
        if self._compare is not None and self._pages.currentWidget() is self._compare:
            pair = self._compare.run_ids
            if self._selected_count() != 2 or set(self._selected_ids()) != set(pair):
                self._pages.setCurrentWidget(self._detail)

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self._detail_timer.start()

    def _load_current_detail(self) -> None:
        self._detail_timer.stop()
        run_id = self._current_run_id()
        if self._store is None or run_id is None:
            return
        if self._detail_job is not None:
            self._detail_job.cancel()  # a later selection asks for another run
        self._detail_job = self._submit(self._on_detail_loaded, load_detail, self._store, run_id)

    def _on_detail_loaded(self, data: Any, error: BaseException | None) -> None:
        if error is not None:
            self._detail.show_placeholder(f"The run could not be read: {error}")
        elif not isinstance(data, RecordDetailData):
            self._detail.show_placeholder("This run is no longer stored.")
        else:
            self._detail.show_record(data)

    def _on_row_activated(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        self._pages.setCurrentWidget(self._detail)
        sizes = self._splitter.sizes()
        if sizes[1] == 0:
            self._splitter.setSizes([max(sizes[0] * 3 // 5, 1), max(sizes[0] * 2 // 5, 1)])
        if self._detail.run_id != index.data(RUN_ID_ROLE):
            self._load_current_detail()
        self._detail.tabs.setFocus(Qt.FocusReason.OtherFocusReason)

    def _on_context_menu(self, position: QPoint) -> None:
        """The actions on the run under the pointer (or the current run, from the keyboard)."""
        index = self._table.indexAt(position)
        if index.isValid() and not self._table.selectionModel().isRowSelected(index.row()):
            self._table.selectRow(index.row())
        menu = QMenu(self._table)
        menu.setObjectName("recordsContextMenu")
        actions = self.record_actions
        for action in (actions.rerun_action, actions.sample_action, actions.copy_action):
            menu.addAction(action)
        menu.addSeparator()
        for action in (self._compare_action, self._export_action, self._clear_selected_action):
            menu.addAction(action)
        self._context_menu = menu
        menu.popup(self._table.viewport().mapToGlobal(position))

    # ---- compare -------------------------------------------------------------------------------
    def _comparison(self) -> RunComparison:
        """The two runs side by side, made when first asked for."""
        if self._compare is None:
            from studio.ui.run_comparison import RunComparison

            self._compare = RunComparison(DiffCache(self._bridge))
            self._compare.setObjectName("recordCompare")
            self._compare.details_requested.connect(self._on_compared_run_requested)
            no_tab_traps(self._compare)
            self._pages.addWidget(self._compare)
        return self._compare

    def _on_compare(self) -> None:
        ids = self._selected_ids()
        if self._store is None or len(ids) != 2:
            return
        self._comparison()
        self._submit(self._on_pair_loaded, _load_runs, self._store, ids)

    def _on_pair_loaded(self, pair: Any, error: BaseException | None) -> None:
        if error is not None or not pair or None in pair:
            self._set_message(f"The runs could not be compared: {error or 'not stored'}", True)
            return
        from studio.ui.run_comparison import run_title

        runs = [(name, outcome) for name, (outcome, _) in zip(("A", "B"), pair, strict=True)]
        digest = "\n".join(
            f"{name}: {time_label(run.started_at)} · {run_title(run)}" for name, run in runs
        )
        cleared = [was_cleared for _, was_cleared in pair]
        compare = self._comparison()
        compare.show_runs(runs, digest, tally=False, cleared=cleared)
        self._pages.setCurrentWidget(compare)

    def _on_compared_run_requested(self, index: int) -> None:
        run_ids = self._comparison().run_ids
        if not 0 <= index < len(run_ids):
            return
        row = self._view_row(run_ids[index])
        if row is not None:
            flags = QItemSelectionModel.SelectionFlag
            selection = self._table.selectionModel()
            selection.setCurrentIndex(self._model.index(row, 0), flags.ClearAndSelect | flags.Rows)
        self._pages.setCurrentWidget(self._detail)

    # ---- export ------------------------------------------------------------------------------
    def _export_ids(self) -> list[str]:
        return self._selected_ids() or self._shown_ids()

    def _on_export(self) -> None:
        ids = self._export_ids()
        if self._store is None or not ids:
            return
        folder = self._workspace.root if self._workspace else Path.home()
        path, _ = QFileDialog.getSaveFileName(
            self,
            f"Export {_plural(len(ids), 'run')} as JSON Lines",
            str(folder / EXPORT_NAME),
            "JSON Lines (*.jsonl);;All files (*)",
        )
        if not path:
            return
        self._busy = True
        self._update_actions()
        self._set_message(f"Exporting {_plural(len(ids), 'run')}…")
        self._submit(
            lambda written, error: self._on_exported(path, written, error),
            _export,
            self._store,
            ids,
            path,
        )

    def _on_exported(self, path: str, written: Any, error: BaseException | None) -> None:
        self._busy = False
        self._update_actions()
        if error is not None:
            self._set_message(f"The export failed: {error}", error=True)
            return
        self._set_message(f"Exported {_plural(int(written), 'run')} to {path}")

    # ---- clear payloads ------------------------------------------------------------------------
    def _on_clear_selected(self) -> None:
        ids = self._selected_ids()
        if not ids:
            return
        self._clear_payloads(ids, f"the {_plural(len(ids), 'selected run')}")

    def _on_clear_all(self) -> None:
        total = len(self._loaded.rows) if self._loaded else 0
        if total:
            self._clear_payloads(None, "all runs" if total != 1 else "the one run")

    def _clear_payloads(self, ids: Sequence[str] | None, what: str) -> None:
        if self._store is None or self._busy:
            return
        answer = QMessageBox.question(
            self,
            "Clear payloads",
            f"Clear the payloads of {what}?\n\nThe input, result and output of "
            f"{'each' if ids is None or len(ids) != 1 else 'the'} run are overwritten and cannot "
            "be brought back. The decision records stay.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        self._busy = True
        self._update_actions()
        self._set_message("Clearing payloads…")
        self._submit(self._on_cleared, _clear, self._store, None if ids is None else list(ids))

    def _on_cleared(self, cleared: Any, error: BaseException | None) -> None:
        self._busy = False
        self._update_actions()
        if error is not None:
            self._set_message(f"The payloads could not be cleared: {error}", error=True)
        else:
            count = int(cleared)
            self._set_message(
                f"Cleared {_plural(count, 'payload')}" if count else "No payload left to clear"
            )
        self.refresh()

    # ---- state of the actions and messages ---------------------------------------------------
    def _update_actions(self) -> None:
        has_store = self._store is not None
        selected = self._selected_count() if has_store else 0
        shown = len(self._model.rows) if has_store else 0
        self._compare_action.setEnabled(selected == 2)
        self.record_actions.update(selected == 1 and self._current_run_id() is not None)
        self._export_action.setEnabled(has_store and not self._busy and (selected or shown) > 0)
        self._clear_selected_action.setEnabled(has_store and not self._busy and selected > 0)
        self._clear_all_action.setEnabled(
            has_store and not self._busy and bool(self._loaded and self._loaded.rows)
        )
        self._clear_button.setEnabled(
            self._clear_selected_action.isEnabled() or self._clear_all_action.isEnabled()
        )
        what = _plural(selected, "selected run") if selected else "every run shown"
        self._export_action.setToolTip(f"Export {what} as JSON Lines (Ctrl+E)")

    def _set_message(self, text: str, error: bool = False) -> None:
        self._message.setText(text)
        self._message.setStyleSheet("color: rgb(214, 48, 49);" if error else "")
