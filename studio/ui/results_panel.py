"""The results of a run: a header line above the run's tabs (see ``run_view``), and Run on every
target as columns side by side. The panel only shows core objects: a ``RunOutcome``, whose turn
error says why it failed (the studio's own failures too)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.run_outcome import RunOutcome
from studio.ui.diff_cache import DiffCache
from studio.ui.elided_label import ElidedLabel
from studio.ui.engine_bridge import EngineBridge
from studio.ui.result_style import set_accent
from studio.ui.run_view import RunView, summary_parts
from studio.ui.window_layout import CurrentPageStack, no_tab_traps

if TYPE_CHECKING:
    from studio.ui.run_comparison import RunComparison

FUTURE_LOOP = "future-loop"
NO_RUN = "No run yet: choose a sample and press Run (Ctrl+Enter)"
EVERY_TARGET = "One column per loop: Main, each declared loop and a loop declared later."


class Pending(Protocol):
    """A run asked for and not finished yet."""

    sample: str
    loop: str | None
    hook: str | None


class ResultsPanel(QWidget):
    """Signals: ``open_source(file, line)`` when a traceback frame is activated (the file is
    workspace-relative), ``jump_requested(pointer)`` when a JSON path is activated,
    ``comparison_shown(results)`` when the runs on every target are on show,
    ``save_as_test_requested(outcomes)`` when the runs on show are to become expectations."""

    open_source = Signal(str, int)
    jump_requested = Signal(str)
    comparison_shown = Signal(object)
    save_as_test_requested = Signal(object)

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.results: list[tuple[str, RunOutcome]] = []
        self._running: Pending | None = None
        self._shown: list[RunOutcome] = []
        self._diffs = diffs = DiffCache(bridge)
        self._comparison: RunComparison | None = None

        # One line, elided: a long sample name must not widen the window.
        self.header = ElidedLabel(NO_RUN)
        self.header.setObjectName("resultsHeader")
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
        self.save_test = QPushButton("Save as Test")
        self.save_test.setObjectName("saveAsTest")
        self.save_test.setToolTip(
            "Write what this run gave into its sample as expectations, for its target "
            "(hook-studio test and the Tests view check them); edit them in the Sample tab"
        )
        self.save_test.clicked.connect(self.request_save_as_test)
        self.save_test.hide()
        top = QHBoxLayout()
        top.addWidget(self.back)
        top.addWidget(self.header, 1)
        top.addWidget(self.busy)
        top.addWidget(self.save_test)

        self.run = RunView(diffs, bridge)
        self.run.open_source.connect(self.open_source)
        self.run.pointer_activated.connect(self.jump_requested)
        self.pages = CurrentPageStack()
        self.pages.addWidget(self.run)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.pages, 1)

    @property
    def comparison(self) -> RunComparison:
        """The runs on every target side by side, made when first asked for."""
        if self._comparison is None:
            from studio.ui.run_comparison import RunComparison

            self._comparison = RunComparison(self._diffs)
            self._comparison.details_requested.connect(self._on_column_details)
            no_tab_traps(self._comparison)
            self.pages.addWidget(self._comparison)
        return self._comparison

    @property
    def diff_ready(self) -> bool:
        return self.run.diff_ready

    # ---- running ----------------------------------------------------------------------------
    def show_running(self, pending: Pending) -> None:
        self._running = pending
        self.back.hide()
        self._shown = []
        self.save_test.hide()
        self.busy.show()
        self.pages.setEnabled(False)
        set_accent(self.header, None)
        self._set_running_text(0.0)

    def update_running(self, seconds: float) -> None:
        if self._running is not None:
            self._set_running_text(seconds)

    def _set_running_text(self, seconds: float) -> None:
        pending = self._running
        assert pending is not None
        hook = pending.hook or "the configured hook"
        self.header.setText(f"Running {hook} on {pending.sample}… {seconds:.1f} s")
        self.header.setToolTip(f"loop {pending.loop}" if pending.loop else "")

    def _stop_running(self) -> None:
        self._running = None
        self.busy.hide()
        self.pages.setEnabled(True)
        self.header.setToolTip("")

    # ---- one outcome --------------------------------------------------------------------------
    def show_outcome(self, outcome: RunOutcome) -> None:
        self._stop_running()
        self.results = []
        self.back.hide()
        self._show(outcome)

    def _show(self, outcome: RunOutcome) -> None:
        self._offer_save(outcome.sample is not None, [outcome])
        self.pages.setCurrentWidget(self.run)
        parts, kind = summary_parts(outcome)
        self.header.setText(" · ".join(parts))
        set_accent(self.header, kind)
        self.run.show_outcome(outcome)

    def jump_to(self, pointer: str) -> None:
        """Select the value at ``pointer`` in the result and switch to the Result tab."""
        self.pages.setCurrentWidget(self.run)
        self.run.jump_to(pointer)

    def clear(self) -> None:
        """Nothing on show: another workspace was opened."""
        self._stop_running()
        self.results = []
        self.back.hide()
        self.header.setText(NO_RUN)
        set_accent(self.header, None)
        self.pages.setCurrentWidget(self.run)
        self.run.clear("No run yet.")

    # ---- comparison -------------------------------------------------------------------------
    def show_comparison(self, results: list[tuple[str, RunOutcome]]) -> None:
        self._stop_running()
        self.results = list(results)
        self.back.hide()
        runs = [
            (loop if loop != FUTURE_LOOP else f"{loop} (any future loop)", outcome)
            for loop, outcome in results
        ]
        self.comparison.show_runs(runs, EVERY_TARGET)
        ok = sum(1 for _, o in results if o.status == "ok")
        failed = sum(1 for _, o in results if o.turn_error is not None)
        samples = {o.sample for _, o in results if o.sample}
        self.header.setText(
            f"Run on every target · sample {', '.join(sorted(samples)) or '?'} · "
            f"{len(results)} loops · {ok} ok, {failed} failed"
        )
        set_accent(self.header, "error" if failed else "ok")
        self.pages.setCurrentWidget(self.comparison)
        self._offer_save(bool(samples), [o for _, o in results])
        self.comparison_shown.emit(results)

    def _on_column_details(self, index: int) -> None:
        if 0 <= index < len(self.results):
            loop, outcome = self.results[index]
            self._show(outcome)
            self.back.setText(f"◂ All targets ({loop})")
            self.back.show()

    def _on_back_clicked(self) -> None:
        if self.results:
            self.show_comparison(self.results)

    # ---- save as test -------------------------------------------------------------------------
    def _offer_save(self, possible: bool, outcomes: list[RunOutcome]) -> None:
        self._shown = outcomes if possible else []
        self.save_test.setVisible(bool(self._shown))
        self.save_test.setText("Save All as Tests" if len(self._shown) > 1 else "Save as Test")

    def request_save_as_test(self) -> bool:
        """Ask for the runs on show to become expectations; False when none is on show."""
        if not self._shown:
            return False
        self.save_as_test_requested.emit(list(self._shown))
        return True
