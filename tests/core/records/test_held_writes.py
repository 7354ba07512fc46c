"""Record writes held back while a window shows a run: none starts before the release (or
before the longest hold has passed), they are written in the order handed over, each waits only
for the holds in force when it was handed over, and nothing that needs them all (a flush, a
close) waits for the release."""

from __future__ import annotations

import time
from concurrent.futures import wait

from studio.core.records import pending_writes
from studio.core.records.store import RecordStore
from tests.support.outcomes import trivial_run


def test_a_held_write_waits_for_the_release_then_writes_in_order(store):
    hold = store.hold_writes()
    first, second = trivial_run(1_700_000_000.0), trivial_run(1_700_000_001.0)
    written = [store.add_later(first), store.add_later(second)]
    done, _ = wait(written, timeout=0.3)
    assert not done
    store.release_writes(hold)
    for future in written:
        assert future.result(timeout=10) is None
    assert [r.run_id for r in store.list()] == [second.run_id, first.run_id]


def test_a_write_held_longer_than_the_longest_hold_goes_by_itself(store, monkeypatch):
    monkeypatch.setattr(pending_writes, "MAX_HOLD_S", 0.2)
    store.hold_writes()
    handed = time.monotonic()
    written = store.add_later(trivial_run(1_700_000_000.0))
    assert written.result(timeout=10) is None
    assert time.monotonic() - handed >= 0.2
    assert len(store.list()) == 1


def test_a_flush_lets_held_writes_go(store):
    store.hold_writes()
    outcome = trivial_run(1_700_000_000.0)
    written = store.add_later(outcome)
    store.flush()
    assert written.done()
    assert [r.run_id for r in store.list()] == [outcome.run_id]


def test_closing_writes_what_is_held(tmp_path):
    store = RecordStore.open(tmp_path)
    store.hold_writes()
    outcome = trivial_run(1_700_000_000.0)
    written = store.add_later(outcome)
    store.close()
    assert written.done()
    with RecordStore.open(tmp_path) as reopened:
        assert [r.run_id for r in reopened.list()] == [outcome.run_id]


def test_writes_after_a_release_are_not_held(store):
    store.release_writes(store.hold_writes())
    assert store.add_later(trivial_run(1_700_000_000.0)).result(timeout=10) is None


def test_a_hold_taken_later_does_not_keep_back_an_earlier_write(store):
    # The run on show is written once it is painted, while the next run is already going.
    shown = store.hold_writes()
    earlier = store.add_later(trivial_run(1_700_000_000.0))
    next_run = store.hold_writes()
    store.release_writes(shown)
    assert earlier.result(timeout=10) is None
    later = store.add_later(trivial_run(1_700_000_001.0))
    done, _ = wait([later], timeout=0.3)
    assert not done
    store.release_writes(next_run)
    assert later.result(timeout=10) is None
    assert len(store.list()) == 2


def test_releasing_one_hold_leaves_the_others(store):
    first = store.hold_writes()
    second = store.hold_writes()
    store.release_writes(first)
    written = store.add_later(trivial_run(1_700_000_000.0))
    done, _ = wait([written], timeout=0.3)
    assert not done
    store.release_writes(second)
    assert written.result(timeout=10) is None


def test_a_flush_leaves_later_writes_held(store):
    hold = store.hold_writes()
    store.flush()
    written = store.add_later(trivial_run(1_700_000_000.0))
    done, _ = wait([written], timeout=0.3)
    assert not done
    store.release_writes(hold)
    assert written.result(timeout=10) is None


def test_clearing_payloads_clears_those_of_runs_still_held(store):
    store.hold_writes()
    outcome = trivial_run(1_700_000_000.0)
    store.add_later(outcome)
    assert store.clear_payloads() == 1
    stored = store.get(outcome.run_id)
    assert stored is not None and stored.payload is None
