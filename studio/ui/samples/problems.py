"""The problems of a sample's text: a JSON syntax error, or its contract's findings, each with
its line and column and JSON path; and the one-line summary of a check for the status line."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QLabel, QStyle, QTreeView, QVBoxLayout, QWidget

from studio.core.registry import CONTRACTS
from studio.core.workspace.sample_check import SampleCheck


def check_summary(check: SampleCheck) -> str:
    if not check.valid_json:
        p = check.problems[0]
        return f"✗ Not JSON: {p.message} at line {p.line}, column {p.column}"
    contract = CONTRACTS.get(check.contract or "")
    kind = f"{contract.label} sample" if contract is not None else "sample"
    errors = sum(1 for p in check.problems if p.severity == "error")
    warnings = len(check.problems) - errors
    if not check.problems:
        return f"✓ Valid {kind}"
    parts = []
    if errors:
        parts.append(f"{errors} contract problem{'s' if errors != 1 else ''}")
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    return f"JSON is valid · {kind}: {', '.join(parts)}"


class ProblemList(QWidget):
    """A titled table of a check's problems; activating one asks to go to it in the text."""

    problem_activated = Signal(int)  # the index of the problem in the check's problems

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = QStandardItemModel(self)
        self.model.setHorizontalHeaderLabels(["Line", "Path", "Problem"])
        self.view = QTreeView()
        self.view.setObjectName("sampleProblems")
        self.view.setModel(self.model)
        self.view.setRootIsDecorated(False)
        self.view.setUniformRowHeights(True)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setAlternatingRowColors(True)
        self.view.header().setStretchLastSection(True)
        self.title = QLabel("Problems")
        self.title.setBuddy(self.view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.view, 1)
        self.view.clicked.connect(self._on_activated)
        self.view.activated.connect(self._on_activated)

    def clear(self, title: str | None = "Problems") -> None:
        """No rows; the title becomes ``title`` (None: it stays)."""
        self.model.removeRows(0, self.model.rowCount())
        if title is not None:
            self.title.setText(title)

    def show_check(self, check: SampleCheck) -> None:
        self.clear(title=None)
        style = self.style()
        icons = {
            "error": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical),
            "warning": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning),
        }
        rows = []
        for k, problem in enumerate(check.problems):
            where = QStandardItem(
                icons.get(problem.severity, icons["warning"]), f"{problem.line}:{problem.column}"
            )
            path = QStandardItem(problem.pointer if problem.pointer is not None else "JSON syntax")
            if problem.pointer == "":
                path.setText("/")
            text = problem.message
            if not problem.exact:
                text += " (missing here)"
            message = QStandardItem(text)
            tip = f"{problem.severity}: {problem.message}"
            if problem.rule:
                tip += f"\nrule {problem.rule}"
            for item in (where, path, message):
                item.setData(k, Qt.ItemDataRole.UserRole)
                item.setToolTip(tip)
            rows.append([where, path, message])
        for row in rows:
            self.model.appendRow(row)
        if check.total > len(check.problems):
            self.model.appendRow(
                [
                    QStandardItem(""),
                    QStandardItem(""),
                    QStandardItem(f"… and {check.total - len(check.problems)} more"),
                ]
            )
        count = check.total
        self.title.setText(f"Problems ({count})" if count else "Problems: none")
        self.view.resizeColumnToContents(0)
        self.view.setColumnWidth(1, min(max(self.view.sizeHintForColumn(1), 90), 260))

    def _on_activated(self, index: QModelIndex) -> None:
        k = index.data(Qt.ItemDataRole.UserRole)
        if k is not None:
            self.problem_activated.emit(k)
