"""What the user sees of the sample being edited: a title with the contract and Save, the disk
notice, the JSON editor (one per open sample, in a stack) and the structured view in tabs, the
problems, and a status line. It only shows what :mod:`.open_samples` tells it to."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QPalette, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.registry import CONTRACTS
from studio.core.workspace.sample_check import Problem, SampleCheck
from studio.ui.json_highlighter import json_theme
from studio.ui.samples.disk_notice import DiskNotice
from studio.ui.samples.json_text_edit import JsonTextEdit, jump_mark, problem_marks, span
from studio.ui.samples.layout_notice import LayoutNotice
from studio.ui.samples.problems import ProblemList
from studio.ui.samples.structure_model import StructureView

# At most this many problems are marked in the text.
MAX_MARKS = 200
STRUCTURE_TAB = 1


class SampleView(QWidget):
    theme_changed = Signal()  # the palette changed the JSON colours (``theme``)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = json_theme(self.palette())
        self._jump_marks: list[QTextEdit.ExtraSelection] = []
        self._problem_marks: list[QTextEdit.ExtraSelection] = []

        # Ctrl+S is taken by the editor itself while it has the focus (JsonTextEdit); here it is
        # only shown, so it never competes with the window's own Save shortcut.
        save_keys = QKeySequence(QKeySequence.StandardKey.Save).toString(
            QKeySequence.SequenceFormat.NativeText
        )
        self.save_action = QAction(f"Save\t{save_keys}", self)
        self.save_action.setToolTip(f"Save the sample ({save_keys} in the editor)")

        self.title = QLabel()
        self.title.setObjectName("sampleTitle")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self.contract_label = QLabel()
        self.contract_label.setObjectName("sampleContract")
        self.save_button = QToolButton()
        self.save_button.setObjectName("saveSample")
        self.save_button.setText("Save")
        self.save_button.setToolTip(self.save_action.toolTip())
        header = QHBoxLayout()
        header.addWidget(self.title)
        header.addWidget(self.contract_label)
        header.addStretch(1)
        header.addWidget(self.save_button)

        self.notice = DiskNotice()
        self.layout_notice = LayoutNotice()

        # One editor per open sample: switching samples shows another editor instead of swapping
        # documents, which would lay a large text out again on the GUI thread.
        self.editor_stack = QStackedWidget()
        self.editor_stack.setObjectName("sampleEditors")
        self.blank = self.new_text_edit()
        self.blank.setReadOnly(True)

        self.structure = StructureView()
        self.tabs = QTabWidget()
        self.tabs.setObjectName("sampleTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.editor_stack, "JSON")
        self.tabs.addTab(self.structure, "Structure")

        self.problems = ProblemList()

        self.status = QLabel()
        self.status.setObjectName("sampleStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.position = QLabel()
        self.position.setObjectName("cursorPosition")
        status_row = QHBoxLayout()
        status_row.addWidget(self.status, 1)
        status_row.addWidget(self.position)

        self.vertical = QSplitter(Qt.Orientation.Vertical)
        self.vertical.addWidget(self.tabs)
        self.vertical.addWidget(self.problems)
        self.vertical.setStretchFactor(0, 4)
        self.vertical.setStretchFactor(1, 1)
        self.vertical.setSizes([520, 110])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(header)
        layout.addWidget(self.notice)
        layout.addWidget(self.layout_notice)
        layout.addWidget(self.vertical, 1)
        layout.addLayout(status_row)
        self._apply_theme_to_widgets()

    # ---- the editors -------------------------------------------------------------------------
    def new_text_edit(self) -> JsonTextEdit:
        view = JsonTextEdit()
        view.setObjectName("sampleText")
        view.theme = self.theme
        view.visible_highlighter.set_theme(self.theme)
        self.editor_stack.addWidget(view)
        return view

    def drop_text_edit(self, view: JsonTextEdit) -> None:
        if view is self.blank:
            return
        if self.editor_stack.currentWidget() is view:
            self.editor_stack.setCurrentWidget(self.blank)
        self.editor_stack.removeWidget(view)
        view.deleteLater()

    @property
    def editor(self) -> JsonTextEdit:
        """The editor on screen: the current sample's, or an empty one."""
        view = self.editor_stack.currentWidget()
        assert isinstance(view, JsonTextEdit)
        return view

    def show_text_edit(self, view: JsonTextEdit) -> None:
        self.editor_stack.setCurrentWidget(view)

    def focus_text(self) -> None:
        self.tabs.setCurrentIndex(0)
        self.editor.setFocus()

    def structure_shown(self) -> bool:
        return self.tabs.currentIndex() == STRUCTURE_TAB

    # ---- what is shown -------------------------------------------------------------------------
    def show_empty(self, message: str) -> None:
        """No sample: ``message`` where the text would be, no problems, structure or notice."""
        self.show_text_edit(self.blank)
        self.blank.setPlaceholderText(message)
        self.problems.clear()
        self.structure.clear()
        self.notice.hide()
        self.layout_notice.hide()
        self.position.setText("")

    def show_title(
        self, name: str | None, path: Path | None = None, modified: bool = False, contract: str = ""
    ) -> None:
        if name is None:
            self.title.setText("No sample")
            self.contract_label.setText("")
            return
        self.title.setText(f"{name}{' ●' if modified else ''}")
        self.title.setToolTip(str(path))
        known = CONTRACTS.get(contract) if contract else None
        self.contract_label.setText(f"· {known.label}" if known else "")

    def set_can_save(self, can: bool) -> None:
        self.save_action.setEnabled(can)
        self.save_button.setEnabled(can)

    def show_check(self, view: JsonTextEdit, check: SampleCheck | None) -> None:
        """List ``check``'s problems and mark them in ``view`` (its line numbers and its text)."""
        view.error_lines = {}
        self._problem_marks = []
        if check is None:
            self.problems.clear(title=None)
            self._apply_marks()
            return
        self.problems.show_check(check)
        document = view.document()
        for k, problem in enumerate(check.problems):
            line = problem.line - 1
            if view.error_lines.get(line) != "error":
                view.error_lines[line] = problem.severity
            if k < MAX_MARKS:
                self._problem_marks.extend(problem_marks(document, problem, self.theme))
        self._apply_marks()
        view.refresh_gutter()

    def forget_jump(self) -> None:
        """The value jumped to is no longer highlighted (once the marks are applied again)."""
        self._jump_marks = []

    def clear_jump(self) -> None:
        if self._jump_marks:
            self._jump_marks = []
            self._apply_marks()

    def jump(self, document: QTextDocument, problem: Problem) -> None:
        """Put the cursor on ``problem``'s value and highlight it."""
        start, end = span(document, problem)
        self.tabs.setCurrentIndex(0)
        cursor = QTextCursor(document)
        cursor.setPosition(start)
        self.editor.setTextCursor(cursor)
        self.editor.centerCursor()
        self.editor.setFocus()
        self._jump_marks = [jump_mark(document, start, end, self.theme)]
        self._apply_marks()

    def _apply_marks(self) -> None:
        self.editor.setExtraSelections(self._problem_marks + self._jump_marks)

    def show_notice(self, where: str, kind: str | None) -> None:
        if kind is None:
            self.notice.hide()
        else:
            self.notice.show_notice(where, kind)

    def show_layout_notice(self, where: str, longest: int) -> None:
        """Say that ``where`` is shown indented, its longest line having ``longest`` characters;
        0 hides the bar."""
        if longest:
            self.layout_notice.show_notice(where, longest)
        else:
            self.layout_notice.hide()

    def show_position(self, active: bool) -> None:
        """The cursor's line and column (in characters), while a sample is in the editor."""
        cursor = self.editor.textCursor()
        if not active:
            self.position.setText("")
            return
        block = cursor.block()
        column = cursor.positionInBlock()
        text = block.text()
        if not text.isascii():  # Qt counts UTF-16 units; show characters
            column = len(text.encode("utf-16-le")[: column * 2].decode("utf-16-le", "ignore"))
        self.position.setText(f"Ln {block.blockNumber() + 1}, Col {column + 1}")

    def say(self, message: str, error: bool = False) -> None:
        """Put ``message`` on the status line (in the error colour when ``error``)."""
        self.status.setText(message)
        self.status.setToolTip(message)
        palette = self.status.palette()
        colour = self.theme.error if error else self.palette().color(QPalette.ColorRole.WindowText)
        palette.setColor(QPalette.ColorRole.WindowText, colour)
        self.status.setPalette(palette)

    # ---- colours ---------------------------------------------------------------------------------
    def _apply_theme_to_widgets(self) -> None:
        window = self.palette().color(QPalette.ColorRole.Window)
        self.notice.set_colours(window, self.theme.warning)
        self.layout_notice.set_colours(window, self.palette().color(QPalette.ColorRole.Highlight))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if not hasattr(self, "editor_stack"):
            return  # still being built
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            theme = json_theme(self.palette())
            if theme == self.theme:
                return
            self.theme = theme
            for k in range(self.editor_stack.count()):
                view = self.editor_stack.widget(k)
                if isinstance(view, JsonTextEdit):
                    view.theme = theme
                    view.visible_highlighter.set_theme(theme)
            self._apply_theme_to_widgets()
            self.theme_changed.emit()
