"""The decision record: the content-free record of what the hook decided, field by field. A
contract whose result is an amendment shows its record exactly as recorded and, apart from it,
the studio's effective change; a chain of hooks shows its timeline beside its record."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import (
    QGroupBox,
    QSplitter,
    QStackedWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.run_outcome import ChainStep, RunOutcome
from studio.ui.contract_views import AMENDMENT, TIMELINE, result_view, result_words
from studio.ui.result_json_tree import JsonTreeView, preview
from studio.ui.result_style import heading, note, steps_table, tint

RECORD_TITLE = "Decision record (content-free)"
EFFECTIVE_TITLE = "Effective change (the studio's view, not part of the record)"
STEP_RECORD_TITLE = "Decision record, exactly as recorded"

STOP_WORDS = {
    "shortCircuit": "answered the turn itself (shortCircuit): no model call was made",
    "interrupt": "interrupted the turn",
    "retry": "rejected the response and asked for a retry",
    "retry_exhausted": "asked for a retry, but none was left",
    "turn_error": "failed: the turn ended in a turn error",
}


def step_name(step: ChainStep | dict[str, Any]) -> str:
    chain = step.chain if isinstance(step, ChainStep) else step.get("chain")
    position = step.position if isinstance(step, ChainStep) else step.get("position")
    return f"{chain}[{position}]"


def stop_text(step: ChainStep) -> str:
    words = STOP_WORDS.get(step.stopped or "", step.stopped or "")
    return f"{step.hook} at {step_name(step)} (attempt {step.attempt}) {words}"


class ChainTimeline(QWidget):
    """One row per hook call, in order: where, which hook, built-in or not, the attempt, what it
    changed and whether it stopped the chain; the selected call's returned value and output."""

    COLUMNS = ("Step", "Hook", "Kind", "Attempt", "Changed", "Stopped", "Time")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.headline = heading()
        self.headline.setObjectName("chainHeadline")
        self.stops = note()
        self.stops.setObjectName("chainStops")
        self.table = steps_table("chainTimeline", self.COLUMNS)
        self.table.currentItemChanged.connect(self._on_current_changed)
        self.detail = JsonTreeView(detail=False)
        self.detail_label = note("Select a hook to see what it returned and printed")
        self.record = JsonTreeView(detail=False)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.detail_label)
        lower_layout.addWidget(self.detail)
        record_box = QGroupBox(RECORD_TITLE)
        record_layout = QVBoxLayout(record_box)
        record_layout.addWidget(self.record)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(lower)
        split.addWidget(record_box)
        split.setSizes([260, 140, 160])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.headline)
        layout.addWidget(self.stops)
        layout.addWidget(split, 1)
        self.steps: list[ChainStep] = []

    def show_outcome(self, outcome: RunOutcome) -> None:
        self.steps = []
        self.table.clear()
        self.steps = list(outcome.chain)
        record = outcome.decision_record or {}
        parts = [f"status {record.get('status', outcome.status)}"]
        calls = record.get("modelCalls")
        if calls is not None:
            parts.append(f"{calls} model call" + ("" if calls == 1 else "s"))
        retries = record.get("retries")
        if retries:
            parts.append(f"{retries} retr" + ("y" if retries == 1 else "ies"))
        if record.get("retryExhausted"):
            parts.append("retries exhausted")
        if record.get("interrupted"):
            parts.append("interrupted")
        hooks = len(self.steps)
        parts.append(f"{hooks} hook call" + ("" if hooks == 1 else "s"))
        self.headline.setText("Chain: " + " · ".join(parts))
        stopping = [s for s in self.steps if s.stopped]
        if stopping:
            self.stops.setText("\n".join("Stopped by " + stop_text(s) for s in stopping))
        else:
            self.stops.setText("No hook stopped the chain.")
        bold = QFont(self.table.font())
        bold.setBold(True)
        for step in self.steps:
            item = QTreeWidgetItem(
                [
                    step_name(step),
                    step.hook,
                    "built-in" if step.builtin else "your hook",
                    str(step.attempt),
                    ", ".join(step.changed) or "—",
                    step.stopped or "",
                    f"{step.duration_ms:.1f} ms",
                ]
            )
            item.setToolTip(1, step.hook)
            if step.stopped:
                kind = "error" if step.stopped == "turn_error" else "warning"
                color = tint(kind, 60)
                for col in range(len(self.COLUMNS)):
                    if color is not None:
                        item.setBackground(col, QBrush(color))
                    item.setFont(col, bold)
                item.setToolTip(5, STOP_WORDS.get(step.stopped, step.stopped))
            elif step.changed:
                color = tint("changed", 35)
                if color is not None:
                    item.setBackground(4, QBrush(color))
            self.table.addTopLevelItem(item)
        self.record.set_value(record)
        self.record.expand_all()
        self.detail.set_value({})
        self.detail_label.setText("Select a hook to see what it returned and printed")
        rows = self.stopping_rows()
        last = self.table.topLevelItem(rows[-1]) if rows else None
        if last is not None:
            self.table.setCurrentItem(last)

    def stopping_rows(self) -> list[int]:
        return [i for i, s in enumerate(self.steps) if s.stopped]

    def _on_current_changed(self, current: QTreeWidgetItem | None, _previous: Any) -> None:
        row = self.table.indexOfTopLevelItem(current) if current is not None else -1
        if not 0 <= row < len(self.steps):
            return
        step = self.steps[row]
        value: dict[str, Any] = {"returned": step.returned}
        if step.stdout:
            value["stdout"] = step.stdout
        if step.stderr:
            value["stderr"] = step.stderr
        self.detail_label.setText(
            f"{step_name(step)} {step.hook} returned {preview(step.returned, 80)}"
        )
        self.detail.set_value(value)
        self.detail.expand_all()


class DecisionRecordView(QWidget):
    """The decision record of a run, as its contract's result view shows it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stack = QStackedWidget()
        # page 0: the record alone
        self.record_title = heading()
        self.record_note = note()
        self.record = JsonTreeView(detail=False)
        self.record.setObjectName("decisionRecord")
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.record_title)
        lay.addWidget(self.record_note)
        lay.addWidget(self.record, 1)
        self.stack.addWidget(page)
        # page 1: an amendment's record and its effective change apart
        self.step_record_box = QGroupBox(STEP_RECORD_TITLE)
        self.step_record_box.setObjectName("stepRecordBox")
        self.step_record = JsonTreeView(detail=False)
        box_layout = QVBoxLayout(self.step_record_box)
        box_layout.addWidget(self.step_record)
        self.step_record_note = note()
        box_layout.addWidget(self.step_record_note)
        self.effective_box = QGroupBox(EFFECTIVE_TITLE)
        self.effective_box.setObjectName("effectiveBox")
        self.effective = JsonTreeView(detail=False)
        box_layout = QVBoxLayout(self.effective_box)
        box_layout.addWidget(
            note(
                "What really changed once the amendment was applied: contributors "
                "added and removed, the final tools, model and input budget."
            )
        )
        box_layout.addWidget(self.effective)
        step_split = QSplitter(Qt.Orientation.Vertical)
        step_split.addWidget(self.step_record_box)
        step_split.addWidget(self.effective_box)
        self.stack.addWidget(step_split)
        # page 2: chain timeline
        self.timeline = ChainTimeline()
        self.stack.addWidget(self.timeline)
        # page 3: nothing to show
        self.empty = note()
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack.addWidget(self.empty)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)

    def clear(self, text: str = "") -> None:
        self.empty.setText(text)
        self.stack.setCurrentWidget(self.empty)

    def show_outcome(self, outcome: RunOutcome) -> None:
        view = result_view(outcome)
        if view == TIMELINE:
            self.timeline.show_outcome(outcome)
            self.stack.setCurrentWidget(self.timeline)
            return
        if view == AMENDMENT:
            self._show_amendment(outcome)
            return
        if not outcome.decision_record:
            self.clear(result_words(outcome).unrecorded)
            return
        self.record_title.setText(RECORD_TITLE)
        self.record_note.setText(_record_note(outcome))
        self.record.set_value(outcome.decision_record)
        self.record.expand_all()
        self.stack.setCurrentIndex(0)

    def _show_amendment(self, outcome: RunOutcome) -> None:
        self.stack.setCurrentIndex(1)
        if outcome.decision_record:
            self.step_record.set_value(outcome.decision_record)
            self.step_record.expand_all()
            self.step_record_note.setText(
                "Counts are what the hook asked for; the flags record presence."
            )
        else:
            self.step_record.set_value({})
            self.step_record_note.setText(
                "No record: the request was not sealed, because the preparation failed."
            )
        if outcome.effective is not None:
            self.effective.set_value(outcome.effective)
            self.effective.expand_all()
            self.effective_box.setEnabled(True)
        else:
            self.effective.set_value({})
            self.effective_box.setEnabled(False)

    def record_keys(self) -> list[str]:
        """The top-level keys of the record on show (the step record on a step run)."""
        view = self.step_record if self.stack.currentIndex() == 1 else self.record
        value = view.model.value
        return list(value) if isinstance(value, dict) else []


def _record_note(outcome: RunOutcome) -> str:
    record = outcome.decision_record
    if outcome.status == "not_applied" or record.get("applied") is False:
        return f"The hook does not target loop {outcome.loop!r}, so the request went on unchanged."
    if "sealedRequestId" in record and record["sealedRequestId"] is None:
        return "Nothing was sealed: the hook failed, so no request was sent."
    return "Counts, names and hashes only: the record never holds what the request says."


def amendment_summary(outcome: RunOutcome) -> str:
    """The effective change of an amendment in one line."""
    eff = outcome.effective or {}
    parts: list[str] = []
    added = eff.get("addedContributors") or []
    removed = eff.get("removedContributors") or []
    if added:
        parts.append("contributors +" + ", +".join(map(str, added)))
    if removed:
        parts.append("contributors −" + ", −".join(map(str, removed)))
    amendment = (outcome.decision_record or {}).get("amendment") or {}
    if amendment.get("modelChanged") and "model" in eff:
        parts.append(f"model → {eff['model']}")
    if amendment.get("inputBudgetChanged") and "inputBudget" in eff:
        budget = eff["inputBudget"]
        if isinstance(budget, dict):
            shown = ", ".join(f"{k} {preview(v, 24)}" for k, v in list(budget.items())[:4])
        else:
            shown = preview(budget, 60)
        parts.append(f"input budget → {shown}")
    if amendment.get("activeTools") is not None and "activeTools" in eff:
        parts.append(f"active tools → {', '.join(map(str, eff['activeTools'] or []))}")
    if amendment.get("contributedTools"):
        parts.append(f"{amendment['contributedTools']} tools contributed")
    if not parts:
        return (
            "no changes: the hook returned nothing to amend"
            if not outcome.result
            else "no effective change"
        )
    return ", ".join(parts)
