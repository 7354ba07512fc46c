"""The question asked when a hook (the pre-LLM hook of the agent file, or the step hook or the
chains of hookstudio.json) was changed both outside the studio and in its editor: the two
versions side by side as a diff, and Keep mine / Take theirs / Cancel."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.workspace.hook_merge import NO_HOOK_TEXT, HookMerge, hook_diff
from studio.ui.result_style import heading, note, tint


class _DiffHighlighter(QSyntaxHighlighter):
    """Their lines on a red tint, ours on a green one; the file header lines stay plain."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._formats: dict[str, QTextCharFormat] = {}
        for mark, kind in (("-", "removed"), ("+", "added")):
            form = QTextCharFormat()
            color = tint(kind, 60)
            if color is not None:
                form.setBackground(color)
            self._formats[mark] = form

    def highlightBlock(self, text: str) -> None:
        if text.startswith(("---", "+++")) or not text:
            return
        form = self._formats.get(text[0])
        if form is not None:
            self.setFormat(0, len(text), form)


class HookConflictDialog(QDialog):
    """``done(KEEP_MINE)``, ``done(TAKE_THEIRS)``, or rejected for Cancel (nothing changes)."""

    KEEP_MINE = 2
    TAKE_THEIRS = 3

    def __init__(
        self,
        label: str,
        merge: HookMerge,
        *,
        saving: bool,
        parent: QWidget | None = None,
        what: str = "pre-LLM hook",
        absent: str = NO_HOOK_TEXT,
    ) -> None:
        """``label`` names the file, ``what`` the part of it in question; ``absent`` stands
        for a version in which the file has no such part."""
        super().__init__(parent)
        self.setObjectName("hookConflictDialog")
        self.setWindowTitle(f"The {what} changed in two places")
        self.merge = merge

        intro = heading(
            f"The {what} in {label} was changed outside the studio, and you have changed "
            "it too. Which version should stay?"
        )
        explain = note(
            f'Lines marked "-" are the version in {label} now, lines marked "+" are yours. '
            f"Whichever you choose, every other part of {label} keeps the outside change."
        )
        self.diff = QPlainTextEdit()
        self.diff.setObjectName("hookConflictDiff")
        self.diff.setReadOnly(True)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        diff = hook_diff(
            merge.theirs, merge.ours, f"{label} (changed outside)", "yours (unsaved)", absent
        )
        # The whole hook is one hunk: its line numbers say nothing here.
        shown = [line for line in diff.splitlines() if not line.startswith("@@")]
        self._highlighter = _DiffHighlighter(self.diff.document())
        self.diff.setPlainText("\n".join(shown))

        buttons = QDialogButtonBox()
        self.keep_button = QPushButton("&Keep mine")
        self.keep_button.setToolTip(
            f"Write your {what} to {label}, over the one changed outside"
            if saving
            else f"Keep editing your {what}; saving writes it to {label}"
        )
        self.take_button = QPushButton("&Take theirs")
        self.take_button.setToolTip(f"Show the {what} from {label}; Undo brings your version back")
        self.cancel_button = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setToolTip("Decide later: nothing is written, your edits stay")
        buttons.addButton(self.keep_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.take_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.keep_button.clicked.connect(lambda: self.done(self.KEEP_MINE))
        self.take_button.clicked.connect(lambda: self.done(self.TAKE_THEIRS))
        self.cancel_button.clicked.connect(self.reject)
        # Enter must not pick a side by accident.
        for button in (self.keep_button, self.take_button):
            button.setAutoDefault(False)
        self.cancel_button.setDefault(True)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(explain)
        layout.addWidget(self.diff, 1)
        layout.addWidget(buttons)
        self.resize(620, 420)
