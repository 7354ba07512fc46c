"""The model hook chains (``chain`` of hookstudio.json): the pre and post chains as ordered rows,
the selected row's hook and options, the default-validators switch, live findings and Save.

The draft is a core :class:`ChainDraft`; every edit replaces it through the editor's undo
stack and the view re-renders from it. Save is refused while the draft has an error."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.chain.builtins import DEFAULT_POST_HOOKS
from studio.core.chain.chain_draft import (
    CHAINS,
    ChainDraft,
    ChainRow,
    add_row,
    builtins_of,
    join_source,
    move_row,
    remove_row,
    set_row,
    split_source,
)
from studio.core.chain.config import DEFAULT_HOOK_TIMEOUT_MS, MAX_HOOK_TIMEOUT_MS, ChainName
from studio.core.findings import Finding, errors
from studio.core.hook_source_findings import FUNCTION_RULES
from studio.core.workspace.studio_config_edit import section_findings
from studio.ui.chain_rows_model import ChainRowsModel, ChainRowsView
from studio.ui.config_editor_parts import (
    ERROR_STYLE,
    findings_list,
    path_picker,
    scrolled_editor,
    set_choices,
    show_findings,
    source_row,
)
from studio.ui.draft_editor import SourcedDraftEditor

USER_HOOK = "Your own hook"
CHAIN_TITLES = {"pre": "Pre-model chain", "post": "Post-model chain"}
CHAIN_TIPS = {
    "pre": "Run top to bottom before the model call; each one gets the previous one's output",
    "post": "Run top to bottom after each model answer; each one gets the previous one's output",
}


def _button(text: str) -> QToolButton:
    """A compact button that Tab reaches like any other."""
    button = QToolButton()
    button.setText(text)
    button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    return button


class ChainEditor(SourcedDraftEditor):
    """Edits ``chain`` of hookstudio.json."""

    draft: ChainDraft

    MERGE_SOURCE, MERGE_TIMEOUT = 11, 12

    def __init__(self, undo_stack: QUndoStack, parent: QWidget | None = None) -> None:
        super().__init__(undo_stack, ChainDraft(), parent)
        self._selected: tuple[ChainName, int] | None = None

        self.notice = QLabel()
        self.notice.setObjectName("chainNotice")
        self.notice.setWordWrap(True)
        self.notice.hide()

        self.models: dict[ChainName, ChainRowsModel] = {}
        self.tables: dict[ChainName, ChainRowsView] = {}
        self.add_buttons: dict[ChainName, QToolButton] = {}
        self.remove_buttons: dict[ChainName, QToolButton] = {}
        self.up_buttons: dict[ChainName, QToolButton] = {}
        self.down_buttons: dict[ChainName, QToolButton] = {}
        boxes = {chain: self._chain_box(chain) for chain in CHAINS}

        self.defaults = QCheckBox("Then the default post validators")
        self.defaults.setObjectName("defaultPostValidators")
        self.defaults.setToolTip(
            "default_post_validators: "
            + " and ".join(DEFAULT_POST_HOOKS)
            + ", which Pleach registers by default, run after the hooks listed; one listed above "
            "runs there only"
        )
        self.post_order = QLabel()
        self.post_order.setObjectName("postRunOrder")
        self.post_order.setWordWrap(True)
        post_layout = boxes["post"].layout()
        assert isinstance(post_layout, QVBoxLayout)
        post_layout.addWidget(self.defaults)
        post_layout.addWidget(self.post_order)

        self.kind = QComboBox()
        self.kind.setObjectName("hookKind")
        self.kind.setToolTip("A built-in hook, or a hook of your own from a source file")
        self.source = path_picker("The hook's file, relative to the workspace")
        self.source.setObjectName("hookSource")
        self.function = QComboBox()
        self.function.setEditable(True)
        self.function.setObjectName("hookFunction")
        self.function.setMinimumContentsLength(6)
        self.function.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.function.setToolTip(
            "The function to call (a TypeScript or JavaScript module's default export, or main "
            "in Python, when none is named)"
        )
        source_fields = source_row(self.source, self.function)
        self.timeout = QLineEdit()
        self.timeout.setObjectName("hookTimeout")
        self.timeout.setPlaceholderText(f"{DEFAULT_HOOK_TIMEOUT_MS} (the default)")
        self.timeout.setToolTip(f"Whole milliseconds from 1 to {MAX_HOOK_TIMEOUT_MS}")
        self.selected_title = QGroupBox("Selected hook")
        form = QFormLayout(self.selected_title)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow("Hook", self.kind)
        form.addRow("Source", source_fields)
        form.addRow("Timeout (ms)", self.timeout)

        self.findings_list = findings_list()
        self.findings_list.setObjectName("chainFindings")
        findings_box = QGroupBox("Findings")
        QVBoxLayout(findings_box).addWidget(self.findings_list)

        self.save_button = QPushButton("Save chains")
        self.save_button.setObjectName("saveChains")
        self.save_button.setToolTip("Save the chains to hookstudio.json (Ctrl+S)")
        actions = QHBoxLayout()
        actions.addStretch(1)
        actions.addWidget(self.save_button)

        scrolled_editor(
            self,
            self.notice,
            [boxes["pre"], boxes["post"], self.selected_title, findings_box],
            actions,
        )

        self.defaults.toggled.connect(self._on_defaults_toggled)
        self.kind.activated.connect(self._on_kind_chosen)
        self.source.editTextChanged.connect(self._on_source_edited)
        self.function.editTextChanged.connect(self._on_source_edited)
        self.timeout.textEdited.connect(self._on_timeout_edited)
        self.save_button.clicked.connect(self.save_requested)
        self.findings_list.itemActivated.connect(self._on_finding_activated)
        self.show_draft(self.draft)

    def _chain_box(self, chain: ChainName) -> QGroupBox:
        model = ChainRowsModel(chain, lambda s, d, c=chain: self._on_move(c, s, d))  # type: ignore[misc]
        table = ChainRowsView()
        table.setObjectName(f"{chain}Chain")
        table.setModel(model)
        table.setAccessibleName(f"{chain.capitalize()}-model hooks")
        add = _button("+ Add")
        add.setObjectName(f"add{chain.capitalize()}Hook")
        add.setToolTip("Add a hook at the end of this chain (Insert in the table)")
        add.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(add)
        for name in builtins_of(chain):
            menu.addAction(name, self._adder(chain, ChainRow.builtin(name)))
        menu.addSeparator()
        menu.addAction(USER_HOOK, self._adder(chain, ChainRow.user()))
        add.setMenu(menu)
        remove = _button("Remove")
        remove.setToolTip("Remove the selected hook (Delete)")
        up = _button("Up")
        up.setToolTip("Run the selected hook earlier (Alt+Up)")
        down = _button("Down")
        down.setToolTip("Run the selected hook later (Alt+Down)")
        buttons = QHBoxLayout()
        for button in (add, remove, up, down):
            buttons.addWidget(button)
        buttons.addStretch(1)
        box = QGroupBox(CHAIN_TITLES[chain])
        box.setToolTip(CHAIN_TIPS[chain])
        box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        layout = QVBoxLayout(box)
        layout.addWidget(table)
        layout.addLayout(buttons)

        table.add_requested.connect(lambda c=chain: self.add_hook(c, ChainRow.user()))
        table.remove_requested.connect(lambda row, c=chain: self.remove_hook(c, row))
        table.move_requested.connect(lambda s, d, c=chain: self._on_move(c, s, d))
        table.selectionModel().currentRowChanged.connect(
            lambda current, _previous, c=chain: self._on_current_row(c, current.row())
        )
        remove.clicked.connect(lambda _=False, c=chain: self._remove_selected(c))
        up.clicked.connect(lambda _=False, c=chain: self.tables[c].move_current(-1))
        down.clicked.connect(lambda _=False, c=chain: self.tables[c].move_current(1))
        self.models[chain], self.tables[chain] = model, table
        self.add_buttons[chain], self.remove_buttons[chain] = add, remove
        self.up_buttons[chain], self.down_buttons[chain] = up, down
        return box

    # ---- edits ----------------------------------------------------------------------------
    def add_hook(self, chain: ChainName, row: ChainRow) -> None:
        rows = self.draft.rows(chain)
        self.apply(self.draft.with_rows(chain, add_row(rows, row)), "Add hook")
        self._select(chain, len(rows))
        if row.kind == "user":
            self.source.setFocus()

    def _adder(self, chain: ChainName, row: ChainRow) -> Callable[..., None]:
        return lambda *_: self.add_hook(chain, row)

    def remove_hook(self, chain: ChainName, row: int) -> None:
        rows = self.draft.rows(chain)
        if 0 <= row < len(rows):
            self.apply(self.draft.with_rows(chain, remove_row(rows, row)), "Remove hook")
            if rows[1:]:
                self._select(chain, min(row, len(rows) - 2))

    def _remove_selected(self, chain: ChainName) -> None:
        index = self.tables[chain].currentIndex()
        if index.isValid():
            self.remove_hook(chain, index.row())

    def _on_move(self, chain: ChainName, source: int, destination: int) -> None:
        rows = self.draft.rows(chain)
        if source == destination or not (0 <= source < len(rows) and 0 <= destination < len(rows)):
            return
        self.apply(self.draft.with_rows(chain, move_row(rows, source, destination)), "Move hook")
        self._select(chain, destination)

    def _on_defaults_toggled(self, on: bool) -> None:
        if self._showing:
            return
        self.apply(
            replace(self.draft, default_post_validators=on),
            "Default post validators " + ("on" if on else "off"),
        )

    def _selected_row(self) -> tuple[ChainName, int, ChainRow] | None:
        if self._selected is None:
            return None
        chain, index = self._selected
        rows = self.draft.rows(chain)
        return (chain, index, rows[index]) if 0 <= index < len(rows) else None

    def _replace_selected(self, row: ChainRow, text: str, merge: int = -1) -> None:
        selected = self._selected_row()
        if selected is None:
            return
        chain, index, _ = selected
        rows = set_row(self.draft.rows(chain), index, row)
        self.apply(self.draft.with_rows(chain, rows), text, merge)

    def _on_kind_chosen(self, position: int) -> None:
        selected = self._selected_row()
        if selected is None:
            return
        _, _, row = selected
        name = self.kind.itemText(position)
        if name == USER_HOOK:
            new = row if row.kind == "user" else ChainRow.user()
        else:
            new = ChainRow.builtin(name)
        self._replace_selected(new, "Change hook")
        if new.kind == "user":
            self.source.setFocus()

    def _on_source_edited(self, _text: str) -> None:
        selected = self._selected_row()
        if self._showing or selected is None or selected[2].kind != "user":
            return
        row = selected[2]
        source = join_source(self.source.currentText(), self.function.currentText())
        new = replace(row, name=source)
        self._replace_selected(new, "Edit hook source", self.MERGE_SOURCE)

    def _on_timeout_edited(self, text: str) -> None:
        selected = self._selected_row()
        if selected is None or selected[2].kind != "user":
            return
        row = selected[2]
        new = replace(row, timeout=text)
        self._replace_selected(new, "Edit hook timeout", self.MERGE_TIMEOUT)

    def _on_current_row(self, chain: ChainName, row: int) -> None:
        if self._showing:
            return
        if row >= 0:
            other: ChainName = "post" if chain == "pre" else "pre"
            self.tables[other].clearSelection()
        self._selected = (chain, row) if row >= 0 else None
        self._render_selected()

    def _select(self, chain: ChainName, row: int) -> None:
        table = self.tables[chain]
        index = self.models[chain].index(row, 0)
        if index.isValid():
            table.setCurrentIndex(index)
            self._selected = (chain, row)
            self._render_selected()

    def _on_finding_activated(self, item: QListWidgetItem) -> None:
        pointer = item.data(Qt.ItemDataRole.UserRole) or ""
        parts = pointer.split("/")[1:]
        if len(parts) >= 3 and parts[1] in CHAINS and parts[2].isdigit():
            chain: ChainName = "pre" if parts[1] == "pre" else "post"
            self._select(chain, int(parts[2]))
            field = parts[3] if len(parts) > 3 else ""
            if item.data(Qt.ItemDataRole.UserRole + 1) in FUNCTION_RULES:
                self.function.setFocus()
            elif field == "source":
                self.source.setFocus()
            else:
                (self.timeout if field == "timeout_ms" else self.tables[chain]).setFocus()
        elif pointer.endswith("default_post_validators"):
            self.defaults.setFocus()

    # ---- rendering ------------------------------------------------------------------------
    def _check(self, draft: ChainDraft) -> list[Finding]:
        value = draft.value()
        found = section_findings("chain", value)
        if self._source_check is not None:
            found += self._source_check(value)
        return errors(found) + [f for f in found if f.severity != "error"]

    def _render(self) -> None:
        draft = self.draft
        self.findings = self._check(draft)
        self._showing = True
        try:
            for chain in CHAINS:
                self.models[chain].set_rows(draft.rows(chain))
                problems: dict[int, str] = {}
                for finding in self.findings:
                    path = finding.path
                    if len(path) >= 3 and path[1] == chain and isinstance(path[2], int):
                        problems.setdefault(path[2], finding.message)
                self.models[chain].set_problems(problems)
            self.defaults.setChecked(draft.default_post_validators)
        finally:
            self._showing = False
        self.post_order.setText(
            "Post chain as it runs: " + (" → ".join(draft.post_run_order()) or "no hooks")
        )
        show_findings(self.findings_list, self.findings, "No problems: the chains can be saved")
        self.save_button.setEnabled(self.valid)
        for chain in CHAINS:
            has_rows = bool(draft.rows(chain))
            self.remove_buttons[chain].setEnabled(has_rows)
            self.up_buttons[chain].setEnabled(len(draft.rows(chain)) > 1)
            self.down_buttons[chain].setEnabled(len(draft.rows(chain)) > 1)
        self._render_selected()

    def _render_selected(self) -> None:
        selected = self._selected_row()
        self._showing = True
        try:
            self.selected_title.setEnabled(selected is not None)
            if selected is None:
                self.selected_title.setTitle("Selected hook (choose a row above)")
                self.kind.clear()
                set_choices(self.source, self._sources, "")
                set_choices(self.function, [], "")
                self.timeout.setText("")
                return
            chain, index, row = selected
            self.selected_title.setTitle(f"Selected hook: {chain}[{index}]")
            choices = [*builtins_of(chain), USER_HOOK]
            if [self.kind.itemText(i) for i in range(self.kind.count())] != choices:
                self.kind.clear()
                self.kind.addItems(choices)
            self.kind.setCurrentText(row.name if row.kind == "builtin" else USER_HOOK)
            user = row.kind == "user"
            for widget in (self.source, self.function, self.timeout):
                widget.setEnabled(user)
            path, function = split_source(row.name) if user else ("", "")
            if user and self.source.currentText().strip() and row.name:
                # What the user is typing stays as typed (``lib/x.py:main`` is the same hook).
                typed = join_source(self.source.currentText(), self.function.currentText())
                if typed == row.name:
                    path, function = self.source.currentText(), self.function.currentText()
            listed = self._functions(path) if self._functions is not None and path else None
            set_choices(self.source, self._sources, path)
            set_choices(self.function, list(listed or ()), function)
            if self.timeout.text() != row.timeout:
                self.timeout.setText(row.timeout if user else "")
            mine = [f for f in errors(self.findings) if f.path[:3] == ("chain", chain, index)]
            fields = {
                "function" if f.rule in FUNCTION_RULES else f.path[3]
                for f in mine
                if len(f.path) > 3
            }
            self.source.setStyleSheet(ERROR_STYLE if "source" in fields else "")
            self.function.setStyleSheet(ERROR_STYLE if "function" in fields else "")
            self.timeout.setStyleSheet(ERROR_STYLE if "timeout_ms" in fields else "")
        finally:
            self._showing = False
