"""Import request…: a captured provider body (from a file, or pasted) turned into a pre-LLM
sample. The format is detected when only one fits, else the user picks it; the sample and
the loss report are shown before anything is written, and Import writes the sample (and the
original body beside it) only when it passes the request checks, never over another sample."""

from __future__ import annotations

import itertools
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.file_reads import read_bytes
from studio.core.provider.formats import FORMATS, TITLES
from studio.core.provider.importer import (
    Imported,
    ImportFailed,
    import_body,
    parse_body,
    save_import,
)
from studio.core.workspace.folder import SAMPLES_DIR
from studio.core.workspace.sample_files import (
    clean_sample_name,
    free_sample_name,
    sample_name_problem,
)
from studio.ui.json_highlighter import VisibleHighlighter, json_theme
from studio.ui.result_style import note
from studio.ui.sample_fields import mono, read_only_pane, sample_name_field, show_status

DETECT = ""
DEFAULT_NAME = "imported"
PASTE_HINT = "Paste a captured request body (Anthropic, Chat Completions or Responses JSON) here"


class ImportRequestDialog(QDialog):
    """Signals: ``sample_imported(name)`` once ``samples/NAME.json`` is written."""

    sample_imported = Signal(str)

    def __init__(self, samples: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import Request")
        self.samples = samples
        self.imported: Imported | None = None
        self.problem = ""
        self._file_bytes: bytes | None = None
        self._file_text = ""
        self._named_by_user = False

        self.body = QPlainTextEdit()
        self.body.setObjectName("importBody")
        self.body.setPlaceholderText(PASTE_HINT)
        mono(self.body)
        self.open_button = QPushButton("From &File…")
        self.open_button.setToolTip("Read the body from a JSON file")
        self.open_button.setAutoDefault(False)  # Return imports; it never opens a file dialog
        self.format = QComboBox()
        self.format.setObjectName("importFormat")
        self.format.addItem("Detect", DETECT)
        for name in FORMATS:
            self.format.addItem(TITLES[name], name)
        self.dynamic = QCheckBox("Final user message as &dynamicInstructions")
        self.dynamic.setToolTip(
            "ADF appends dynamicInstructions as the last user message; take that message back "
            "out as the option"
        )
        self.status = QLabel()
        self.status.setObjectName("importStatus")
        self.status.setWordWrap(True)
        self.sample = read_only_pane("importSample")
        self.highlighter = VisibleHighlighter(self.sample, json_theme(self.sample.palette()))
        self.report = read_only_pane("importReport")
        self.name = sample_name_field("importName")
        self.name.setText(self._free(DEFAULT_NAME))

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.import_button = self.buttons.addButton(
            "&Import", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.import_button.setObjectName("importButton")
        cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        cancel.setAutoDefault(False)  # Return imports; Escape cancels

        source = QWidget()
        source_layout = QVBoxLayout(source)
        source_layout.setContentsMargins(0, 0, 0, 0)
        source_top = QHBoxLayout()
        body_label = QLabel("Captured &body")
        body_label.setBuddy(self.body)
        source_top.addWidget(body_label, 1)
        source_top.addWidget(self.open_button)
        source_layout.addLayout(source_top)
        source_layout.addWidget(self.body, 1)
        self.preview = QTabWidget()
        self.preview.setObjectName("importPreview")
        self.preview.addTab(self.sample, "&Sample")
        self.preview.addTab(self.report, "&Loss report")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(source)
        split.addWidget(self.preview)
        split.setChildrenCollapsible(False)
        form = QFormLayout()
        form.addRow("F&ormat", self.format)
        form.addRow("", self.dynamic)
        form.addRow("&Name", self.name)
        layout = QVBoxLayout(self)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        layout.addLayout(form)
        layout.addWidget(note(f"The original body is kept as {SAMPLES_DIR}/originals/NAME.json."))
        layout.addWidget(self.buttons)
        self.resize(980, 600)
        chain = [
            self.body,
            self.open_button,
            self.preview,
            self.sample,
            self.report,
            self.format,
            self.dynamic,
            self.name,
            self.import_button,
            cancel,
        ]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self.refresh)
        self.body.textChanged.connect(self._timer.start)
        self.format.currentIndexChanged.connect(self.refresh)
        self.dynamic.toggled.connect(self.refresh)
        self.name.textEdited.connect(self._on_name_edited)
        self.open_button.clicked.connect(self.choose_file)
        self.buttons.accepted.connect(self.import_sample)
        self.buttons.rejected.connect(self.reject)
        self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # The button box picks its own default as the dialog shows: Return must import.
        self.import_button.setDefault(True)

    # ---- the body -------------------------------------------------------------------------
    def choose_file(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(
            self, "Open a captured request body", "", "JSON (*.json);;All files (*)"
        )
        if chosen:
            self.load_file(Path(chosen))

    def load_file(self, path: Path) -> bool:
        """Put ``path``'s body in the dialog; its bytes are what is kept as the original."""
        try:
            data = read_bytes(path)
        except OSError as exc:
            self._say(f"{path.name} cannot be read: {exc.strerror or exc}", "error")
            return False
        text = data.decode("utf-8-sig", errors="replace")
        self._file_bytes, self._file_text = data, text
        self.body.setPlainText(text)
        if not self._named_by_user:
            stem = clean_sample_name(path.stem)
            if sample_name_problem(stem) is None:
                self.name.setText(self._free(stem))
        self.refresh()
        return True

    def _original(self) -> bytes:
        text = self.body.toPlainText()
        if self._file_bytes is not None and text == self._file_text:
            return self._file_bytes
        return text.encode("utf-8")

    # ---- the preview --------------------------------------------------------------------------
    def refresh(self) -> None:
        """Import the body as it is now and show the sample and the loss report."""
        self._timer.stop()
        self.imported = None
        text = self.body.toPlainText()
        if not text.strip():
            self._show_nothing("Paste a body or open a file.", None)
            return
        chosen = self.format.currentData() or None
        try:
            self.imported = import_body(
                parse_body(self._original()), chosen, dynamic_instructions=self.dynamic.isChecked()
            )
        except ImportFailed as exc:
            message = str(exc).replace("say --format", "choose the format")
            self._show_nothing(message, "error")
            if "ambiguous" in message:
                self.format.setFocus()
            return
        imported = self.imported
        self.sample.setPlainText(imported.text())
        self.highlighter.set_active(True)
        self.report.setPlainText("\n".join(imported.report_lines()))
        detected = "" if chosen else "detected "
        count = len(imported.losses)
        words = f"{TITLES[imported.format]} ({detected}format); {count} dropped or changed"
        if imported.incomplete:
            words += "; incomplete: part of the history lives on the provider's server"
        if not imported.valid:
            first = next(f for f in imported.findings if f.severity == "error")
            words += f". Not importable: {first.pointer or '/'}: {first.message}"
        self._say(words, "ok" if imported.valid else "error")
        self._update_button()

    def _show_nothing(self, text: str, kind: str | None) -> None:
        self.sample.clear()
        self.report.clear()
        self._say(text, kind)
        self._update_button()

    def _say(self, text: str, kind: str | None) -> None:
        self.problem = show_status(self.status, text, kind)

    def _update_button(self) -> None:
        name_ok = sample_name_problem(clean_sample_name(self.name.text())) is None
        self.import_button.setEnabled(self.imported is not None and self.imported.valid and name_ok)

    def _on_name_edited(self, _text: str) -> None:
        self._named_by_user = True
        self._update_button()

    def _free(self, base: str) -> str:
        return free_sample_name(self.samples, base, [])

    # ---- writing ------------------------------------------------------------------------------
    def import_sample(self) -> bool:
        """Write the sample; the dialog closes when it is written."""
        self.refresh()
        imported = self.imported
        name = clean_sample_name(self.name.text())
        if imported is None or not imported.valid:
            return False
        try:
            save_import(self.samples, name, imported, self._original())
        except FileExistsError:
            self._say(f"A sample named {name} exists already: choose another name", "error")
            self.name.setFocus()
            self.name.selectAll()
            return False
        except (ValueError, OSError) as exc:
            self._say(f"Not imported: {exc}", "error")
            return False
        self.sample_imported.emit(name)
        self.accept()
        return True
