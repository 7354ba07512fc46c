"""The results of a run: a header line, then Diff, Inspection, Turn error, Output and Result tabs
(the turn error first when the run failed, the diff when it succeeded); and Run on every target
as columns side by side.

The panel only shows core objects (a ``RunOutcome``, or the exception when the engine itself
failed). Nothing here walks a whole request: the diff is computed once per outcome, off the GUI
thread, and the JSON trees make their rows when a branch is opened."""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.run_outcome import ChainStep, RunOutcome
from studio.ui.engine_bridge import EngineBridge, Job
from studio.ui.result_comparison import ComparisonView, Outcome, status_words
from studio.ui.result_diff_view import DiffCache, DiffSides, RequestDiffView, chain_sides
from studio.ui.result_error_view import TurnErrorView
from studio.ui.result_inspection_view import InspectionView, step_name, step_summary
from studio.ui.result_json_tree import JsonTreeView
from studio.ui.result_output_view import OutputView
from studio.ui.result_style import heading, note, set_accent

TAB_DIFF, TAB_INSPECTION, TAB_ERROR, TAB_OUTPUT, TAB_RESULT = range(5)
TAB_TITLES = ("Diff", "Inspection", "Turn error", "Output", "Result")


class Ticket(Protocol):
    sample: str
    loop: str | None
    hook: str | None


def hook_text(outcome: RunOutcome) -> str:
    if outcome.hook is not None:
        return f"{outcome.hook.source}:{outcome.hook.function}"
    failed = outcome.turn_error.hook if outcome.turn_error is not None else None
    if outcome.contract == "chain" and failed is not None:
        where = f" at {failed.chain}[{failed.position}]" if failed.chain is not None else ""
        return f"chain, {failed.source}:{failed.function}{where}"
    return "the model hook chains" if outcome.contract == "chain" else "no hook"


def _duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 10_000 else f"{ms / 1000:.1f} s"


class _StepDiff(QWidget):
    """A step run: the amendment next to the effective change, the step context below."""

    def __init__(self) -> None:
        super().__init__()
        self.summary = heading()
        self.summary.setObjectName("stepSummary")
        self.amendment = JsonTreeView(detail=False)
        self.effective = JsonTreeView(detail=False)
        self.context = JsonTreeView(detail=False)
        left = QGroupBox("Amendment (what the hook returned)")
        QVBoxLayout(left).addWidget(self.amendment)
        right = QGroupBox("Effective change (the studio's view)")
        QVBoxLayout(right).addWidget(self.effective)
        below = QGroupBox("Step context (what the hook was given)")
        QVBoxLayout(below).addWidget(self.context)
        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.addWidget(left)
        sides.addWidget(right)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(sides)
        split.addWidget(below)
        split.setSizes([320, 200])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)

    def show_outcome(self, outcome: RunOutcome) -> None:
        self.summary.setText(step_summary(outcome))
        self.amendment.set_value(outcome.result)
        self.amendment.expand_all()
        self.effective.set_value(outcome.effective)
        self.effective.expand_all()
        self.context.set_value(outcome.input, expand=1)


class ResultsPanel(QWidget):
    """Signals: ``open_source(file, line)`` when a traceback frame is activated (the file is
    workspace-relative), ``jump_requested(pointer)`` when a JSON path is activated."""

    open_source = Signal(str, int)
    jump_requested = Signal(str)
    comparison_shown = Signal(object)

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.outcome: Outcome | None = None
        self.results: list[tuple[str, Outcome]] = []
        self.last_jump: tuple[str, bool] | None = None
        self._running: Ticket | None = None
        self._diffs = DiffCache(bridge)

        # header
        self.header = QLabel("No run yet: choose a sample and press Run (Ctrl+Enter)")
        self.header.setObjectName("resultsHeader")
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.header.font()
        font.setBold(True)
        self.header.setFont(font)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(90)
        self.busy.setMaximumHeight(12)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.back = QPushButton("◂ All targets")
        self.back.setToolTip("Back to the runs on every target, side by side")
        self.back.clicked.connect(self._on_back_clicked)
        self.back.hide()
        self.warnings = note()
        self.warnings.setObjectName("resultsWarnings")
        self.warnings.hide()
        top = QHBoxLayout()
        top.addWidget(self.back)
        top.addWidget(self.header, 1)
        top.addWidget(self.busy)

        # tabs
        self.diff_view = RequestDiffView()
        self.step_diff = _StepDiff()
        self.diff_message = note()
        self.diff_message.setObjectName("diffMessage")
        self.diff_message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.diff_stack = QStackedWidget()
        for page in (self.diff_view, self.step_diff, self.diff_message):
            self.diff_stack.addWidget(page)
        self.inspection = InspectionView()
        self.error_view = TurnErrorView()
        self.error_view.frame_activated.connect(self._on_frame_activated)
        self.error_view.pointer_activated.connect(self._on_pointer_activated)
        self.output = OutputView()
        self.result_title = heading()
        self.result_source = QComboBox()
        self.result_source.setPlaceholderText("Show…")
        self.result_source.setToolTip("Show the result, or what the hook was given")
        self.result_source.currentIndexChanged.connect(self._on_result_source_changed)
        self.result_note = note()
        self.result_note.setObjectName("resultNote")
        self.result_view = JsonTreeView()
        self.result_view.setObjectName("resultTree")
        result_page = QWidget()
        result_layout = QVBoxLayout(result_page)
        result_layout.setContentsMargins(0, 0, 0, 0)
        result_top = QHBoxLayout()
        result_top.addWidget(self.result_title, 1)
        result_top.addWidget(self.result_source)
        result_layout.addLayout(result_top)
        result_layout.addWidget(self.result_note)
        result_layout.addWidget(self.result_view, 1)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("resultTabs")
        self.tabs.setDocumentMode(True)
        for widget, title in zip(
            (self.diff_stack, self.inspection, self.error_view, self.output, result_page),
            TAB_TITLES,
            strict=True,
        ):
            self.tabs.addTab(widget, title)
        self.comparison = ComparisonView(self._diff_for)
        self.comparison.details_requested.connect(self._on_column_details)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.tabs)
        self.pages.addWidget(self.comparison)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.warnings)
        layout.addWidget(self.pages, 1)
        self._result_values: list[tuple[str, Any, str]] = []
        self._clear_tabs("No run yet.")

    # ---- running ----------------------------------------------------------------------------
    def show_running(self, ticket: Ticket) -> None:
        self._running = ticket
        self.back.hide()
        self.busy.show()
        self.pages.setEnabled(False)
        set_accent(self.header, None)
        self._set_running_text(0.0)

    def update_running(self, seconds: float) -> None:
        if self._running is not None:
            self._set_running_text(seconds)

    def _set_running_text(self, seconds: float) -> None:
        ticket = self._running
        assert ticket is not None
        hook = ticket.hook or "the configured hook"
        self.header.setText(f"Running {hook} on {ticket.sample}… {seconds:.1f} s")
        self.header.setToolTip(f"loop {ticket.loop}" if ticket.loop else "")

    def _stop_running(self) -> None:
        self._running = None
        self.busy.hide()
        self.pages.setEnabled(True)
        self.header.setToolTip("")

    # ---- one outcome --------------------------------------------------------------------------
    def show_outcome(self, outcome: Outcome) -> None:
        self._stop_running()
        self.results = []
        self.back.hide()
        self._show(outcome)

    def _show(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.pages.setCurrentWidget(self.tabs)
        if isinstance(outcome, BaseException):
            self._show_exception(outcome)
            return
        self._set_header(outcome)
        self._set_warnings(outcome)
        self._show_diff(outcome)
        self.inspection.show_outcome(outcome)
        if outcome.turn_error is not None:
            self.error_view.show_error(outcome.turn_error, contract=outcome.contract)
        else:
            self.error_view.clear()
        self.output.show_outcome(outcome)
        self._show_result(outcome)
        failed = outcome.turn_error is not None
        self.tabs.setTabText(TAB_ERROR, "Turn error ●" if failed else "Turn error")
        self.tabs.setCurrentIndex(TAB_ERROR if failed else TAB_DIFF)

    def _set_header(self, outcome: RunOutcome) -> None:
        text, kind = status_words(outcome)
        if outcome.turn_error is not None:
            text += f" ({outcome.turn_error.kind})"
        parts = [text]
        if outcome.hook is not None or outcome.contract == "chain":
            parts.append(hook_text(outcome))
        if outcome.loop:
            parts.append(f"loop {outcome.loop}")
        if outcome.sample:
            parts.append(f"sample {outcome.sample}")
        parts.append(_duration(outcome.duration_ms))
        self.header.setText(" · ".join(parts))
        set_accent(self.header, kind)

    def _set_warnings(self, outcome: RunOutcome) -> None:
        lines = []
        for warning in outcome.warnings:
            path = warning.get("path")
            message = warning.get("message", "")
            lines.append(f"⚠ {path}: {message}" if path else f"⚠ {message}")
        self.warnings.setText("\n".join(lines))
        self.warnings.setVisible(bool(lines))
        set_accent(self.warnings, "warning" if lines else None)

    def _show_exception(self, exc: BaseException) -> None:
        self.header.setText(f"✗ The studio could not run the hook: {type(exc).__name__}")
        set_accent(self.header, "error")
        self.warnings.hide()
        self._clear_tabs("The engine failed, so there is no result: see the Turn error tab.")
        self.error_view.show_exception(exc)
        self.tabs.setTabText(TAB_ERROR, "Turn error ●")
        self.tabs.setCurrentIndex(TAB_ERROR)

    def _clear_tabs(self, text: str) -> None:
        self.diff_view.clear()
        self.diff_message.setText(text)
        self.diff_stack.setCurrentWidget(self.diff_message)
        self.inspection.clear(text)
        self.error_view.clear("No turn error." if self.outcome is None else text)
        self.output.clear()
        self._result_values = []
        self.result_source.blockSignals(True)
        self.result_source.clear()
        self.result_source.blockSignals(False)
        self.result_source.hide()
        self.result_title.setText("")
        self.result_note.setText(text)
        self.result_view.set_value({})
        self.tabs.setTabText(TAB_ERROR, "Turn error")

    # ---- the diff -----------------------------------------------------------------------------
    def _diff_sides(self, outcome: RunOutcome) -> DiffSides:
        if outcome.contract == "chain":
            final = outcome.result.get("request") if isinstance(outcome.result, dict) else None
            return chain_sides(outcome.input, final)
        return DiffSides(outcome.input, outcome.result)

    def _diff_for(self, outcome: RunOutcome) -> Job | str | None:
        """The diff of a successful run (computed once per outcome), or a summary line when the
        contract has no request to diff."""
        if outcome.contract == "step":
            return step_summary(outcome)
        return self._diffs.job(outcome.run_id, self._diff_sides(outcome))

    def _show_diff(self, outcome: RunOutcome) -> None:
        if outcome.status == "turn_error":
            self.diff_view.clear()
            self.diff_message.setText(
                "No diff: the hook failed, so no request was sent.\nSee the Turn error tab."
            )
            self.diff_stack.setCurrentWidget(self.diff_message)
            return
        if outcome.status == "not_applied":
            self.diff_view.clear()
            self.diff_message.setText(
                f"Not applied: the hook does not target loop {outcome.loop!r},\n"
                "so the request goes on exactly as it is."
            )
            self.diff_stack.setCurrentWidget(self.diff_message)
            return
        if outcome.contract == "step":
            self.diff_view.clear()
            self.step_diff.show_outcome(outcome)
            self.diff_stack.setCurrentWidget(self.step_diff)
            return
        if outcome.contract == "chain" and not isinstance(outcome.result, dict):
            self.diff_view.clear()
            self.diff_message.setText("The chain run has no final request to compare.")
            self.diff_stack.setCurrentWidget(self.diff_message)
            return
        self.diff_view.show_diff(self._diffs, outcome.run_id, self._diff_sides(outcome))
        self.diff_stack.setCurrentWidget(self.diff_view)

    @property
    def diff_ready(self) -> bool:
        """Whether the diff on show (if any) has been computed."""
        return self.diff_stack.currentWidget() is not self.diff_view or self.diff_view.ready

    # ---- the result -------------------------------------------------------------------------
    def _show_result(self, outcome: RunOutcome) -> None:
        values: list[tuple[str, Any, str]] = []
        result = _result_value(outcome)
        if result is not None:
            values.append(result)
        given = {
            "pre_llm": "The original request",
            "step": "The step context (what the hook was given)",
            "chain": "The request context before the chain",
        }[outcome.contract]
        if outcome.input is not None:
            values.append(("Input", outcome.input, given))
        self._result_values = values
        self.result_source.blockSignals(True)
        self.result_source.clear()
        self.result_source.addItems([name for name, _, _ in values])
        self.result_source.setCurrentIndex(0 if result is not None else -1)
        self.result_source.blockSignals(False)
        self.result_source.setVisible(bool(values))
        if result is None:
            self.result_note.setText(_missing_result_text(outcome))
        else:
            self.result_note.setText("")
        self._on_result_source_changed(0 if result is not None else -1)

    def _on_result_source_changed(self, index: int) -> None:
        if 0 <= index < len(self._result_values):
            _, value, title = self._result_values[index]
            self.result_title.setText(title)
            self.result_view.set_value(value, expand=1)
            if self.result_source.currentIndex() != index:
                self.result_source.blockSignals(True)
                self.result_source.setCurrentIndex(index)
                self.result_source.blockSignals(False)
        else:
            self.result_title.setText("No result")
            self.result_view.set_value({})

    def _show_result_value(self) -> bool:
        """Put the result (not the input) on show; False when the outcome has none."""
        if not self._result_values or self._result_values[0][0] != "Result":
            return False
        if self.result_source.currentIndex() != 0 or self.result_view.model.value is None:
            self._on_result_source_changed(0)
        return True

    def jump_to(self, pointer: str) -> None:
        """Select the value at ``pointer`` in the result and switch to the Result tab."""
        self.pages.setCurrentWidget(self.tabs)
        self.tabs.setCurrentIndex(TAB_RESULT)
        if not self._show_result_value():
            self.last_jump = (pointer, False)
            if isinstance(self.outcome, RunOutcome):
                self.result_note.setText(f"{pointer or '/'}: " + _missing_result_text(self.outcome))
            return
        found = self.result_view.select_pointer(pointer)
        self.last_jump = (pointer, found)
        if found:
            self.result_note.setText(f"{pointer or '/'} is selected below.")
        else:
            near = self.result_view.current_pointer()
            where = f"; the nearest value is {near}" if near else ""
            self.result_note.setText(f"There is no value at {pointer} in the result{where}.")
        self.result_view.tree.setFocus()

    # ---- comparison -------------------------------------------------------------------------
    def show_comparison(self, results: list[tuple[str, Outcome]]) -> None:
        self._stop_running()
        self.results = list(results)
        self.outcome = None
        self.back.hide()
        self.warnings.hide()
        self.comparison.show_results(self.results)
        ok = sum(1 for _, o in results if isinstance(o, RunOutcome) and o.status == "ok")
        failed = sum(
            1
            for _, o in results
            if isinstance(o, BaseException) or (isinstance(o, RunOutcome) and o.turn_error)
        )
        samples = {o.sample for _, o in results if isinstance(o, RunOutcome) and o.sample}
        self.header.setText(
            f"Run on every target · sample {', '.join(sorted(samples)) or '?'} · "
            f"{len(results)} loops · {ok} ok, {failed} failed"
        )
        set_accent(self.header, "error" if failed else "ok")
        self.pages.setCurrentWidget(self.comparison)
        self.comparison_shown.emit(results)

    def _on_column_details(self, index: int) -> None:
        if 0 <= index < len(self.results):
            loop, outcome = self.results[index]
            self._show(outcome)
            self.back.setText(f"◂ All targets ({loop})")
            self.back.show()

    def _on_back_clicked(self) -> None:
        if self.results:
            self.back.hide()
            self.outcome = None
            self.warnings.hide()
            self.pages.setCurrentWidget(self.comparison)
            self.show_comparison(self.results)

    # ---- navigation ---------------------------------------------------------------------------
    def _on_frame_activated(self, file: str, line: int) -> None:
        self.open_source.emit(file, line)

    def _on_pointer_activated(self, pointer: str) -> None:
        self.jump_requested.emit(pointer)
        self.jump_to(pointer)


def _result_value(outcome: RunOutcome) -> tuple[str, Any, str] | None:
    """What the Result tab shows first, with its title; None when the outcome has no result."""
    if outcome.status == "not_applied":
        return ("Result", outcome.result, "The request, unchanged (the hook did not run)")
    if outcome.status == "ok":
        title = {
            "pre_llm": "The transformed request",
            "step": "The amendment the hook returned",
            "chain": "The chain run: final request, response, timeline and model calls",
        }[outcome.contract]
        return ("Result", outcome.result, title)
    if outcome.result is not None:
        return ("Result", outcome.result, "What the hook returned (rejected)")
    if outcome.rejected is not None:
        return ("Result", outcome.rejected, "What the hook returned (rejected, never sent)")
    stopping = _failed_step(outcome.chain)
    if stopping is not None and stopping.returned is not None:
        title = f"What {stopping.hook} at {step_name(stopping)} returned (rejected)"
        return ("Result", stopping.returned, title)
    return None


def _failed_step(steps: list[ChainStep]) -> ChainStep | None:
    for step in reversed(steps):
        if step.stopped == "turn_error":
            return step
    return None


def _missing_result_text(outcome: RunOutcome) -> str:
    if outcome.turn_error is not None and outcome.turn_error.kind in (
        "exception",
        "timeout",
        "cancelled",
        "worker_crashed",
        "memory_limit",
    ):
        return "The hook returned nothing: it did not finish."
    if outcome.turn_error is not None and outcome.turn_error.path is not None:
        return (
            "This outcome does not keep the value the hook returned, so the path cannot be "
            "shown in it. The Input choice shows what the hook was given."
        )
    return "The run has no result."
