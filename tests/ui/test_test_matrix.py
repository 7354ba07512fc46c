"""The Tests view and Save as test in the window, with real runs of the bundled workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from studio.core.expectations.model import parse_expectations
from studio.ui.test_matrix_model import CELL_ROLE
from tests.ui.test_main_window import window  # noqa: F401  (the fixture)

RUN_ALL_MS = 90_000
WAIT_MS = 30_000
TARGETS = ["main", "researcher", "reviewer", "future loop"]


def run_matrix(qtbot, window) -> None:  # noqa: F811
    with qtbot.waitSignal(window.test_matrix.runs_finished, timeout=RUN_ALL_MS):
        window.run_tests()


def states(window) -> dict[str, list[str]]:  # noqa: F811
    model = window.test_matrix.model
    return {
        model.rows[r].name: [model.cell(r, c).state for c in range(model.columnCount())]
        for r in range(model.rowCount())
    }


def row_of(window, name: str) -> int:  # noqa: F811
    return [row.name for row in window.test_matrix.model.rows].index(name)


def drop_expectations(workspace: Path, name: str) -> None:
    path = workspace / "samples" / f"{name}.json"
    document = json.loads(path.read_text())
    document.pop("expect", None)
    path.write_text(json.dumps(document, indent=2))


def test_the_matrix_runs_every_sample_on_every_target_and_they_pass(qtbot, window):  # noqa: F811
    run_matrix(qtbot, window)
    model = window.test_matrix.model
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(4)] == TARGETS
    assert states(window) == {
        "chain-refund": ["pass", "none", "none", "none"],
        "invocation-consensus-failing": ["pass", "none", "none", "none"],
        "invocation-parallel-billing": ["pass", "none", "none", "none"],
        "invocation-pipeline-review": ["pass", "none", "none", "none"],
        "invocation-swarm-refund": ["pass", "none", "none", "none"],
        "step-escalated": ["pass", "none", "none", "none"],
        "support-ticket": ["pass", "pass", "pass", "pass"],
        # Expectations name only main: the other targets are compared with the run before.
        "support-ticket-context": ["pass", "new", "new", "new"],
    }
    # Each cell says its state in words as well as in colour.
    index = model.index(row_of(window, "support-ticket"), 0)
    assert index.data() == "✓ pass"
    assert index.data(Qt.ItemDataRole.BackgroundRole) is not None
    assert model.index(0, 1).data() == "—"
    table = window.test_matrix.table
    assert table.hasFocus()  # Run All Tests leaves the keyboard in the matrix
    qtbot.keyClick(table, Qt.Key.Key_Down)
    assert table.currentIndex().row() == 1  # arrows move between cells
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert not table.hasFocus()  # and Tab leaves the table
    assert window.test_matrix.summary.text() == "11 pass, 3 new"


def test_a_broken_hook_fails_the_cells_it_runs_on(qtbot, window, sample_workspace):  # noqa: F811
    policy = sample_workspace / "lib" / "policy.ts"
    policy.write_text(policy.read_text().replace("Never copy", "Always copy"))
    run_matrix(qtbot, window)
    found = states(window)
    assert found["support-ticket"] == ["fail", "fail", "pass", "pass"]
    assert found["chain-refund"][0] == "pass"
    ticket = row_of(window, "support-ticket")
    cell = window.test_matrix.model.index(ticket, 0).data(CELL_ROLE)
    assert cell.text == "✗ fail"
    assert cell.detail.startswith("/expect/0/result/0: result /system contains: expected ")
    tip = window.test_matrix.model.index(ticket, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "Always copy" in tip


def test_cells_without_expectations_say_whether_the_result_changed(
    qtbot,
    window,  # noqa: F811
    sample_workspace,
):
    drop_expectations(sample_workspace, "chain-refund")
    drop_expectations(sample_workspace, "step-escalated")
    run_matrix(qtbot, window)
    assert states(window)["chain-refund"][0] == "new"
    assert states(window)["step-escalated"][0] == "new"
    hooks = sample_workspace / "lib" / "chain_hooks.ts"
    hooks.write_text(hooks.read_text().replace("second approver", "third approver"))
    run_matrix(qtbot, window)
    assert states(window)["chain-refund"][0] == "changed"
    assert states(window)["step-escalated"][0] == "same"
    cell = window.test_matrix.model.index(0, 0).data(CELL_ROLE)
    assert (cell.text, cell.detail) == ("Δ changed", "the result differs from the run before it")


@pytest.mark.parametrize("how", ["enter", "double-click"])
def test_a_cell_opens_its_run_in_the_run_view(qtbot, window, how):  # noqa: F811
    run_matrix(qtbot, window)
    table = window.test_matrix.table
    index = window.test_matrix.model.index(row_of(window, "support-ticket"), 1)  # researcher
    table.setCurrentIndex(index)
    with qtbot.waitSignal(window.test_matrix.run_opened, timeout=WAIT_MS) as opened:
        if how == "enter":
            table.setFocus()
            qtbot.keyClick(table, Qt.Key.Key_Return)
        else:
            centre = table.visualRect(index).center()
            # A user's double-click is a click and then the double-click event; QTest's
            # mouseDClick alone sends only the second half.
            qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
            qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    outcome = opened.args[0]
    assert (outcome.sample, outcome.loop, outcome.status) == ("support-ticket", "researcher", "ok")
    assert window.results.header.text().startswith("✓ ok")
    assert "support-ticket" in window.results.header.text()
    assert window.results.save_test.isVisible()


def test_save_as_test_writes_expectations_the_matrix_then_passes(
    qtbot,
    window,  # noqa: F811
    sample_workspace,
):
    drop_expectations(sample_workspace, "chain-refund")
    window.sample_box.setCurrentText("chain-refund")
    with qtbot.waitSignal(window.run_finished, timeout=WAIT_MS):
        window.run_selected()
    assert window.results.save_test.isVisible()
    path = sample_workspace / "samples" / "chain-refund.json"
    qtbot.mouseClick(window.results.save_test, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "expect" in json.loads(path.read_text()), timeout=WAIT_MS)
    document = json.loads(path.read_text())
    expectations, findings = parse_expectations(document)
    assert findings == []
    assert expectations[0].outcome == "ok" and expectations[0].targets is None
    assert "context" in document and document["responses"]  # the rest of the sample is kept
    run_matrix(qtbot, window)
    assert states(window)["chain-refund"][0] == "pass"


def test_save_all_as_tests_from_every_target(qtbot, window, sample_workspace):  # noqa: F811
    drop_expectations(sample_workspace, "support-ticket")
    window.sample_box.setCurrentText("support-ticket")
    with qtbot.waitSignal(window.results.comparison_shown, timeout=WAIT_MS):
        window.run_on_every_target()
    assert window.results.save_test.text() == "Save All as Tests"
    path = sample_workspace / "samples" / "support-ticket.json"
    window.save_test_action.trigger()
    qtbot.waitUntil(
        lambda: "Saved as a test" in window.statusBar().currentMessage(), timeout=WAIT_MS
    )
    expect = json.loads(path.read_text())["expect"]
    assert [(b["targets"], b["outcome"]) for b in expect] == [
        (["main"], "ok"),
        (["researcher"], "ok"),
        (["reviewer"], "not_applied"),
        (["future-loop"], "not_applied"),
    ]
    assert expect[0]["tools"] == {"removed": ["shell"], "kept": ["fs_read", "fs_write"]}
