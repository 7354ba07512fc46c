"""The Provider request tab of a pre-LLM run: the body a chosen provider would receive after the
hook (ADF's own steps, then the provider's wire format), and above it the prompt-cache check,
where the sent request stops sharing the original's prefix.

The body is built when the tab is on show or its provider changes, not for every run shown, and
off the GUI thread (a 2 MB request takes ~200 ms to convert and compare); a build for a run or
provider no longer on show is dropped. Only the lines on screen are coloured. A body longer than
one piece of text is shown up to that piece, with "Show all" to add the rest a piece per turn of
the event loop: a piece of 200,000 characters holds the GUI thread ~10-25 ms, where the 2.5 M of
a 2 MB request's body held it ~175 ms in one go.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.core.provider.cache_check import APPENDED, MESSAGE, REMOVED, THINKING, UNCHANGED
from studio.core.provider.preview import PROVIDERS
from studio.core.provider.run_preview import RunPreview, run_preview
from studio.core.run_outcome import RunOutcome
from studio.ui.engine_bridge import EngineBridge, Job
from studio.ui.json_copy import copy_action, copy_button, copy_json
from studio.ui.json_highlighter import VisibleHighlighter, json_theme
from studio.ui.result_style import heading, note, set_accent

PIECE_CHARS = 200_000
"""The most text put into the view in one turn of the event loop."""
BUILDING = "Building…"
MODEL_NOTE = "The model is left out: it comes from the agent's config, not from the request."
_ACCENTS = {
    UNCHANGED: "ok",
    APPENDED: "ok",
    MESSAGE: "warning",
    REMOVED: "warning",
    THINKING: "warning",
}


@dataclass(frozen=True)
class BuiltPreview:
    preview: RunPreview
    text: str
    """The body as indented JSON ("" when there is none)."""


def build_preview(outcome: RunOutcome, provider: str) -> BuiltPreview:
    """The tab's content for ``outcome`` sent to ``provider``, made off the GUI thread."""
    preview = run_preview(outcome, provider)
    body = preview.body
    text = json.dumps(body.body, indent=2, ensure_ascii=False) if body is not None else ""
    return BuiltPreview(preview, text)


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """``text`` cut at line ends into pieces of about ``size`` characters, without the line
    end between two pieces (the view starts each piece on a line of its own)."""
    cut: list[str] = []
    start = 0
    while len(text) - start > size:
        end = text.rfind("\n", start, start + size)
        if end <= start:
            end = text.find("\n", start + size)
            if end < 0:
                break
        cut.append(text[start:end])
        start = end + 1
    cut.append(text[start:])
    return cut


class ProviderView(QWidget):
    """Signals: ``provider_changed(name)`` when the user picks another provider,
    ``preview_shown()`` when a build has been put on show (the body's first piece, or why there
    is none), ``body_filled()`` when the whole body is in the view."""

    provider_changed = Signal(str)
    preview_shown = Signal()
    body_filled = Signal()

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self.outcome: RunOutcome | None = None
        self.preview: RunPreview | None = None
        self._payload_cleared = False
        self._stale = False
        self.build_job: Job | None = None
        """The build in progress for the run and provider on show."""
        self._rest: list[str] = []
        self._fill = QTimer(self)
        self._fill.setInterval(0)
        self._fill.timeout.connect(self._on_fill_tick)

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
        self.elided = note()
        self.elided.setObjectName("providerElided")
        self.show_all = QPushButton("Show &all")
        self.show_all.setObjectName("providerShowAll")
        self.show_all.setToolTip("Put the whole body in the view, a piece at a time")
        self.show_all.clicked.connect(self._on_show_all_clicked)
        more = QHBoxLayout()
        more.addWidget(self.elided, 1)
        more.addWidget(self.show_all)

        self.copy_action = copy_action(
            self, self.copy_json, "Copy the whole provider request body as JSON"
        )
        self.copy_action.setEnabled(False)
        top = QHBoxLayout()
        top.addWidget(label)
        top.addWidget(self.choice, 1)
        top.addWidget(copy_button(self.copy_action, "copyProviderBody"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.cache)
        layout.addWidget(self.notes)
        layout.addWidget(self.text, 1)
        layout.addLayout(more)
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
        self._drop_build()
        if self.isVisible():
            self.refresh()

    def clear(self, text: str) -> None:
        self.outcome = None
        self.preview = None
        self._stale = False
        self._drop_build()
        self._show_words(text, None)
        self.notes.hide()
        self._set_text("")

    def copy_json(self) -> str | None:
        """Put the whole provider request body on the clipboard as JSON text (the view may show
        only its first part)."""
        if self.preview is None or self.preview.body is None:
            return None
        return copy_json(self.preview.body.body)

    @property
    def building(self) -> bool:
        return self.build_job is not None

    @property
    def filling(self) -> bool:
        """Whether pieces of the body are still being added to the view."""
        return bool(self._rest) and self._fill.isActive()

    def refresh(self) -> None:
        """Build the body for the run and provider on show, off the GUI thread."""
        self._stale = False
        self._drop_build()
        outcome = self.outcome
        if outcome is None:
            return
        self.preview = None
        self.notes.hide()
        self._set_text("")
        if self._payload_cleared:
            self._show_words("Payload cleared: this run no longer has its request.", None)
            self.preview_shown.emit()
            return
        self._show_words(BUILDING, None)
        job = self._bridge.submit(build_preview, outcome, self.provider)
        self.build_job = job
        job.finished.connect(partial(self._on_built, job))
        job.failed.connect(partial(self._on_build_failed, job))

    def _drop_build(self) -> None:
        if self.build_job is not None:
            self.build_job.cancel()
            self.build_job = None
        self._fill.stop()
        self._rest = []

    def _on_built(self, job: Job, built: BuiltPreview) -> None:
        if job is not self.build_job:
            return  # built for a run or provider no longer on show
        self.build_job = None
        self.preview = preview = built.preview
        if preview.body is None:
            self._show_words(f"Nothing to show: {preview.reason}.", None)
            self.preview_shown.emit()
            return
        if preview.cache is None:
            self._show_words("Prompt cache: the run keeps no input request to compare.", None)
        else:
            kind = _ACCENTS.get(preview.cache.kind, "error")
            self._show_words(f"Prompt cache: {preview.cache.text}", kind)
        notes = [MODEL_NOTE, *preview.body.notes]
        self.notes.setText("\n".join(notes))
        self.notes.show()
        first, *rest = pieces(built.text)
        self._set_text(first, rest, len(built.text))
        self.highlighter.set_active(True)
        self.preview_shown.emit()
        if not rest:
            self.body_filled.emit()

    def _on_build_failed(self, job: Job, error: BaseException) -> None:
        if job is not self.build_job:
            return
        self.build_job = None
        self._show_words(f"The provider request could not be built: {error}", "error")
        self.preview_shown.emit()

    def _set_text(self, text: str, rest: list[str] | None = None, total: int = 0) -> None:
        self.copy_action.setEnabled(self.preview is not None and self.preview.body is not None)
        self._rest = rest or []
        self.text.setPlainText(text)
        if self._rest:
            shown = len(text)
            self.elided.setText(f"Showing the first {shown:,} of {total:,} characters.")
        self.elided.setVisible(bool(self._rest))
        self.show_all.setVisible(bool(self._rest))
        self.show_all.setEnabled(True)

    def _on_show_all_clicked(self) -> None:
        self.show_all.setEnabled(False)
        self._fill.start()

    def _on_fill_tick(self) -> None:
        if not self._rest:
            self._fill.stop()
            return
        self.text.appendPlainText(self._rest.pop(0))
        if self._rest:
            return
        self._fill.stop()
        self.elided.hide()
        self.show_all.hide()
        self.body_filled.emit()

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
