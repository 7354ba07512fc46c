"""The Agent log view over real agent files: the hook's own log rows, the filter, following the
file as ADF writes to it, and its dock in the window (only for an .adf)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from studio.core.app_settings import AppSettings
from studio.core.workspace.adf_workspace import AdfWorkspace
from studio.core.workspace.folder import Workspace
from studio.ui.agent_log_view import (
    DATA,
    EVENT,
    LEVEL,
    LOOP,
    MESSAGE,
    TARGET,
    TIME,
    AgentLogModel,
    AgentLogView,
)
from studio.ui.engine_bridge import EngineBridge
from studio.ui.main_window import MainWindow
from tests.support.adf_files import BASE_MS, AdfSpec, build_adf

WAIT_MS = 10_000


@pytest.fixture
def bridge() -> Iterator[EngineBridge]:
    engine = EngineBridge()
    yield engine
    engine.shutdown()
    loop = engine._loop
    if not loop.is_running() and not loop.is_closed():
        loop.close()


@pytest.fixture
def agent(tmp_path) -> Path:
    return build_adf(tmp_path / "support.adf", AdfSpec(schema=29))


def shown(view: AgentLogView, column: int) -> list[str]:
    proxy = view.proxy
    return [proxy.index(r, column).data() for r in range(proxy.rowCount())]


def open_view(qtbot, bridge, path: Path) -> AgentLogView:
    view = AgentLogView(bridge)
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(view.rows_loaded, timeout=WAIT_MS):
        view.set_workspace(AdfWorkspace.open_file(path))
    return view


def log_row(path: Path, level: str, origin: str, event: str, message: str, data=None) -> None:
    """A row as the running agent writes it: through its own connection, into the WAL."""
    db = sqlite3.connect(path, isolation_level=None, timeout=5)
    try:
        db.execute(
            "INSERT INTO adf_logs (level, origin, event, target, message, data, created_at, loop) "
            "VALUES (?, ?, ?, 'lib/policy.ts', ?, ?, ?, 'main')",
            (level, origin, event, message, json.dumps(data) if data else None, BASE_MS + 9000),
        )
    finally:
        db.close()


def test_the_hook_rows_are_shown_with_every_column(qtbot, bridge, agent):
    view = open_view(qtbot, bridge, agent)
    assert shown(view, EVENT) == [
        "pre_llm_hook execute",
        "pre_llm_hook result",
        "pre_llm_hook execute",
        "executor pre_llm_hook_error",
    ]
    assert shown(view, TIME)[0] == "2025-11-28 08:53:21.500"
    assert shown(view, LEVEL)[3] == "error"
    assert set(shown(view, TARGET)) == {"lib/policy.ts"}
    assert shown(view, LOOP) == ["main", "main", "researcher", "researcher"]
    assert shown(view, MESSAGE)[1] == "transform() → ok (12ms)"
    assert shown(view, DATA)[0] == '{"loop": "main", "timeout_ms": 5000}'
    assert view.count.text() == "4 rows"
    assert view.table.isEnabled() and view.message.isHidden()


def test_schema_28_rows_have_no_loop(qtbot, bridge, tmp_path):
    view = open_view(qtbot, bridge, build_adf(tmp_path / "old.adf", AdfSpec(schema=28)))
    assert shown(view, LOOP) == ["", "", "", ""]


def test_filter_by_words_and_level_from_the_keyboard(qtbot, bridge, agent):
    view = open_view(qtbot, bridge, agent)
    view.focus_filter()
    qtbot.keyClicks(view.filter, "researcher")
    assert shown(view, EVENT) == ["pre_llm_hook execute", "executor pre_llm_hook_error"]
    assert view.count.text() == "2 of 4 rows"
    view.level.setFocus()
    while view.level.currentData() != "error":
        qtbot.keyClick(view.level, Qt.Key.Key_Down)
    assert shown(view, MESSAGE) == [
        "pre_llm_hook returned an invalid request: messages must be an array"
    ]
    view.filter.clear()
    assert view.count.text() == "1 of 4 rows"


def test_a_row_adf_writes_appears_and_the_selection_stays(qtbot, bridge, agent):
    view = open_view(qtbot, bridge, agent)
    first = view.proxy.index(0, 0)
    view.table.selectionModel().select(
        first, QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    )
    log_row(
        agent, "error", "pre_llm_hook", "failed", "TypeError: x is undefined", {"duration_ms": 3}
    )
    qtbot.waitUntil(lambda: view.model.rowCount() == 5, timeout=WAIT_MS)
    assert shown(view, MESSAGE)[-1] == "TypeError: x is undefined"
    assert [i.row() for i in view.table.selectionModel().selectedRows()] == [0]


def test_the_views_own_reads_do_not_make_it_read_again(qtbot, bridge, agent):
    view = open_view(qtbot, bridge, agent)
    view._on_changed(str(agent.parent))  # as the watcher says when a read's -wal comes and goes
    assert not view._settle.isActive()
    with qtbot.waitSignal(view.rows_loaded, timeout=WAIT_MS):
        view.refresh()
    with qtbot.assertNotEmitted(view.rows_loaded, wait=1500):
        pass  # the watcher saw the read's -wal come and go: no read follows


def test_rows_written_while_adf_holds_the_agent_open_appear(qtbot, bridge, agent):
    view = open_view(qtbot, bridge, agent)
    running = sqlite3.connect(agent, isolation_level=None, timeout=5)
    try:  # ADF keeps its connection, so its rows stay in the -wal
        running.execute("SELECT count(*) FROM adf_logs").fetchone()
        wal = str(agent.with_name("support.adf-wal"))
        qtbot.waitUntil(lambda: wal in view.watcher.files(), timeout=WAIT_MS)
        for n in (1, 2):
            running.execute(
                "INSERT INTO adf_logs (level, origin, event, target, message, created_at, loop) "
                "VALUES ('info', 'pre_llm_hook', 'execute', 'lib/policy.ts', ?, ?, 'main')",
                (f"call {n}", BASE_MS + 10_000 + n),
            )
            qtbot.waitUntil(lambda n=n: view.model.rowCount() == 4 + n, timeout=WAIT_MS)
        assert Path(wal).stat().st_size > 0
        assert shown(view, MESSAGE)[-2:] == ["call 1", "call 2"]
    finally:
        running.close()


def test_refresh_reads_again_from_the_keyboard(qtbot, bridge, agent):
    view = open_view(qtbot, bridge, agent)
    view.watcher.blockSignals(True)  # only the key may read again here
    log_row(agent, "info", "pre_llm_hook", "result", "transform() → ok (3ms)")
    assert view.model.rowCount() == 4
    view.table.setFocus()
    with qtbot.waitSignal(view.rows_loaded, timeout=WAIT_MS):
        qtbot.keyClick(view.table, Qt.Key.Key_F5)
    assert view.model.rowCount() == 5


def test_rows_that_are_not_the_hooks_are_left_out(qtbot, bridge, agent):
    view = open_view(qtbot, bridge, agent)
    assert "agent started" not in shown(view, MESSAGE)
    assert "tool shell is disabled" not in shown(view, MESSAGE)


def test_a_folder_workspace_has_no_agent_log(qtbot, bridge, sample_workspace):
    view = AgentLogView(bridge)
    qtbot.addWidget(view)
    view.set_workspace(Workspace.open(sample_workspace))
    assert view.model.rowCount() == 0
    assert not view.table.isEnabled() and not view.refresh_action.isEnabled()
    assert "folder workspace has none" in view.message.text()


def test_an_unreadable_agent_is_said_plainly(qtbot, bridge, agent):
    view = open_view(qtbot, bridge, agent)
    agent.write_bytes(b"this is no database, " * 400)  # replaced under the view
    with qtbot.waitSignal(view.rows_loaded, timeout=WAIT_MS):
        view.refresh()
    assert view.message.text().startswith("support.adf: is a damaged SQLite database")
    assert view.model.rowCount() == 4  # what was read stays


def test_the_models_keep_qts_rules(qtbot, qtmodeltester, bridge, agent):
    view = open_view(qtbot, bridge, agent)
    qtmodeltester.check(view.model)
    qtmodeltester.check(view.proxy)
    log_row(agent, "info", "pre_llm_hook", "execute", "transform()")
    qtbot.waitUntil(lambda: view.model.rowCount() == 5, timeout=WAIT_MS)
    view.proxy.set_filter("execute", "info")
    assert view.proxy.rowCount() == 3
    qtmodeltester.check(AgentLogModel())


def test_the_dock_is_there_only_for_an_agent(qtbot, tmp_path, sample_workspace, monkeypatch):
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: QMessageBox.StandardButton.Ok)
    window = MainWindow(AppSettings(), tmp_path / "settings.json")
    qtbot.addWidget(window)
    window.show()
    try:
        dock = window.agent_log_dock
        toggle = dock.toggleViewAction()
        assert window.open_workspace(sample_workspace)
        assert dock.isHidden() and not toggle.isEnabled()
        agent = build_adf(tmp_path / "support.adf", AdfSpec(schema=29))
        assert window.open_workspace(agent)
        assert toggle.isEnabled() and not dock.isHidden()
        assert dock in window.tabifiedDockWidgets(window.records_dock)
        qtbot.waitUntil(lambda: dock.view.model.rowCount() == 4, timeout=WAIT_MS)
        toggle.trigger()
        assert dock.isHidden()
        assert window.open_workspace(sample_workspace)
        assert dock.isHidden() and not toggle.isEnabled() and dock.view.model.rowCount() == 0
    finally:
        window.undo_stack.setClean()
        window.close()


def test_a_read_that_ends_after_the_view_is_gone_touches_nothing(qtbot, bridge, agent):
    view = open_view(qtbot, bridge, agent)
    view.refresh()
    job = view._job
    assert job is not None and not job.done
    # Deleted before the read's answer can be delivered (that needs this thread's event loop).
    shiboken6.delete(view)
    qtbot.waitUntil(lambda: job.done, timeout=WAIT_MS)
    QApplication.processEvents()
