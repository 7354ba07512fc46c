"""Run on every target, side by side: one column per loop with its status, the diff's summary
line and the turn error's kind; each column opens its run in full."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from studio.core.run_outcome import RunOutcome
from studio.ui.engine_bridge import Job
from studio.ui.result_style import heading, note, set_accent

FUTURE_LOOP = "future-loop"

Outcome = RunOutcome | BaseException


def status_words(outcome: Outcome) -> tuple[str, str]:
    """(text, accent kind) of an outcome's status."""
    if isinstance(outcome, BaseException):
        return "✗ the studio failed", "error"
    if outcome.status == "ok":
        return "✓ ok", "ok"
    if outcome.status == "not_applied":
        return "– not applied", "info"
    return "✗ turn error", "error"


class ComparisonColumn(QFrame):
    details_requested = Signal()

    def __init__(self, loop: str, outcome: Outcome) -> None:
        super().__init__()
        self.setObjectName(f"column:{loop}")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumWidth(210)
        self.loop = loop
        self.outcome = outcome
        title = loop if loop != FUTURE_LOOP else f"{loop} (any future loop)"
        self.title = heading(title, size=1.15)
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
        self.meta = note()
        self.button = QPushButton("Show this run")
        self.button.setToolTip(f"Open the run on {loop} in the result tabs")
        self.button.clicked.connect(self.details_requested)
        layout = QVBoxLayout(self)
        for widget in (
            self.title,
            self.status,
            self.summary,
            self.error,
            self.decision,
            self.meta,
        ):
            layout.addWidget(widget)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addStretch(1)
        self._fill()

    def _fill(self) -> None:
        outcome = self.outcome
        if isinstance(outcome, BaseException):
            self.summary.setText("")
            self.error.setText(f"{type(outcome).__name__}: {outcome}")
            self.meta.setText("")
            return
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
        self.decision.setText(_decision_digest(outcome))
        self.decision.setVisible(bool(self.decision.text()))
        parts = [f"{outcome.duration_ms:.0f} ms"]
        if outcome.hook is not None:
            parts.insert(0, f"{outcome.hook.source}:{outcome.hook.function}")
        self.meta.setText(" · ".join(parts))

    def set_summary(self, text: str) -> None:
        self.summary.setText(text)


class ComparisonView(QWidget):
    """Emits ``details_requested(index)`` when a column's run should be shown in full."""

    details_requested = Signal(int)

    def __init__(
        self, diff_for: Callable[[RunOutcome], Job | str | None], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._diff_for = diff_for
        self.digest = note()
        self.digest.setObjectName("comparisonDigest")
        self.row = QWidget()
        self.row_layout = QHBoxLayout(self.row)
        self.row_layout.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.digest)
        layout.addWidget(scroll, 1)
        self.columns: list[ComparisonColumn] = []
        self._waiting: set[ComparisonColumn] = set()

    def show_results(self, results: list[tuple[str, Outcome]]) -> None:
        for column in self.columns:
            column.setParent(None)
            column.deleteLater()
        self.columns = []
        self._waiting = set()
        counts: dict[str, int] = {}
        for index, (loop, outcome) in enumerate(results):
            column = ComparisonColumn(loop, outcome)
            column.details_requested.connect(lambda i=index: self.details_requested.emit(i))
            self.row_layout.addWidget(column, 1)
            self.columns.append(column)
            word = status_words(outcome)[0][2:]
            counts[word] = counts.get(word, 0) + 1
            if isinstance(outcome, RunOutcome) and outcome.status == "ok":
                self._waiting.add(column)
        self.digest.setText(
            "One column per loop: Main, each declared loop and a loop declared later. "
            + ", ".join(f"{n} {w}" for w, n in counts.items())
            + "."
        )
        if self._waiting:
            # Once the columns are on screen (see RequestDiffView.show_diff).
            QTimer.singleShot(0, self._ask_for_diffs)

    @property
    def ready(self) -> bool:
        return not self._waiting

    def _ask_for_diffs(self) -> None:
        for column in list(self._waiting):
            assert isinstance(column.outcome, RunOutcome)
            job = self._diff_for(column.outcome)
            if not isinstance(job, Job):
                self._on_summary(column, job)
            elif job.done:
                self._on_diff_done(column, job)
            else:
                job.finished.connect(lambda _v, c=column, j=job: self._on_diff_done(c, j))
                job.failed.connect(lambda _e, c=column, j=job: self._on_diff_done(c, j))

    def _on_diff_done(self, column: ComparisonColumn, job: Job) -> None:
        if job.error is not None:
            self._on_summary(column, f"the diff could not be computed: {job.error}")
        else:
            self._on_summary(column, job.value.summary)

    def _on_summary(self, column: ComparisonColumn, text: str | None) -> None:
        if column not in self._waiting:
            return  # the columns of an earlier comparison
        self._waiting.discard(column)
        if text is not None:
            column.set_summary(text)


def _decision_digest(outcome: RunOutcome) -> str:
    """Counts from a pre-LLM decision record: messages and tools before and after."""
    record = outcome.inspection or {}
    if outcome.contract != "pre_llm" or record.get("sealedRequestId") is None:
        return ""
    messages = record.get("messages") or {}
    tools = record.get("tools") or {}
    text = (
        f"messages {messages.get('before')} → {messages.get('after')} · "
        f"tools {tools.get('before')} → {tools.get('after')}"
    )
    removed = tools.get("removed") or []
    added = tools.get("added") or []
    if removed:
        text += " (−" + ", −".join(map(str, removed)) + ")"
    if added:
        text += " (+" + ", +".join(map(str, added)) + ")"
    return text
