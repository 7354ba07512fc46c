"""A run's record is written after its outcome is delivered, and never lost: reads of the store
see every run delivered before them, and closing the store writes what is still pending."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator

import pytest

from studio.core.records.store import RecordStore
from studio.core.workspace.folder import Workspace
from studio.engine.runner import RunHandle
from tests.support.runners import LiveRunner


async def started(live: LiveRunner) -> RunHandle:
    return live.runner.start("basic")


@pytest.fixture
def recorded(workspace: Workspace) -> Iterator[tuple[LiveRunner, RecordStore]]:
    store = RecordStore.open(workspace.root)
    live = LiveRunner(workspace)
    live.runner.store = store
    yield live, store
    live.close()
    store.close()


def test_an_outcome_is_delivered_while_the_database_is_locked_and_recorded_after(recorded):
    live, store = recorded
    assert live.run().status == "ok"
    # Another process's write transaction holds the database: a record cannot be written now.
    blocker = sqlite3.connect(store.path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        handle = live.call(started(live))
        outcome = live.call(handle.outcome())
        assert outcome.status == "ok"
        assert handle.record is not None and not handle.record.done()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert live.call(handle.recorded()) is None
    assert store.get(outcome.run_id) is not None


def test_a_read_right_after_a_run_sees_that_run(recorded):
    live, store = recorded
    delivered = [live.run().run_id for _ in range(5)]
    assert [summary.run_id for summary in store.list()] == delivered[::-1]


def test_closing_the_store_writes_every_record_still_pending(recorded, workspace):
    live, store = recorded
    blocker = sqlite3.connect(store.path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        delivered = [live.run().run_id for _ in range(3)]
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    store.close()
    with RecordStore.open(workspace.root) as reopened:
        assert sorted(summary.run_id for summary in reopened.list()) == sorted(delivered)


def test_a_record_that_cannot_be_written_says_why(recorded):
    live, store = recorded
    with sqlite3.connect(store.path) as db:
        # SQLite's own message when a write finds no room, raised on each insert.
        db.execute(
            "CREATE TRIGGER full BEFORE INSERT ON decisions "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    db.close()
    handle = live.call(started(live))
    assert live.call(handle.outcome()).status == "ok"
    problem = live.call(handle.recorded())
    assert problem == f"{store.path}: cannot write the records (database or disk is full)"


def test_a_caller_asking_for_its_record_does_not_wait_for_later_runs(recorded, monkeypatch):
    from studio.core.records import pending_writes

    # A write that waited this long for later runs would fail the wait below.
    monkeypatch.setattr(pending_writes, "GATHER_S", 60.0)
    live, store = recorded
    handle = live.call(started(live))
    outcome = live.call(handle.outcome())
    assert live.call(asyncio.wait_for(handle.recorded(), 30)) is None
    assert store.get(outcome.run_id) is not None
