"""The Provider request tab of a pre-LLM run: the body a chosen provider would receive after the
hook (ADF's own steps, then the provider's wire format), and above it the prompt-cache check,
where the sent request stops sharing the original's prefix.

The body is built when the tab is on show or its provider changes, not for every run shown;
only the lines on screen are coloured, so a long conversation costs what fits in the view."""

from __future__ import annotations

import json

from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QFontDatabase, QShowEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from studio.core.provider.cache_check import APPENDED, MESSAGE, REMOVED, THINKING, UNCHANGED
from studio.core.provider.preview import PROVIDERS
from studio.core.provider.run_preview import RunPreview, run_preview
from studio.core.run_outcome import RunOutcome
from studio.ui.json_highlighter import VisibleHighlighter, json_theme
from studio.ui.result_style import heading, note, set_accent

PROVIDER_TITLE = "Provider request"
PROVIDER_TIP = "The body the provider would receive after the hook, and what it costs the cache"
MODEL_NOTE = "The model is left out: it comes from the agent's config, not from the request."
_ACCENTS = {
    UNCHANGED: "ok",
    APPENDED: "ok",
    MESSAGE: "warning",
    REMOVED: "warning",
    THINKING: "warning",
}


class ProviderView(QWidget):
    """Signals: ``provider_changed(name)`` when the user picks another provider."""

    provider_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.outcome: RunOutcome | None = None
        self.preview: RunPreview | None = None
        self._payload_cleared = False
        self._stale = False

        self.choice = QComboBox()
        self.choice.setObjectName("providerChoice")
        for name, (title, _) in PROVIDERS.items():
            self.choice.addItem(title, name)
        self.choice.setToolTip("The provider (wire format) ADF would call")
        label = QLabel("&Provider")
        label.setBuddy(self.choice)
        self.cache = heading()
        self.cache.setObjectName("cacheCheck")
        self.notes = note()
        self.notes.setObjectName("providerNotes")
        self.text = QPlainTextEdit()
        self.text.setObjectName("providerBody")
        self.text.setReadOnly(True)
        self.text.setTabChangesFocus(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.highlighter = VisibleHighlighter(self.text, json_theme(self.text.palette()))

        top = QHBoxLayout()
        top.addWidget(label)
        top.addWidget(self.choice, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.cache)
        layout.addWidget(self.notes)
        layout.addWidget(self.text, 1)
        self.choice.currentIndexChanged.connect(self._on_choice_changed)
        self.clear("No run yet.")

    @property
    def provider(self) -> str:
        return str(self.choice.currentData())

    def set_provider(self, name: str) -> None:
        index = self.choice.findData(name)
        if index >= 0:
            self.choice.setCurrentIndex(index)

    def show_outcome(self, outcome: RunOutcome, *, payload_cleared: bool = False) -> None:
        self.outcome = outcome
        self._payload_cleared = payload_cleared
        self._stale = True
        if self.isVisible():
            self.refresh()

    def clear(self, text: str) -> None:
        self.outcome = None
        self.preview = None
        self._stale = False
        self._show_words(text, None)
        self.notes.hide()
        self.text.clear()

    def refresh(self) -> None:
        """Build the body for the run and provider on show."""
        self._stale = False
        outcome = self.outcome
        if outcome is None:
            return
        if self._payload_cleared:
            self.preview = None
            self._show_words("Payload cleared: this run no longer has its request.", None)
            self.notes.hide()
            self.text.clear()
            return
        self.preview = preview = run_preview(outcome, self.provider)
        if preview.body is None:
            self._show_words(f"Nothing to show: {preview.reason}.", None)
            self.notes.hide()
            self.text.clear()
            return
        if preview.cache is None:
            self._show_words("Prompt cache: the run keeps no input request to compare.", None)
        else:
            kind = _ACCENTS.get(preview.cache.kind, "error")
            self._show_words(f"Prompt cache: {preview.cache.text}", kind)
        notes = [MODEL_NOTE, *preview.body.notes]
        self.notes.setText("\n".join(notes))
        self.notes.show()
        self.text.setPlainText(json.dumps(preview.body.body, indent=2, ensure_ascii=False))
        self.highlighter.set_active(True)

    def _show_words(self, text: str, kind: str | None) -> None:
        self.cache.setText(text)
        set_accent(self.cache, kind)

    def _on_choice_changed(self, _index: int) -> None:
        self.provider_changed.emit(self.provider)
        if self.outcome is not None:
            self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        kinds = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
        if event.type() in kinds and hasattr(self, "highlighter"):
            self.highlighter.set_theme(json_theme(self.text.palette()))
