"""Open a record's input as a new sample: the sample the stored run was made on (or as much of it
as the record keeps), under a name the user may change, written as a new file of the samples
folder (atomically, never over another sample)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from studio.core.records.record_sample import RecordSample
from studio.core.workspace.folder import SAMPLES_DIR
from studio.core.workspace.sample_files import (
    clean_sample_name,
    create_sample_file,
    free_sample_name,
    sample_name_problem,
)
from studio.ui.contract_views import contract_label
from studio.ui.records_cells import time_label
from studio.ui.result_style import note
from studio.ui.sample_fields import read_only_pane, sample_name_field, show_status


def sample_text(found: RecordSample, run_id: str, started_at: float) -> str:
    """The new sample file's text: the document, its description saying where it came from."""
    document: dict[str, Any] = dict(found.document or {})
    origin = f"The input of run {run_id} ({time_label(started_at)})"
    if found.sample:
        origin += f", made on the sample {found.sample}"
    rest = {k: v for k, v in document.items() if k not in ("contract", "description")}
    head: dict[str, Any] = {"contract": document["contract"]} if "contract" in document else {}
    head["description"] = origin + "."
    return json.dumps({**head, **rest}, indent=2, ensure_ascii=False) + "\n"


def suggested_name(samples: Path, found: RecordSample, started_at: float) -> str:
    base = clean_sample_name(found.sample or found.contract.replace("_", "-"))
    stamp = datetime.fromtimestamp(started_at).strftime("%Y%m%d-%H%M%S")
    name = f"{base}-{stamp}"[:64]
    if sample_name_problem(name):
        name = f"run-{stamp}"
    return free_sample_name(samples, name, ())


class RecordSampleDialog(QDialog):
    """Signals ``sample_created(name)`` once ``samples/NAME.json`` is written."""

    sample_created = Signal(str)

    def __init__(
        self,
        samples: Path,
        found: RecordSample,
        run_id: str,
        started_at: float,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("New Sample from a Run")
        self.setObjectName("recordSampleDialog")
        self.samples = samples
        self.text = sample_text(found, run_id, started_at)
        self.name = sample_name_field("recordSampleName")
        self.name.setText(suggested_name(samples, found, started_at))
        self.name.selectAll()
        self.name.textChanged.connect(self._on_name_changed)
        kind = QLabel(contract_label(found.contract))
        kind.setObjectName("recordSampleContract")
        self.preview = read_only_pane("recordSamplePreview")
        self.preview.setPlainText(self.text)
        self.note = note(found.note or "")
        self.note.setObjectName("recordSampleNote")
        self.note.setWordWrap(True)
        self.note.setVisible(bool(found.note))
        self.status = QLabel()
        self.status.setObjectName("recordSampleStatus")
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.create_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.create_button.setText("Create Sample")
        self.buttons.accepted.connect(self.create_sample)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("&Name", self.name)
        form.addRow("Contract", kind)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.resize(620, 480)
        self.name.setFocus()
        self._on_name_changed(self.name.text())

    @property
    def target(self) -> Path:
        return self.samples / f"{clean_sample_name(self.name.text())}.json"

    def _on_name_changed(self, text: str) -> None:
        name = clean_sample_name(text)
        problem = sample_name_problem(name)
        if problem is None and self.target.exists():
            problem = f"{SAMPLES_DIR}/{name}.json exists: choose another name"
        if problem:
            show_status(self.status, problem, "error")
        else:
            show_status(self.status, f"Writes {SAMPLES_DIR}/{name}.json", None)
        self.create_button.setEnabled(problem is None)

    def create_sample(self) -> bool:
        """Write the sample; on success the dialog closes and says which sample it made."""
        name = clean_sample_name(self.name.text())
        if sample_name_problem(name):
            return False
        try:
            self.samples.mkdir(parents=True, exist_ok=True)
            create_sample_file(self.target, self.text.encode("utf-8"))
        except FileExistsError:
            show_status(
                self.status, f"{SAMPLES_DIR}/{name}.json exists: choose another name", "error"
            )
            return False
        except OSError as exc:
            show_status(
                self.status,
                f"{SAMPLES_DIR}/{name}.json could not be written ({exc.strerror or exc})",
                "error",
            )
            return False
        self.sample_created.emit(name)
        self.accept()
        return True
