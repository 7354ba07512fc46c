"""The pre-LLM hook section: lambda source, timeout, targets as rows, live findings, applies view.

The draft is a core ``HookDraft``; every edit replaces it through the undo stack, and the view
re-renders from it. Save is refused while the draft has an error, so the file keeps its last
valid state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QPalette, QUndoStack
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.findings import Finding, errors
from studio.core.hook_source_findings import FUNCTION_RULES, SourceLookup
from studio.core.pre_llm.config import (
    HOOK_KEY,
    LIMIT_MESSAGE,
    MAX_TIMEOUT_MS,
    SourceHome,
    effective_timeout_ms,
)
from studio.core.pre_llm.config_warnings import config_warnings
from studio.core.pre_llm.targets import (
    HookDraft,
    Rows,
    TargetKind,
    TargetRow,
    add_row,
    applies_view,
    choose,
    move_row,
    parse_timeout,
    remove_row,
    summary,
    validate_draft,
)
from studio.core.source_ref import format_source_ref, parse_source_ref
from studio.engine.runtimes import language_problem
from studio.ui.config_editor_parts import (
    ERROR_STYLE,
    findings_list,
    scrolled_editor,
    source_row,
)
from studio.ui.draft_editor import DraftEditor
from studio.ui.result_style import accent
from studio.ui.target_table import TargetTableModel, TargetTableView

MUTED = QPalette.ColorRole.PlaceholderText
LIMIT_POINTER = "/limits/execution_timeout_ms"
FINDING_ROLE = Qt.ItemDataRole.UserRole + 1
"""The finding an item of the Findings list shows, by its place in ``HookEditor.findings``."""
TYPING_RECHECK_MS = 100
"""How long the findings wait for the next keystroke in a cell before they are checked."""

# Both colours are set, so the banner reads the same on a light and a dark palette.
NOTICE_STYLE = (
    "QLabel#noticeBanner { background: #fff1c2; color: #4a3500; border: 1px solid #d9b23c;"
    " border-radius: 3px; padding: 6px; }"
)


class HookEditor(DraftEditor):
    """Edits one agent config's ``pre_llm_hook``."""

    remove_requested = Signal()
    targets_replaced = Signal(int)
    """All streams was chosen and took the place of this many other targets."""

    draft: HookDraft

    MERGE_SOURCE, MERGE_TIMEOUT, MERGE_NAME = 1, 2, 3

    def __init__(self, undo_stack: QUndoStack, parent: QWidget | None = None) -> None:
        super().__init__(undo_stack, HookDraft(), parent)
        self._declared: tuple[str, ...] = ()
        self._limit_ms: int | None = 60_000
        self._functions: list[str] = []
        self._source_file: SourceLookup | None = None
        self._node_problem: str | None = None
        self._agent_config: Callable[[], Any] | None = None
        self._home: SourceHome = "folder"
        self._typed: tuple[int, str] | None = None
        self._typing_timer = QTimer(self)
        self._typing_timer.setSingleShot(True)
        self._typing_timer.setInterval(TYPING_RECHECK_MS)
        self._typing_timer.timeout.connect(self._on_typing_settled)
        self._has_hook = False
        self._read_only: str | None = None

        self.notice = QLabel()
        self.notice.setObjectName("noticeBanner")
        self.notice.setWordWrap(True)
        self.notice.setStyleSheet(NOTICE_STYLE)
        self.notice.hide()

        self.source = QLineEdit()
        self.source.setPlaceholderText("lib/policy.py")
        self.source.setToolTip("The hook's file, relative to the workspace")
        self.function = QComboBox()
        self.function.setEditable(True)
        self.function.setMinimumWidth(100)
        self.function.setToolTip("The function to call (main when none is named)")

        self.timeout = QLineEdit()
        self.timeout.setPlaceholderText("none (the agent limit applies)")
        self.timeout.setToolTip(f"Whole milliseconds from 1000 to {MAX_TIMEOUT_MS}")
        self.effective = QLabel()
        self.effective.setObjectName("effectiveTimeout")
        self.effective.setWordWrap(True)
        timeout_row = QHBoxLayout()
        timeout_row.addWidget(self.timeout, 1)
        timeout_row.addWidget(self.effective, 1)

        self.targets_model = TargetTableModel(self._edit_rows)
        self.targets = TargetTableView()
        self.targets.setModel(self.targets_model)
        self.add_target = QPushButton("+ Add target")
        self.add_target.setToolTip("Add a target row (Insert)")
        self.remove_target = QPushButton("Remove")
        self.remove_target.setToolTip("Remove the selected row (Delete)")
        self.summary = QLabel()
        self.summary.setObjectName("targetSummary")
        self.summary.setWordWrap(True)
        target_buttons = QHBoxLayout()
        target_buttons.addWidget(self.add_target)
        target_buttons.addWidget(self.remove_target)
        target_buttons.addStretch(1)
        target_buttons.addWidget(self.summary)

        form = QFormLayout()
        # On a narrow editor the labels go above their fields instead of squeezing them.
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow("Lambda source", source_row(self.source, self.function))
        form.addRow("Timeout (ms)", timeout_row)
        form.addRow("Targets", self.targets)
        form.addRow("", target_buttons)

        self.findings_list = findings_list()

        self.applies = QTableWidget(0, 2)
        self.applies.setObjectName("applies")
        self.applies.setHorizontalHeaderLabels(["Calls of", "Hook runs"])
        self.applies.verticalHeader().hide()
        self.applies.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.applies.horizontalHeader().setStretchLastSection(True)
        self.applies.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.save_button = QPushButton("Save")
        self.save_button.setToolTip("Save the hook to the agent config (Ctrl+S)")
        self.remove_hook_button = QPushButton("Remove hook")
        self.remove_hook_button.setToolTip("Delete the pre_llm_hook key from the agent config")
        actions = QHBoxLayout()
        actions.addStretch(1)
        actions.addWidget(self.remove_hook_button)
        actions.addWidget(self.save_button)

        box = QGroupBox("Pre-LLM hook")
        box.setLayout(form)
        applies_box = QGroupBox("Applies to")
        applies_layout = QVBoxLayout(applies_box)
        applies_layout.addWidget(self.applies)
        findings_box = QGroupBox("Findings")
        findings_layout = QVBoxLayout(findings_box)
        findings_layout.addWidget(self.findings_list)

        # The window must fit a 640-pixel screen.
        scrolled_editor(self, self.notice, [box, findings_box, applies_box], actions)

        self.source.textEdited.connect(self._on_source_edited)
        self.function.editTextChanged.connect(self._on_function_edited)
        self.timeout.textEdited.connect(self._on_timeout_edited)
        self.add_target.clicked.connect(self._on_add_target)
        self.targets.add_requested.connect(self._on_add_target)
        self.remove_target.clicked.connect(self._on_remove_selected)
        self.targets.remove_requested.connect(self._on_remove_row)
        self.targets.move_requested.connect(self._on_move_row)
        self.targets.name_typed.connect(self._on_name_typed)
        self.targets.name_editor_closed.connect(self._on_name_editor_closed)
        self.findings_list.itemActivated.connect(self._on_finding_activated)
        self.save_button.clicked.connect(self.save_requested)
        self.remove_hook_button.clicked.connect(self.remove_requested)
        self.show_draft(self.draft)

    # ---- context ---------------------------------------------------------------------------
    def set_context(
        self, declared_loops: Sequence[str], limit_ms: int | None, sources: Sequence[str]
    ) -> None:
        """``limit_ms``: the agent's execution limit, None when it is missing or invalid."""
        self._declared = tuple(declared_loops)
        self._limit_ms = limit_ms
        self.targets_model.set_declared_loops(self._declared)
        completer = QCompleter(list(sources), self.source)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.source.setCompleter(completer)
        self._render(self.draft)

    def set_notice(self, text: str | None, read_only: str | None = None) -> None:
        """The banner above the editor (None hides it). ``read_only``: why the hook cannot be
        saved at all; Save and Remove stay disabled and say so."""
        self.notice.setText(text or "")
        self.notice.setVisible(bool(text))
        self._read_only = read_only
        self._render(self.draft)

    def set_functions(self, names: Sequence[str]) -> None:
        """The top-level functions of the source file, for the picker."""
        self._functions = list(names)
        current = parse_source_ref(self.draft.source).function if self.draft.source else ""
        self._showing = True
        try:
            self.function.clear()
            self.function.addItems(self._functions)
            self.function.setEditText(current)
        finally:
            self._showing = False

    def set_source_lookup(self, lookup: SourceLookup | None) -> None:
        """How to find what is at a source path (whether it exists, its functions), for the
        findings; None when no workspace is open."""
        self._source_file = lookup
        self._render(self.draft)

    def set_agent_config(
        self, document: Callable[[], Any] | None, home: SourceHome = "folder"
    ) -> None:
        """How to read the agent config as it is on disk, and where its sources live, for the
        warnings that ``hook-studio check-config`` gives (unknown keys and the rest)."""
        self._agent_config = document
        self._home = home
        self._render(self.draft)

    def set_node_problem(self, problem: str | None) -> None:
        """Why the Node the studio would use cannot run TypeScript or JavaScript hooks (None
        when it can)."""
        self._node_problem = problem
        self._render(self.draft)

    def recheck(self) -> None:
        """The findings again, after the files on disk changed."""
        self._render(self.draft)

    def load(self, draft: HookDraft, has_hook: bool) -> None:
        """Show a draft from disk: a fresh start for undo."""
        self._has_hook = has_hook
        self.undo_stack.clear()
        self.show_draft(draft)
        self.undo_stack.setClean()

    def take_from_disk(self, draft: HookDraft, has_hook: bool, text: str) -> None:
        """Show the hook the file holds now (after a save, a removal, an outside change) as one
        more undoable step, so that the edits before it can still be undone; the file's version
        is the clean state."""
        self._has_hook = has_hook
        self.apply(draft, text)
        self._render(self.draft)
        self.undo_stack.setClean()

    # ---- edits ----------------------------------------------------------------------------
    def _edit_rows(self, rows: Rows, _row: int | None) -> None:
        before = len(self.draft.rows)
        widened = any(row.kind is TargetKind.ALL for row in rows) and len(rows) < before
        self.apply(
            self.draft.with_rows(rows), "Apply to all streams" if widened else "Change target"
        )
        if widened:
            self.targets_replaced.emit(before - len(rows))

    def _on_add_target(self) -> None:
        self.apply(self.draft.with_rows(add_row(self.draft.rows)), "Add target")
        last = self.targets_model.index(len(self.draft.rows) - 1, 0)
        self.targets.setCurrentIndex(last)
        self.targets.edit(last)

    def _on_remove_selected(self) -> None:
        index = self.targets.currentIndex()
        if index.isValid():
            self._on_remove_row(index.row())

    def _on_remove_row(self, row: int) -> None:
        if 0 <= row < len(self.draft.rows):
            self.apply(self.draft.with_rows(remove_row(self.draft.rows, row)), "Remove target")

    def _on_move_row(self, source: int, destination: int) -> None:
        self.apply(
            self.draft.with_rows(move_row(self.draft.rows, source, destination)), "Move target"
        )
        self.targets.setCurrentIndex(self.targets_model.index(destination, 0))

    def _on_finding_activated(self, item: QListWidgetItem) -> None:
        """Enter or a double-click on a finding goes to the field or row it is about."""
        number = item.data(FINDING_ROLE)
        if not isinstance(number, int) or not 0 <= number < len(self.findings):
            return
        finding = self.findings[number]
        field = finding.path[0] if finding.path else None
        if finding.rule in FUNCTION_RULES:
            self.function.setFocus()
            line = self.function.lineEdit()
            if line is not None:
                line.selectAll()
        elif field == "source":
            self.source.setFocus()
            self.source.selectAll()
        elif field == "timeout_ms":
            self.timeout.setFocus()
            self.timeout.selectAll()
        elif field == "targets":
            row = finding.path[1] if len(finding.path) > 1 else 0
            if isinstance(row, int) and 0 <= row < len(self.draft.rows):
                self.targets.setCurrentIndex(self.targets_model.index(row, 0))
            self.targets.setFocus()

    def _on_name_typed(self, row: int, text: str) -> None:
        """A loop name being typed in its cell is checked before it is committed."""
        self._typed = (row, text)
        self._typing_timer.start()

    def _on_typing_settled(self) -> None:
        if self._typed is not None:
            self._show_findings(self._as_typed(self.draft))

    def _as_typed(self, draft: HookDraft) -> HookDraft:
        """``draft`` with the loop name being typed in its cell, while one is."""
        if self._typed is None:
            return draft
        row, text = self._typed
        if not 0 <= row < len(draft.rows):
            return draft
        return draft.with_rows(choose(draft.rows, row, TargetRow.loop(text.strip())))

    def _on_name_editor_closed(self) -> None:
        self._typing_timer.stop()
        if self._typed is not None:
            self._typed = None
            self._show_findings(self.draft)

    def _source_text(self) -> str:
        path = self.source.text().strip()
        function = self.function.currentText().strip() or "main"
        return format_source_ref(path, function) if path else ""

    def _on_source_edited(self, _text: str) -> None:
        self.apply(
            replace(self.draft, source=self._source_text()), "Edit source", self.MERGE_SOURCE
        )

    def _on_function_edited(self, _text: str) -> None:
        if self._showing:
            return
        self.apply(
            replace(self.draft, source=self._source_text()), "Edit function", self.MERGE_SOURCE
        )

    def _on_timeout_edited(self, text: str) -> None:
        self.apply(replace(self.draft, timeout=text), "Edit timeout", self.MERGE_TIMEOUT)

    # ---- rendering ------------------------------------------------------------------------
    def show_draft(self, draft: HookDraft) -> None:
        self.draft = draft
        self._render(draft)
        self.draft_changed.emit(draft)

    def _render(self, draft: HookDraft) -> None:
        self._showing = True
        try:
            ref = parse_source_ref(draft.source) if draft.source else None
            path = ref.path if ref else ""
            function = ref.function if ref and draft.source.strip() else ""
            if self.source.text() != path:
                self.source.setText(path)
            if self.function.currentText() != function:
                self.function.setEditText(function)
            if self.timeout.text() != draft.timeout:
                self.timeout.setText(draft.timeout)
            self.targets_model.set_rows(draft.rows)
        finally:
            self._showing = False

        # A recheck while a name is typed (a listing arrived) keeps judging the name as typed.
        self._show_findings(self._as_typed(draft))

        timeout, _ = parse_timeout(draft.timeout)
        if self._limit_ms is None:
            self.effective.setText("no effective time: the agent has no valid limit")
            self.effective.setToolTip(f"{LIMIT_MESSAGE}; every hooked call fails")
        else:
            self.effective.setToolTip("")
            effective = effective_timeout_ms(timeout, self._limit_ms)
            self.effective.setText(f"effective {effective} ms (agent limit {self._limit_ms} ms)")
        self.summary.setText(summary(draft.rows))

        view = applies_view(draft.rows, self._declared)
        self.applies.setRowCount(len(view))
        rows_height = sum(self.applies.rowHeight(i) for i in range(len(view)))
        self.applies.setFixedHeight(rows_height + self.applies.horizontalHeader().height() + 4)
        for row, (label, runs) in enumerate(view):
            self.applies.setItem(row, 0, QTableWidgetItem(label))
            mark = QTableWidgetItem("✓ runs" if runs else "— not hooked")
            mark.setForeground(accent("ok") if runs else self.palette().color(MUTED))
            self.applies.setItem(row, 1, mark)
        self.remove_hook_button.setEnabled(self._has_hook and not self._read_only)

    def _language_problem(self, path: str) -> str | None:
        return language_problem(path, self._node_problem)

    def _show_findings(self, draft: HookDraft) -> None:
        """The findings of ``draft`` (the draft itself, or one with a cell's text as typed),
        their marks on the fields and rows, and whether Save may run."""
        found = validate_draft(draft, self._language_problem, self._source_file)
        on_disk = self._agent_config() if self._agent_config is not None else None
        shown = {(f.rule, f.pointer) for f in found}
        found += [
            f
            for f in config_warnings(draft, on_disk, self._home)
            if (f.rule, f.pointer) not in shown
        ]
        self.findings = found
        problems: dict[int, str] = {}
        for finding in self.findings:
            if len(finding.path) == 2 and finding.path[0] == "targets":
                problems.setdefault(int(finding.path[1]), finding.message)
        self.targets_model.set_problems(problems)
        # A function the file lacks is marked on the function box, the rest of the source's
        # errors on the path.
        fields = {
            "function" if f.rule in FUNCTION_RULES else f.path[0]
            for f in errors(self.findings)
            if f.path
        }
        self.source.setStyleSheet(ERROR_STYLE if "source" in fields else "")
        self.function.setStyleSheet(ERROR_STYLE if "function" in fields else "")
        self.timeout.setStyleSheet(ERROR_STYLE if "timeout_ms" in fields else "")
        self.targets.setStyleSheet(
            ERROR_STYLE if any(f.path == ("targets",) for f in self.findings) else ""
        )

        self.findings_list.clear()
        for number, finding in enumerate(self.findings):
            item = QListWidgetItem(
                ("✗ " if finding.severity == "error" else "⚠ ") + finding.message
            )
            at = config_pointer(finding, draft.rows)
            item.setToolTip(at)
            item.setData(Qt.ItemDataRole.UserRole, at)
            item.setData(FINDING_ROLE, number)
            self.findings_list.addItem(item)
        if self._limit_ms is None:
            # Not the hook's own finding: the agent's limit fails every call the hook applies to.
            item = QListWidgetItem(f"⚠ every call this hook applies to will fail: {LIMIT_MESSAGE}")
            item.setToolTip(LIMIT_POINTER)
            item.setData(Qt.ItemDataRole.UserRole, LIMIT_POINTER)
            self.findings_list.addItem(item)
        elif not self.findings:
            self.findings_list.addItem(QListWidgetItem("✓ No problems: this hook can be saved"))
        self.save_button.setEnabled(self.valid and not self._read_only)
        blocking = errors(self.findings)
        if self._read_only:
            tip = f"Read-only: {self._read_only}"
        elif blocking:
            # The Findings list may be scrolled out of view on a small screen.
            more = f" (and {len(blocking) - 1} more in Findings)" if len(blocking) > 1 else ""
            tip = f"Cannot save: {blocking[0].message}{more}"
        else:
            tip = "Save the hook to the agent config (Ctrl+S)"
        self.save_button.setToolTip(tip)


def config_pointer(finding: Finding, rows: Rows) -> str:
    """Where in the agent config a finding of the draft is (the config's own findings already
    say so): the hook's source or timeout, and for a target row the key that holds it."""
    path = finding.path
    if not path or path[0] == HOOK_KEY:
        return finding.pointer or "/"
    if path[0] != "targets":
        return f"/{HOOK_KEY}{finding.pointer}"
    row = path[1] if len(path) > 1 else None
    if not isinstance(row, int) or not 0 <= row < len(rows):
        return f"/{HOOK_KEY}/scope"
    kind = rows[row].kind
    if kind is TargetKind.MAIN:
        return f"/{HOOK_KEY}/include_main"
    if kind is TargetKind.LOOP:
        loops = sum(1 for r in rows[:row] if r.kind is TargetKind.LOOP)
        return f"/{HOOK_KEY}/loops/{loops}"
    return f"/{HOOK_KEY}/scope"
