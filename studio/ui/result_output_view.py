"""What the hook printed, for every run: stdout and stderr, each hook call of a chain apart, and
a mark where the worker's output was cut at the limit."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit, QSplitter, QVBoxLayout, QWidget

from studio.core.json.surrogates import escape_lone_surrogates
from studio.core.run_outcome import RunOutcome
from studio.ui.result_decision_view import step_name
from studio.ui.result_style import heading, set_accent

CUT_MARK = "… [cut: the output went past the limit; the rest was not kept]"


class _Stream(QWidget):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.title = heading(name)
        self.text = QPlainTextEdit()
        self.text.setObjectName(f"{name}Text")
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setPlaceholderText(f"(nothing on {name})")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.text)

    def show_text(self, text: str, truncated: bool, empty: str = "") -> None:
        """``empty``: what to say instead when there is no text."""
        self.text.setPlaceholderText(empty or f"(nothing on {self.name})")
        size = len(text)
        label = self.name if not text else f"{self.name} · {size:,} characters"
        if truncated:
            label += " · cut at the output limit"
            text = (text if text.endswith("\n") or not text else text + "\n") + CUT_MARK
        self.title.setText(label)
        set_accent(self.title, "warning" if truncated else None)
        self.text.setPlainText(escape_lone_surrogates(text))  # Qt would drop them


class OutputView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stdout = _Stream("stdout")
        self.stderr = _Stream("stderr")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.stdout)
        split.addWidget(self.stderr)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

    def clear(self, empty: str = "") -> None:
        self.stdout.show_text("", False, empty)
        self.stderr.show_text("", False, empty)

    def show_outcome(self, outcome: RunOutcome, *, payload_cleared: bool = False) -> None:
        empty = "(cleared with the payload)" if payload_cleared else ""
        for stream in (self.stdout, self.stderr):
            text = _by_hook(outcome, stream.name) if outcome.chain else ""
            truncated = getattr(outcome, f"{stream.name}_truncated")
            stream.show_text(text or getattr(outcome, stream.name), truncated, empty)

    @property
    def stdout_text(self) -> str:
        return self.stdout.text.toPlainText()

    @property
    def stderr_text(self) -> str:
        return self.stderr.text.toPlainText()


def _by_hook(outcome: RunOutcome, stream: str) -> str:
    """Each hook call's output under its own line; empty when no call kept any."""
    parts: list[str] = []
    for step in outcome.chain:
        text = getattr(step, stream)
        if text:
            head = f"── {step_name(step)} {step.hook} (attempt {step.attempt}) ──"
            parts.append(head + "\n" + text + ("" if text.endswith("\n") else "\n"))
    return "".join(parts)
