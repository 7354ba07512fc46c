"""One stored run in detail, shown as a run just made is: the stored record is rebuilt as an
outcome and shown with the results panel's tabs (see ``run_view``), below a header that says
when it ran and whether its payload was cleared; one more tab shows what the store keeps.

``load_detail`` reads the record and rebuilds the outcome off the GUI thread; the widget only
shows the prepared ``RecordDetailData``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.records.rebuild import rebuild_outcome
from studio.core.records.store import RecordStore, StoredRecord
from studio.core.run_outcome import RunOutcome
from studio.ui.contract_views import contract_label, hook_text
from studio.ui.diff_cache import DiffCache
from studio.ui.engine_bridge import EngineBridge
from studio.ui.records_cells import duration_label, outcome_label, time_label
from studio.ui.result_style import accent, note
from studio.ui.run_view import CLEARED_TEXT, RunView, status_words
from studio.ui.window_layout import CurrentPageStack, no_tab_traps

if TYPE_CHECKING:
    from studio.ui.result_json_tree import JsonTreeView

STORED_TITLE = "Stored record"
STORED_TIP = (
    "What the record store keeps of this run once its payload is cleared: its decision "
    "record, with when, where and how it ran"
)


@dataclass(frozen=True)
class RecordDetailData:
    """A stored run, ready to show: the record and the run rebuilt as an outcome (None, with
    the problem, when this version cannot read it back)."""

    record: StoredRecord
    outcome: RunOutcome | None
    problem: str | None = None

    @property
    def run_id(self) -> str:
        return self.record.run_id

    @property
    def payload_cleared(self) -> bool:
        return self.record.payload is None


def load_detail(store: RecordStore, run_id: str) -> RecordDetailData | None:
    """Read ``run_id`` and rebuild its outcome; meant to run off the GUI thread."""
    record = store.get(run_id)
    if record is None:
        return None
    try:
        outcome = rebuild_outcome(record.record, record.payload)
    except ValueError as exc:  # a record this version cannot read back: show what is there
        return RecordDetailData(record, None, f"the stored run cannot be read back ({exc})")
    return RecordDetailData(record, outcome)


class RecordDetail(QWidget):
    """Emits ``open_source(file, line)`` when a traceback frame is activated."""

    open_source = Signal(str, int)

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._data: RecordDetailData | None = None
        self._workspace_root: Path | None = None
        self._run: RunView | None = None
        self._placeholder = QLabel()
        self._placeholder.setObjectName("detailPlaceholder")
        self._placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._placeholder.setWordWrap(True)
        self._placeholder.setEnabled(False)
        self._pages = CurrentPageStack()
        self._pages.addWidget(self._placeholder)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._pages)
        self.show_placeholder("Select a run to see its decision record.")

    def _body(self) -> RunView:
        """The run's tabs, made when a run is first shown (or asked for): until then the
        placeholder is all there is to see, and the window opens sooner without them."""
        if self._run is not None:
            return self._run
        self._header = QLabel()
        self._header.setObjectName("recordHeader")
        self._header.setTextFormat(Qt.TextFormat.RichText)
        self._header.setWordWrap(True)
        self._header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._cleared = note(CLEARED_TEXT)
        self._cleared.setObjectName("payloadCleared")
        from studio.ui.result_json_tree import JsonTreeView

        run = RunView(DiffCache(self._bridge), self._bridge)
        run.open_source.connect(self.open_source)
        run.set_workspace_root(self._workspace_root)
        self._stored = JsonTreeView(detail=False)
        self._stored.setObjectName("storedRecord")
        self._stored_tab = run.tabs.addTab(self._stored, STORED_TITLE)
        run.tabs.setTabToolTip(self._stored_tab, STORED_TIP)
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addWidget(self._header)
        body_layout.addWidget(self._cleared)
        # The records dock is short: below the tabs' natural height, they scroll.
        scroll = QScrollArea()
        scroll.setWidget(run)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        body_layout.addWidget(scroll, 1)
        no_tab_traps(body)
        self._pages.addWidget(body)
        self._run = run
        return run

    @property
    def run(self) -> RunView:
        return self._body()

    @property
    def stored(self) -> JsonTreeView:
        self._body()
        return self._stored

    @property
    def stored_tab(self) -> int:
        self._body()
        return self._stored_tab

    @property
    def data(self) -> RecordDetailData | None:
        return self._data

    @property
    def run_id(self) -> str | None:
        return self._data.run_id if self._data else None

    @property
    def tabs(self) -> QTabWidget:
        return self.run.tabs

    def set_workspace_root(self, root: Path | None) -> None:
        self._workspace_root = root
        if self._run is not None:
            self._run.set_workspace_root(root)

    def show_placeholder(self, text: str) -> None:
        self._data = None
        self._placeholder.setText(text)
        self._pages.setCurrentIndex(0)

    def show_record(self, data: RecordDetailData) -> None:
        self._data = data
        self._body()
        self._header.setText(self._header_html(data))
        self._cleared.setVisible(data.payload_cleared)
        stored = self.stored.model.value
        if stored != data.record.record:
            self.stored.set_value(data.record.record, expand=1)
        if data.outcome is not None:
            self.run.show_outcome(
                data.outcome,
                payload_cleared=data.payload_cleared,
                calls_kept="calls" in data.record.record,
            )
        else:
            self.run.clear(f"This run cannot be shown: {data.problem}")
            self.run.tabs.setCurrentIndex(self.stored_tab)
        self._pages.setCurrentIndex(1)

    def payload_state(self) -> str:
        """``cleared``, ``kept``, or ``none`` when no run is shown."""
        if self._data is None:
            return "none"
        return "cleared" if self._data.payload_cleared else "kept"

    @staticmethod
    def _header_html(data: RecordDetailData) -> str:
        summary = data.record.summary
        hook = hook_text(data.outcome) if data.outcome is not None else summary.hook_label
        outcome = outcome_label(summary.status, summary.error_kind)
        kind = status_words(data.outcome)[1] if data.outcome is not None else "error"
        color = accent(kind).name() if summary.status != "ok" else None
        outcome_html = f"<b style='color:{color}'>{outcome}</b>" if color else f"<b>{outcome}</b>"
        parts = [
            outcome_html,
            html.escape(contract_label(summary.contract)),
            *([html.escape(hook)] if hook else []),
            *([f"loop {html.escape(summary.loop)}"] if summary.loop else []),
            *([f"sample {html.escape(summary.sample)}"] if summary.sample else []),
            time_label(summary.started_at),
            duration_label(summary.duration_ms),
        ]
        calls = _calls_html(data.record.record.get("calls"))
        if calls:
            parts.append(calls)
        if not summary.has_payload:
            parts.append("<i>payload cleared</i>")
        if data.problem:
            error = accent("error").name()
            parts.append(f"<span style='color:{error}'>{html.escape(data.problem)}</span>")
        return " · ".join(parts)


def _calls_html(calls: object) -> str | None:
    """How many adf calls the stored run made and how many were refused or failed; None when
    it made none (or its record does not keep them)."""
    if not isinstance(calls, list) or not calls:
        return None
    entries = [call for call in calls if isinstance(call, dict)]
    refusals = sum(1 for call in entries if call.get("gate", "allowed") != "allowed")
    failures = sum(
        1
        for call in entries
        if call.get("gate", "allowed") == "allowed" and call.get("code") is not None
    )
    text = f"{len(calls)} adf call{'s' if len(calls) != 1 else ''}"
    trouble = [
        *([f"{refusals} refused"] if refusals else []),
        *([f"{failures} failed"] if failures else []),
    ]
    if not trouble:
        return text
    error = accent("error").name()
    return f"{text} (<span style='color:{error}'>{', '.join(trouble)}</span>)"
