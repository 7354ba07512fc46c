"""One run, shown the one way: Diff, Decision record, Turn error, Output, Result, Calls and
Provider request tabs (the turn error first when the run failed, the diff when it succeeded),
below the run's warnings. The Calls tab shows for a contract whose hooks can call their host, and
for any run that did; the Provider request tab for a pre-LLM run.

The results panel shows a run just made with it, the record detail a stored run rebuilt as an
outcome; a stored run whose payload was cleared says so where its content would be. Nothing
here walks a whole request: the diff is computed once per outcome, off the GUI thread, and the
JSON trees make their rows when a branch is opened."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.run_outcome import ChainStep, RunOutcome
from studio.core.sample_findings import NOT_RUN, SAMPLE_PROBLEM, hook_started, is_sample_problem
from studio.ui.contract_views import (
    AMENDMENT,
    diff_sides,
    hook_text,
    layers,
    result_view,
    result_words,
)
from studio.ui.engine_bridge import EngineBridge
from studio.ui.result_style import accent, heading, note, set_accent
from studio.ui.window_layout import CurrentPageStack, no_tab_traps, scroll_below_minimum

if TYPE_CHECKING:
    from studio.ui.diff_cache import DiffCache
    from studio.ui.result_calls_view import CallsView
    from studio.ui.result_decision_view import DecisionRecordView
    from studio.ui.result_diff_view import RequestDiffView
    from studio.ui.result_error_view import TurnErrorView
    from studio.ui.result_json_tree import JsonTreeView
    from studio.ui.result_layers_view import LayersView
    from studio.ui.result_output_view import OutputView
    from studio.ui.result_provider_view import ProviderView

TAB_DIFF, TAB_DECISION, TAB_ERROR, TAB_OUTPUT, TAB_RESULT, TAB_CALLS, TAB_PROVIDER = range(7)
PROVIDER_TITLE = "Provider request"
PROVIDER_TIP = "The body the provider would receive after the hook, and what it costs the cache"
TAB_TITLES = ("Diff", "Decision record", "Turn error", "Output", "Result", "Calls", PROVIDER_TITLE)
TAB_TIPS = (
    "What the hook changed",
    "The content-free record of what the hook decided",
    "Why the run failed, and where",
    "What the hook printed",
    "What the hook returned, and what it was given",
    "What the hook asked its host (adf.*), in order, and what each call got",
    PROVIDER_TIP,
)
CALLING_CONTRACTS = frozenset({"pre_llm"})
PROVIDER_CONTRACTS = frozenset({"pre_llm"})
"""Contracts whose result is a request a provider receives."""
"""Contracts whose hooks have a host API to call."""
PAGE_NAMES = (
    "CurrentPageStack",
    "DecisionRecordView",
    "TurnErrorView",
    "OutputView",
    "QWidget",
    "CallsView",
    "ProviderView",
)
"""Each tab's page, as its scroll area is named (see ``scroll_below_minimum``)."""
LAZY_PARTS = frozenset(
    {
        "diff_view",
        "amendment_diff",
        "layers_view",
        "decision",
        "error_view",
        "output",
        "calls",
        "provider",
        "result_title",
        "result_source",
        "result_note",
        "result_view",
    }
)
"""The parts of a :class:`RunView` made on first use."""
CLEARED = " (cleared)"
CLEARED_TEXT = (
    "Payload cleared: the input, result and output of this run are gone; its decision record "
    "is kept."
)


def status_words(outcome: RunOutcome) -> tuple[str, str]:
    """(text, accent kind) of an outcome's status."""
    if outcome.status == "ok":
        return "✓ ok", "ok"
    if outcome.status == "not_applied":
        return "– not applied", "info"
    if is_sample_problem(outcome.turn_error):
        return "✗ sample problem", "error"
    return "✗ turn error", "error"


def duration_text(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 10_000 else f"{ms / 1000:.1f} s"


def summary_parts(outcome: RunOutcome) -> tuple[list[str], str]:
    """The words of a run's header (status, hook, loop, sample, duration) and its accent."""
    text, kind = status_words(outcome)
    if outcome.turn_error is not None:
        text += f" ({outcome.turn_error.kind})"
    parts = [text]
    hook = hook_text(outcome)
    if hook:
        parts.append(hook)
    if outcome.loop:
        parts.append(f"loop {outcome.loop}")
    if outcome.sample:
        parts.append(f"sample {outcome.sample}")
    parts.append(duration_text(outcome.duration_ms))
    return parts, kind


WARNINGS_SHOWN = 3
"""Warnings listed above the tabs; past this many, the first few and a count by rule (a hook
that presents 100,000 tools has 100,000 of them, and a label that tall stops the window)."""
WARNING_CHARS = 400
"""A warning's line is cut here: a message quotes what the hook returned, a name of any size."""


def warning_lines(warnings: list[dict[str, Any]]) -> list[str]:
    """The run's warnings as the lines shown above its tabs."""
    shown = warnings if len(warnings) <= WARNINGS_SHOWN else warnings[: WARNINGS_SHOWN - 1]
    lines = []
    for warning in shown:
        path = warning.get("path")
        message = str(warning.get("message", ""))
        line = f"⚠ {path}: {message}" if path else f"⚠ {message}"
        lines.append(line if len(line) <= WARNING_CHARS else line[: WARNING_CHARS - 1] + "…")
    rest = warnings[len(shown) :]
    if rest:
        rules = Counter(str(warning.get("rule") or "other") for warning in rest)
        common = [f"{rule} ×{count:,}" for rule, count in rules.most_common(3)]
        more = ", …" if len(rules) > 3 else ""
        lines.append(f"⚠ and {len(rest):,} more warnings: {', '.join(common)}{more}")
    return lines


class _AmendmentDiff(QWidget):
    """An amendment next to its effective change, what the hook was given below."""

    def __init__(self) -> None:
        from studio.ui.result_json_tree import JsonTreeView

        super().__init__()
        self.summary = heading()
        self.summary.setObjectName("amendmentSummary")
        self.amendment = JsonTreeView(detail=False)
        self.effective = JsonTreeView(detail=False)
        self.context = JsonTreeView(detail=False)
        left = QGroupBox("Amendment (what the hook returned)")
        QVBoxLayout(left).addWidget(self.amendment)
        right = QGroupBox("Effective change (the studio's view)")
        QVBoxLayout(right).addWidget(self.effective)
        below = QGroupBox("Context (what the hook was given)")
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
        from studio.ui.result_decision_view import amendment_summary

        self.summary.setText(amendment_summary(outcome))
        self.amendment.set_value(outcome.result)
        self.amendment.expand_all()
        self.effective.set_value(outcome.effective)
        self.effective.expand_all()
        self.context.set_value(outcome.input, expand=1)


class _PageHost(QWidget):
    """A tab's place for its page until the page is made."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.setObjectName(name)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    def hold(self, page: QWidget) -> None:
        self._layout.addWidget(page)


class RunView(QWidget):
    """Signals: ``open_source(file, line)`` when a traceback frame is activated (the file is
    workspace-relative), ``pointer_activated(pointer)`` when a JSON path of the turn error is
    (the view has then shown it in the Result tab), ``diff_shown`` once a diff asked for is in
    the Diff tab (or said to have failed)."""

    open_source = Signal(str, int)
    pointer_activated = Signal(str)
    diff_shown = Signal()

    diff_view: RequestDiffView
    amendment_diff: _AmendmentDiff
    layers_view: LayersView
    decision: DecisionRecordView
    error_view: TurnErrorView
    output: OutputView
    calls: CallsView
    provider: ProviderView
    result_title: QLabel
    result_source: QComboBox
    result_note: QLabel
    result_view: JsonTreeView

    def __init__(
        self, diffs: DiffCache, bridge: EngineBridge, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._diffs = diffs
        self.outcome: RunOutcome | None = None
        self.payload_cleared = False
        self.last_jump: tuple[str, bool] | None = None
        self._result_values: list[tuple[str, Any, str]] = []

        self.warnings = note()
        self.warnings.setObjectName("runWarnings")
        self.warnings.hide()

        self._bridge = bridge
        self._built = False
        self._empty_text = ""
        self._workspace_root: Path | None = None
        self.diff_message = note()
        self.diff_message.setObjectName("diffMessage")
        self.diff_message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.diff_stack = CurrentPageStack()
        self.diff_stack.addWidget(self.diff_message)
        # The other pages are made on first use (see build_pages): with no run yet, the
        # window shows only the Diff tab's message.
        self._hosts = [_PageHost(name) for name in PAGE_NAMES[1:]]

        self.tabs = QTabWidget()
        self.tabs.setObjectName("runTabs")
        self.tabs.setDocumentMode(True)
        tab_pages: tuple[QWidget, ...] = (self.diff_stack, *self._hosts)
        for index, (tab_page, title) in enumerate(zip(tab_pages, TAB_TITLES, strict=True)):
            # A page narrower or shorter than its content scrolls; the window keeps its size.
            self.tabs.addTab(scroll_below_minimum(tab_page), title)
            self.tabs.setTabToolTip(index, TAB_TIPS[index])
        self.tabs.currentChanged.connect(self._on_tab_shown)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.warnings)
        layout.addWidget(self.tabs, 1)
        self.clear("No run yet.")

    def __getattr__(self, name: str) -> Any:
        # Only reached for an attribute not made yet: the pages made on first use.
        if name in LAZY_PARTS and not self.__dict__.get("_built", True):
            self.build_pages()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _on_tab_shown(self, index: int) -> None:
        if index != TAB_DIFF:
            self.build_pages()

    def build_pages(self) -> None:
        """Make the pages not made yet (the window asks once it is painted, so that the first
        look at one does not wait); a page asked for, or a run shown, makes them too."""
        if self._built:
            return
        self._built = True
        from studio.ui.result_calls_view import CallsView
        from studio.ui.result_decision_view import DecisionRecordView
        from studio.ui.result_diff_view import RequestDiffView
        from studio.ui.result_error_view import TurnErrorView
        from studio.ui.result_json_tree import JsonTreeView
        from studio.ui.result_layers_view import LayersView
        from studio.ui.result_output_view import OutputView
        from studio.ui.result_provider_view import ProviderView

        self.diff_view = RequestDiffView()
        self.diff_view.diff_shown.connect(self.diff_shown)
        self.amendment_diff = _AmendmentDiff()
        self.layers_view = LayersView()
        for page in (self.diff_view, self.amendment_diff, self.layers_view):
            self.diff_stack.addWidget(page)
        self.decision = DecisionRecordView()
        self.error_view = TurnErrorView()
        self.error_view.set_workspace_root(self._workspace_root)
        self.error_view.frame_activated.connect(self.open_source)
        self.error_view.pointer_activated.connect(self._on_pointer_activated)
        self.output = OutputView()
        self.calls = CallsView()
        self.provider = ProviderView(self._bridge)
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
        pages: tuple[QWidget, ...] = (
            self.decision,
            self.error_view,
            self.output,
            result_page,
            self.calls,
            self.provider,
        )
        for host, tab_page in zip(self._hosts, pages, strict=True):
            host.hold(tab_page)
        no_tab_traps(self)
        if self.outcome is None:
            self._clear_pages(self._empty_text)

    def set_workspace_root(self, root: Path | None) -> None:
        self._workspace_root = root
        if self._built:
            self.error_view.set_workspace_root(root)

    # ---- one outcome --------------------------------------------------------------------------
    def show_outcome(
        self, outcome: RunOutcome, *, payload_cleared: bool = False, calls_kept: bool = True
    ) -> None:
        """Show ``outcome``; ``payload_cleared``: a stored run that no longer has its input,
        result and output; ``calls_kept`` False: a stored run whose record does not keep the
        hook's calls, so an empty list of calls says nothing. A run shown again keeps the tab
        on show."""
        again = self.outcome is not None and self.outcome.run_id == outcome.run_id
        self.outcome = outcome
        self.payload_cleared = payload_cleared
        self._set_warnings(outcome)
        self._show_diff(outcome)
        self.decision.show_outcome(outcome)
        if outcome.turn_error is not None:
            self.error_view.show_error(outcome.turn_error, payload_cleared=payload_cleared)
        else:
            self.error_view.clear()
        self.output.show_outcome(outcome, payload_cleared=payload_cleared)
        self._show_result(outcome)
        self._show_calls(outcome, calls_kept)
        self.provider.show_outcome(outcome, payload_cleared=payload_cleared)
        self.tabs.setTabVisible(TAB_PROVIDER, outcome.contract in PROVIDER_CONTRACTS)
        failed = outcome.turn_error is not None
        # A sample the hook could not be run on is the sample's problem, not a turn error.
        title = SAMPLE_PROBLEM if is_sample_problem(outcome.turn_error) else TAB_TITLES[TAB_ERROR]
        self.tabs.setTabText(TAB_ERROR, f"{title} ●" if failed else title)
        for tab in (TAB_OUTPUT, TAB_RESULT):
            self.tabs.setTabText(tab, TAB_TITLES[tab] + (CLEARED if payload_cleared else ""))
        if not again:
            self.tabs.setCurrentIndex(TAB_ERROR if failed else TAB_DIFF)

    def clear(self, text: str) -> None:
        """No run on show; ``text`` says why."""
        self.outcome = None
        self.payload_cleared = False
        self._empty_text = text
        self.warnings.hide()
        self.diff_message.setText(text)
        self.diff_stack.setCurrentWidget(self.diff_message)
        for tab, title in enumerate(TAB_TITLES):
            self.tabs.setTabText(tab, title)
        self.tabs.tabBar().setTabTextColor(TAB_CALLS, QColor())
        self.tabs.setTabVisible(TAB_CALLS, False)
        self.tabs.setTabVisible(TAB_PROVIDER, False)
        if self._built:
            self._clear_pages(text)

    def _clear_pages(self, text: str) -> None:
        self.diff_view.clear()
        self.decision.clear(text)
        self.error_view.clear(text)
        self.output.clear()
        self._result_values = []
        self.result_source.blockSignals(True)
        self.result_source.clear()
        self.result_source.blockSignals(False)
        self.result_source.hide()
        self.result_title.setText("")
        self.result_note.setText(text)
        self.result_view.set_value({})
        self.calls.show_calls([])
        self.provider.clear(text)

    def _show_calls(self, outcome: RunOutcome, kept: bool) -> None:
        from studio.ui.result_calls_view import calls_title

        self.calls.show_calls(outcome.calls, payload_cleared=self.payload_cleared)
        self.tabs.setTabText(TAB_CALLS, calls_title(outcome.calls))
        self._colour_calls_tab()
        shown = bool(outcome.calls) or (kept and outcome.contract in CALLING_CONTRACTS)
        self.tabs.setTabVisible(TAB_CALLS, shown)

    def _colour_calls_tab(self) -> None:
        from studio.ui.result_calls_view import calls_trouble

        trouble = self.outcome is not None and calls_trouble(self.outcome.calls)
        self.tabs.tabBar().setTabTextColor(TAB_CALLS, accent("error") if trouble else QColor())

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        # The error colour is made for the palette's base: a light/dark switch remakes it.
        kinds = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
        if event.type() in kinds and hasattr(self, "tabs"):
            self._colour_calls_tab()

    def _set_warnings(self, outcome: RunOutcome) -> None:
        lines = warning_lines(outcome.warnings)
        self.warnings.setText("\n".join(lines))
        self.warnings.setVisible(bool(lines))
        set_accent(self.warnings, "warning" if lines else None)

    # ---- the diff -----------------------------------------------------------------------------
    def _show_diff(self, outcome: RunOutcome) -> None:
        decisions = layers(outcome)
        self.tabs.setTabText(TAB_DIFF, "Layers" if decisions else TAB_TITLES[TAB_DIFF])
        if decisions:
            # A layered run shows its decisions whatever the end: a later layer may be the one
            # that failed.
            self.diff_view.clear()
            self.layers_view.show_layers(decisions)
            self.diff_stack.setCurrentWidget(self.layers_view)
            return
        message = self._no_diff_text(outcome)
        if message is None and result_view(outcome) == AMENDMENT:
            self.diff_view.clear()
            self.amendment_diff.show_outcome(outcome)
            self.diff_stack.setCurrentWidget(self.amendment_diff)
            return
        sides = diff_sides(outcome) if message is None else None
        if sides is None:
            self.diff_view.clear()
            self.diff_message.setText(message or "This run has no request to compare.")
            self.diff_stack.setCurrentWidget(self.diff_message)
            return
        self.diff_view.show_diff(self._diffs, outcome.run_id, sides)
        self.diff_stack.setCurrentWidget(self.diff_view)

    def _no_diff_text(self, outcome: RunOutcome) -> str | None:
        if is_sample_problem(outcome.turn_error):
            if hook_started(outcome):
                return "No diff: the run stopped on a problem of the sample.\nSee its tab."
            return f"No diff: the sample has a problem, so {NOT_RUN}.\nSee the Sample problem tab."
        if outcome.status == "turn_error":
            return "No diff: the hook failed, so no request was sent.\nSee the Turn error tab."
        if outcome.status == "not_applied":
            return (
                f"Not applied: the hook does not target loop {outcome.loop!r},\n"
                "so the request goes on exactly as it is."
            )
        if self.payload_cleared:
            return "No diff: the payload of this run was cleared.\nSee the Decision record tab."
        return None

    @property
    def diff_ready(self) -> bool:
        """Whether the diff on show (if any) has been computed."""
        if not self._built:
            return True
        return self.diff_stack.currentWidget() is not self.diff_view or self.diff_view.ready

    # ---- the result -------------------------------------------------------------------------
    def _show_result(self, outcome: RunOutcome) -> None:
        values: list[tuple[str, Any, str]] = []
        result = _result_value(outcome)
        if result is not None and result[1] is None and self.payload_cleared:
            result = None
        if result is not None:
            values.append(result)
        if outcome.input is not None:
            values.append(("Input", outcome.input, result_words(outcome).given))
        self._result_values = values
        self.result_source.blockSignals(True)
        self.result_source.clear()
        self.result_source.addItems([name for name, _, _ in values])
        self.result_source.setCurrentIndex(0 if result is not None else -1)
        self.result_source.blockSignals(False)
        self.result_source.setVisible(bool(values))
        self.result_note.setText("" if result is not None else self._missing_result_text())
        self._on_result_source_changed(0 if result is not None else -1)

    def show_value(self, name: str) -> bool:
        """Put ``Result`` or ``Input`` on show in the Result tab; False when there is none."""
        for index, (shown, _, _) in enumerate(self._result_values):
            if shown == name:
                self._on_result_source_changed(index)
                return True
        return False

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
        self.tabs.setCurrentIndex(TAB_RESULT)
        if not self._show_result_value():
            self.last_jump = (pointer, False)
            if self.outcome is not None:
                self.result_note.setText(f"{pointer or '/'}: " + self._missing_result_text())
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

    def _missing_result_text(self) -> str:
        outcome = self.outcome
        if self.payload_cleared:
            return CLEARED_TEXT
        if outcome is None:
            return "The run has no result."
        return _missing_result_text(outcome)

    def _on_pointer_activated(self, pointer: str) -> None:
        self.jump_to(pointer)
        self.pointer_activated.emit(pointer)


def _result_value(outcome: RunOutcome) -> tuple[str, Any, str] | None:
    """What the Result tab shows first, with its title; None when the outcome has no result."""
    if outcome.status == "not_applied":
        return ("Result", outcome.result, "The request, unchanged (the hook did not run)")
    if outcome.status == "ok":
        return ("Result", outcome.result, result_words(outcome).result)
    if outcome.result is not None:
        return ("Result", outcome.result, "What the hook returned (rejected)")
    if outcome.rejected is not None:
        return ("Result", outcome.rejected, "What the hook returned (rejected, never sent)")
    stopping = _failed_step(outcome.chain)
    if stopping is not None and stopping.returned is not None:
        from studio.ui.result_decision_view import step_name

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
