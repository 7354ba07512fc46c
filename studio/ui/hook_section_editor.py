"""A hook named by its source in hookstudio.json (``step``, ``invocation``): its source file and
function, the time rule it runs under, live findings and Save.

Which section the editor edits is a core :class:`HookSourceSection`; the draft is a core
:class:`HookSourceDraft`, and every edit replaces it through the editor's undo stack and the
view re-renders from it. Save is refused while the draft has an error."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.findings import errors
from studio.core.hook_source_findings import FUNCTION_RULES
from studio.core.hook_source_section import HookSourceDraft, HookSourceSection
from studio.core.workspace.studio_config_edit import section_findings
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


class HookSectionEditor(SourcedDraftEditor):
    """Edits one hook section of hookstudio.json; object names start with its key
    (``stepSource``, ``invocationSource``)."""

    draft: HookSourceDraft

    MERGE_SOURCE = 21

    def __init__(
        self, section: HookSourceSection, undo_stack: QUndoStack, parent: QWidget | None = None
    ) -> None:
        super().__init__(undo_stack, HookSourceDraft(), parent)
        self.section = section

        self.notice = QLabel()
        key = section.key
        self.notice.setObjectName(f"{key}Notice")
        self.notice.setWordWrap(True)
        self.notice.hide()

        self.source = path_picker(f"The {section.noun}'s file, relative to the workspace")
        self.source.setObjectName(f"{key}Source")
        self.source.setPlaceholderText("none")
        self.function = QComboBox()
        self.function.setEditable(True)
        self.function.setObjectName(f"{key}Function")
        self.function.setMinimumContentsLength(6)
        self.function.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.function.setToolTip(section.function_tip)
        self.clear_button = QPushButton(f"No {section.noun}")
        self.clear_button.setObjectName(f"clear{key.title()}Hook")
        self.clear_button.setToolTip(f"Clear the source: no {section.noun}")
        self.deadline = QLabel(section.rule)
        self.deadline.setObjectName(f"{key}Deadline")
        self.deadline.setWordWrap(True)
        self.deadline.setToolTip(section.rule_tip)
        box = QGroupBox(section.title)
        form = QFormLayout(box)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow("Source", source_row(self.source, self.function))
        form.addRow("", self.clear_button)
        form.addRow("Deadline", self.deadline)

        self.findings_list = findings_list()
        self.findings_list.setObjectName(f"{key}Findings")
        findings_box = QGroupBox("Findings")
        QVBoxLayout(findings_box).addWidget(self.findings_list)

        self.save_button = QPushButton(f"Save {section.noun}")
        self.save_button.setObjectName(f"save{key.title()}")
        self.save_button.setToolTip(f"Save the {section.noun} to hookstudio.json (Ctrl+S)")
        actions = QHBoxLayout()
        actions.addStretch(1)
        actions.addWidget(self.save_button)

        scrolled_editor(self, self.notice, [box, findings_box], actions)

        self.source.editTextChanged.connect(self._on_source_edited)
        self.function.editTextChanged.connect(self._on_source_edited)
        self.clear_button.clicked.connect(self._on_clear)
        self.save_button.clicked.connect(self.save_requested)
        self.findings_list.itemActivated.connect(self._on_finding_activated)
        self.show_draft(self.draft)

    # ---- edits ----------------------------------------------------------------------------
    def _on_source_edited(self, _text: str) -> None:
        if self._showing:
            return
        source = self.section.join(self.source.currentText(), self.function.currentText())
        self.apply(
            HookSourceDraft(source, self.draft.base),
            f"Edit {self.section.noun} source",
            self.MERGE_SOURCE,
        )

    def _on_clear(self) -> None:
        self.apply(HookSourceDraft("", self.draft.base), f"No {self.section.noun}")

    def _on_finding_activated(self, item: QListWidgetItem) -> None:
        rule = item.data(Qt.ItemDataRole.UserRole + 1)
        (self.function if rule in FUNCTION_RULES else self.source).setFocus()

    # ---- rendering ------------------------------------------------------------------------
    def _render(self) -> None:
        draft = self.draft
        path, function = self.section.split(draft.source)
        found = section_findings(self.section.key, draft.value())
        if self._source_check is not None:
            found += self._source_check(draft.value())
        self.findings = errors(found) + [f for f in found if f.severity != "error"]
        self._showing = True
        try:
            typed = self.section.join(self.source.currentText(), self.function.currentText())
            if draft.source and typed == draft.source:
                # What the user is typing stays as typed (``lib/x.py:main`` is the same hook).
                path, function = self.source.currentText(), self.function.currentText()
            listed = self._functions(path) if self._functions is not None and path else None
            set_choices(self.source, self._sources, path)
            set_choices(self.function, list(listed or ()), function)
        finally:
            self._showing = False
        function_errors = [f for f in errors(self.findings) if f.rule in FUNCTION_RULES]
        self.source.setStyleSheet(
            ERROR_STYLE if len(errors(self.findings)) > len(function_errors) else ""
        )
        self.function.setStyleSheet(ERROR_STYLE if function_errors else "")
        ok = (
            f"No problems: the {self.section.noun} can be saved"
            if draft.source
            else self.section.absent_note
        )
        show_findings(self.findings_list, self.findings, ok)
        self.clear_button.setEnabled(bool(draft.source))
        self.save_button.setEnabled(self.valid)
