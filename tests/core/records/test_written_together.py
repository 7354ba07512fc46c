"""Records of runs handed over back to back are written together, and nothing waits for that:
a read, a flush, a close or a caller asking for its record has them written at once; a run
already stored fails alone, its neighbours are stored."""

from __future__ import annotations

import sqlite3
import time

import pytest

from studio.core.records import pending_writes
from studio.core.records.store import RecordStore, RecordStoreError
from tests.support.outcomes import trivial_run

# Far longer than any test may take: a write that waited for it would fail the test's timeout.
LONG_GATHER_S = 60.0


@pytest.fixture
def long_gather(monkeypatch):
    monkeypatch.setattr(pending_writes, "GATHER_S", LONG_GATHER_S)


def test_runs_handed_over_back_to_back_are_all_stored_in_order(store):
    runs = [trivial_run(1_700_000_000.0 + i) for i in range(20)]
    written = [store.add_later(outcome) for outcome in runs]
    assert [future.result(timeout=10) for future in written] == [None] * 20
    assert [r.run_id for r in store.list()] == [o.run_id for o in reversed(runs)]
    stored = store.get(runs[7].run_id)
    assert stored is not None and stored.payload is not None
    assert stored.payload["result"] == runs[7].result


def test_a_run_already_stored_fails_alone(store):
    first, second = trivial_run(1_700_000_000.0), trivial_run(1_700_000_001.0)
    store.add(first)
    # Held, so that the three go to the writing thread together.
    hold = store.hold_writes()
    again = store.add_later(first)
    new = store.add_later(second)
    also_again = store.add_later(second)
    store.release_writes(hold)
    with pytest.raises(RecordStoreError, match="is already stored"):
        again.result(timeout=10)
    assert new.result(timeout=10) is None
    with pytest.raises(RecordStoreError, match="is already stored"):
        also_again.result(timeout=10)
    assert [r.run_id for r in store.list()] == [second.run_id, first.run_id]
    assert store.payload_count() == 2


def test_a_read_does_not_wait_for_later_runs(store, long_gather):
    outcome = trivial_run(1_700_000_000.0)
    store.add_later(outcome)
    began = time.monotonic()
    assert [r.run_id for r in store.list()] == [outcome.run_id]
    assert time.monotonic() - began < LONG_GATHER_S / 2


def test_write_soon_writes_what_was_handed_over(store, long_gather):
    written = store.add_later(trivial_run(1_700_000_000.0))
    store.write_soon()
    assert written.result(timeout=10) is None


def test_write_soon_leaves_held_writes_held(store, long_gather):
    hold = store.hold_writes()
    written = store.add_later(trivial_run(1_700_000_000.0))
    store.write_soon()
    with pytest.raises(TimeoutError):
        written.result(timeout=0.3)
    store.release_writes(hold)
    assert written.result(timeout=10) is None


def test_closing_writes_at_once_what_is_gathering(tmp_path, long_gather):
    store = RecordStore.open(tmp_path)
    outcome = trivial_run(1_700_000_000.0)
    written = store.add_later(outcome)
    began = time.monotonic()
    store.close()
    assert time.monotonic() - began < LONG_GATHER_S / 2
    assert written.result(timeout=0) is None
    with RecordStore.open(tmp_path) as reopened:
        assert [r.run_id for r in reopened.list()] == [outcome.run_id]


def test_clearing_payloads_clears_those_still_gathering(store, long_gather):
    outcome = trivial_run(1_700_000_000.0)
    store.add_later(outcome)
    assert store.clear_payloads() == 1
    stored = store.get(outcome.run_id)
    assert stored is not None and stored.payload is None


def test_a_run_that_cannot_be_written_fails_alone(store):
    failing, before, after = (trivial_run(1_700_000_000.0 + i) for i in range(3))
    with sqlite3.connect(store.path) as db:
        # SQLite's own message when a write finds no room, raised for one run only.
        db.execute(
            "CREATE TRIGGER full BEFORE INSERT ON decisions "
            f"WHEN NEW.run_id = '{failing.run_id}' "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    db.close()
    hold = store.hold_writes()
    written = [store.add_later(outcome) for outcome in (before, failing, after)]
    store.release_writes(hold)
    assert written[0].result(timeout=10) is None
    with pytest.raises(RecordStoreError, match=r"cannot write the records \(database or disk"):
        written[1].result(timeout=10)
    assert written[2].result(timeout=10) is None
    assert [r.run_id for r in store.list()] == [after.run_id, before.run_id]


def test_a_database_deleted_while_runs_wait_tells_the_newest_and_keeps_them_all(store):
    first, second = trivial_run(1_700_000_000.0), trivial_run(1_700_000_001.0)
    store.add(trivial_run(1_699_999_999.0))  # in the database about to go
    hold = store.hold_writes()
    earlier = store.add_later(first)
    newest = store.add_later(second)
    store.path.unlink()
    assert store.replaced()
    store.release_writes(hold)
    assert earlier.result(timeout=10) is None
    notice = newest.result(timeout=10)
    assert notice is not None and "was deleted or replaced while the studio had it open" in notice
    assert [r.run_id for r in store.list()] == [second.run_id, first.run_id]
