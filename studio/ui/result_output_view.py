"""What the hook printed, for every run: stdout and stderr, each hook call of a chain apart, and
a mark where the worker's output was cut at the limit."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from studio.core.json.surrogates import escape_lone_surrogates
from studio.core.run_outcome import RunOutcome
from studio.core.shown_text import LINE_CHARS_SHOWN, cut_long_lines, keep_ends
from studio.core.workspace.atomic_write import write_atomically
from studio.ui.result_decision_view import step_name
from studio.ui.result_style import heading, set_accent

CUT_MARK = "… [cut: the output went past the limit; the rest was not kept]"
OUTPUT_CHARS_SHOWN = 1_000_000
"""Each stream shows at most this many characters, its start and its end; Export writes it all.
The output limit can be raised far past what a text view lays out at once."""


class _Stream(QWidget):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.title = heading(name)
        self.full = ""
        """The stream's whole text, as Export writes it."""
        self.export_button = QPushButton("Export…")
        self.export_button.setObjectName(f"{name}Export")
        self.export_button.setToolTip(f"Export all of {name} to a text file")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self.export)
        self.text = QPlainTextEdit()
        self.text.setObjectName(f"{name}Text")
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setPlaceholderText(f"(nothing on {name})")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.export_button)
        layout.addLayout(top)
        layout.addWidget(self.text)

    def show_text(self, text: str, truncated: bool, empty: str = "") -> None:
        """``empty``: what to say instead when there is no text."""
        self.text.setPlaceholderText(empty or f"(nothing on {self.name})")
        size = len(text)
        label = self.name if not text else f"{self.name} · {size:,} characters"
        if truncated:
            label += " · cut at the output limit"
            text = (text if text.endswith("\n") or not text else text + "\n") + CUT_MARK
        self.full = text
        shown, left_out = keep_ends(text, OUTPUT_CHARS_SHOWN)
        lines = cut_long_lines(escape_lone_surrogates(shown))  # Qt would drop them
        if left_out:
            label += f" · first and last {OUTPUT_CHARS_SHOWN // 2:,} shown"
        if lines.cut:
            label += f" · lines cut at {LINE_CHARS_SHOWN:,}"
        self.title.setText(label)
        self.title.setToolTip(_shown_in_part(left_out, len(lines.cut)))
        set_accent(self.title, "warning" if truncated else None)
        self.export_button.setEnabled(bool(text))
        self.text.setPlainText(lines.text)

    def export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, f"Export {self.name}", str(Path.home() / f"{self.name}.txt")
        )
        if not path:
            return
        try:
            write_atomically(path, escape_lone_surrogates(self.full).encode("utf-8"))
        except OSError as exc:
            QMessageBox.warning(
                self, f"Export {self.name}", f"{path} was not written: {exc.strerror or exc}"
            )


def _shown_in_part(left_out: int, long_lines: int) -> str:
    """What the view leaves out of a stream; empty when it shows all of it."""
    parts = []
    if left_out:
        parts.append(
            f"the middle {left_out:,} characters are not shown (the first and last "
            f"{OUTPUT_CHARS_SHOWN // 2:,} are)"
        )
    if long_lines:
        lines = "a line is" if long_lines == 1 else f"{long_lines:,} lines are"
        parts.append(f"{lines} cut at {LINE_CHARS_SHOWN:,} characters")
    if not parts:
        return ""
    said = "; ".join(parts)
    return f"{said[0].upper()}{said[1:]}; Export… writes all of it."


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
