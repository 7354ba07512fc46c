"""The Records view over a large record store: time to the first rows painted, the GUI thread's
longest block per filter keystroke, memory per record, and the store's list against raw SQL.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/records_view.py \
        [--records N] [--runs N] [--json]

The store is filled once in a temporary folder: a few dozen varied runs go through
``RecordStore.add``, and SQL copies those very rows (new run ids, earlier start times, varied
durations, one payload in ten cleared) up to ``--records``. Each run of the view is a fresh
process (so that memory is measured from a clean heap): it opens the Records view offscreen,
times ``set_store`` to the first paint of the table with rows in it, reads the resident memory
before and after every run is loaded, then types ``--query`` into the filter one key at a time.
A 5 ms timer notes the longest gap between its ticks from each key until the view has applied
it; the block is that gap less the timer's interval. The list is timed in this process, against
the same columns read with one raw ``SELECT`` of the same rows in the same order.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import itertools

from studio.core.records.store import RecordStore, store_path
from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import HookRef, turn_error

TARGETS = {"first_paint_ms": 300.0, "keystroke_block_ms": 50.0, "list_vs_sql": 1.3}
T0 = 1_780_000_000.0
HOOKS = (
    ("lib/policy.py", "transform", "pre_llm"),
    ("lib/policy.py", "trim_tools", "pre_llm"),
    ("lib/failing.py", "typo_key", "pre_llm"),
    ("lib/prepare.py", "prepare_step", "step"),
    (None, None, "chain"),
)
SAMPLES = ("support-ticket", "refund-twice", "step-escalated", "chain-refund", "long-history")
LOOPS = ("main", "reviewer", "researcher")
REQUEST = {
    "system": "You are a support agent.",
    "messages": [
        {"role": "user", "content": "Why was order 4821 refunded twice?"},
        {"role": "assistant", "content": "Let me look at the ledger for that order."},
    ],
    "tools": [{"name": "fs_read"}, {"name": "shell"}, {"name": "ledger_lookup"}],
}


def template_outcomes(count: int) -> list[RunOutcome]:
    """``count`` varied runs: every contract, status, loop and sample, with and without a hook."""
    outcomes = []
    for i in range(count):
        source, function, contract = HOOKS[i % len(HOOKS)]
        hook = HookRef(source=source, function=function, contract=contract) if source else None
        status = ("ok", "ok", "not_applied", "turn_error")[i % 4]
        loop = LOOPS[i % len(LOOPS)]
        error = None
        if status == "turn_error":
            error = turn_error(
                ("exception", "timeout", "invalid_result")[i % 3],
                f"the hook failed on try {i}",
                hook=hook,
                loop=loop,
                duration_ms=5.0,
            )
        outcomes.append(
            RunOutcome(
                started_at=T0 + i,
                contract=contract,  # type: ignore[arg-type]
                status=status,  # type: ignore[arg-type]
                sample=SAMPLES[i % len(SAMPLES)],
                loop=loop,
                hook=hook,
                duration_ms=3.0 + i,
                input=REQUEST,
                result=None if error else {**REQUEST, "tools": REQUEST["tools"][:1]},
                decision_record={"contract": contract, "loop": loop, "applied": status == "ok"},
                turn_error=error,
                stdout="kept 1 tool\n" if status == "ok" else "",
            )
        )
    return outcomes


def fill_store(workspace: Path, records: int, templates: int = 40) -> None:
    """A store of ``records`` runs: ``templates`` stored by the store, the rest SQL copies."""
    with RecordStore.open(workspace) as store:
        for outcome in template_outcomes(templates):
            store.add(outcome)
    db = sqlite3.connect(store_path(workspace), isolation_level=None)
    columns = [row[1] for row in db.execute("PRAGMA table_info(decisions)")]
    copied = [c for c in columns if c not in ("seq", "run_id", "started_at", "duration_ms")]
    db.execute("BEGIN")
    db.execute(
        f"""
        WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
        INSERT INTO decisions (run_id, started_at, duration_ms, {", ".join(copied)})
        SELECT lower(hex(randomblob(16))), ? - 86400.0 * 30 + n.i * 17.0,
               t.duration_ms * (0.5 + (n.i % 97) / 48.0), {", ".join("t." + c for c in copied)}
        FROM n JOIN decisions t ON t.seq = 1 + n.i % ?
        """,
        (records - templates, T0, templates),
    )
    db.execute(
        "INSERT INTO payloads (seq, payload) SELECT d.seq, p.payload FROM decisions d "
        "JOIN payloads p ON p.seq = 1 + (d.seq - 1) % ? WHERE d.seq > ? AND d.seq % 10 != 3",
        (templates, templates),
    )
    db.execute("COMMIT")
    db.close()


# --- the store's list against raw SQL ------------------------------------------------------------

RAW_SQL = (
    "SELECT d.run_id, d.started_at, d.contract, d.status, d.error_kind, d.hook_source, "
    "d.hook_function, d.loop, d.sample, d.duration_ms, "
    "EXISTS (SELECT 1 FROM payloads p WHERE p.seq = d.seq) "
    "FROM decisions d ORDER BY d.started_at DESC, d.seq DESC"
)


def list_against_sql(workspace: Path, runs: int) -> dict[str, float]:
    """Medians of ``runs`` pairs, each the list then the raw SELECT; the ratio is the median of
    the pairs' ratios (the machine's load drifts less within a pair than across the runs)."""
    store = RecordStore(store_path(workspace), create=False)
    raw = sqlite3.connect(store_path(workspace))
    listed, selected = [], []
    try:
        for _ in range(runs):
            started = time.perf_counter()
            rows = store.list()
            listed.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            plain = raw.execute(RAW_SQL).fetchall()
            selected.append((time.perf_counter() - started) * 1000)
            assert len(rows) == len(plain)
            del rows, plain
    finally:
        raw.close()
        store.close()
    return {
        "list_ms": statistics.median(listed),
        "sql_ms": statistics.median(selected),
        "ratio": statistics.median(a / b for a, b in zip(listed, selected, strict=True)),
    }


# --- the view, in a child process ---------------------------------------------------------------


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


WAIT_S = 120.0


def _within(since: float, what: str) -> None:
    """Stop with a message rather than wait for ever."""
    if time.perf_counter() - since > WAIT_S:
        raise RuntimeError(f"timed out after {WAIT_S:.0f} s waiting for {what}")


def measure_view(workspace: Path, records: int, query: str) -> dict[str, Any]:
    from PySide6.QtCore import QElapsedTimer, QEvent, QEventLoop, QObject, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QTableView

    from studio.ui.engine_bridge import EngineBridge
    from studio.ui.records_view import RecordsView

    app = QApplication.instance() or QApplication(sys.argv[:1])
    store = RecordStore(store_path(workspace), create=False)
    bridge = EngineBridge()
    view = RecordsView(bridge)
    view.resize(1300, 420)
    view.show()
    table = view.findChild(QTableView, "recordsTable")
    count = view.findChild(QLabel, "recordsCount")
    field = view.findChild(QLineEdit, "recordsFilter")
    assert table is not None and count is not None and field is not None
    loop = QEventLoop()
    for _ in range(20):
        app.processEvents()

    class PaintWatch(QObject):
        painted = False

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and table.model().rowCount() > 0:
                self.painted = True
            return False

    watch = PaintWatch()
    table.viewport().installEventFilter(watch)
    before = resident_bytes()
    started = time.perf_counter()
    view.set_store(store)
    while not watch.painted:
        loop.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
        _within(started, "the first rows to be painted")
    first_paint_ms = (time.perf_counter() - started) * 1000
    everything = f"{records:,} runs"
    while count.text() != everything:
        loop.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
        _within(started, f"every run to be loaded (the view says {count.text()!r})")
    loaded_ms = (time.perf_counter() - started) * 1000
    for _ in range(20):
        app.processEvents()
    after = resident_bytes()

    clock = QElapsedTimer()
    ticks: list[int] = []
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.append(clock.elapsed()))
    field.setFocus()
    blocks = []
    clock.start()
    timer.start()
    for typed, char in enumerate(query, 1):
        ticks.clear()
        ticks.append(clock.elapsed())
        QTimer.singleShot(0, lambda c=char: QTest.keyClick(field, c))
        settle = QElapsedTimer()
        settle.start()
        pressed = time.perf_counter()
        while field.text() != query[:typed]:
            loop.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 20)
            _within(pressed, f"the key {char!r} to reach the filter")
        while getattr(view, "filter_pending", False) or settle.elapsed() < 60:
            loop.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 20)
            _within(pressed, f"the filter {field.text()!r} to be applied")
        gaps = [b - a for a, b in itertools.pairwise(ticks)]
        blocks.append(max(0, max(gaps, default=0) - timer.interval()))
    timer.stop()
    shown = count.text()
    view.set_store(None)
    bridge.shutdown()
    store.close()
    return {
        "first_paint_ms": first_paint_ms,
        "all_loaded_ms": loaded_ms,
        "bytes_per_record": (after - before) / records,
        "keystroke_blocks_ms": blocks,
        "filtered": shown,
    }


def child_main(workspace: Path, records: int, query: str) -> int:
    print(json.dumps(measure_view(workspace, records, query)), flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--query", default="refund-tw")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child_main(Path(args.child), args.records, args.query)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        fill_store(workspace, args.records)
        listing = list_against_sql(workspace, max(args.runs, 11))
        views = []
        for _ in range(args.runs):
            child = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    str(workspace),
                    "--records",
                    str(args.records),
                    "--query",
                    args.query,
                ],
                capture_output=True,
                text=True,
            )
            if child.returncode != 0:
                sys.stderr.write(child.stderr)
                print(f"a run of the view stopped early (exit {child.returncode})")
                return 1
            views.append(json.loads(child.stdout.strip().splitlines()[-1]))
    worst = [max(v["keystroke_blocks_ms"]) for v in views]
    figures = {
        "records": args.records,
        "runs": args.runs,
        "first_paint_ms": statistics.median(v["first_paint_ms"] for v in views),
        "all_loaded_ms": statistics.median(v["all_loaded_ms"] for v in views),
        "keystroke_block_ms": statistics.median(worst),
        "keystroke_block_ms_max": max(worst),
        "bytes_per_record": statistics.median(v["bytes_per_record"] for v in views),
        "list_ms": listing["list_ms"],
        "sql_ms": listing["sql_ms"],
        "list_vs_sql": listing["ratio"],
        "filtered": views[-1]["filtered"],
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"records view, {args.records:,} records, medians of {args.runs} runs")
    rows = (
        ("first rows painted", figures["first_paint_ms"], "ms", "first_paint_ms"),
        ("longest block per keystroke", figures["keystroke_block_ms"], "ms", "keystroke_block_ms"),
        ("store list / raw SQL", figures["list_vs_sql"], "x", "list_vs_sql"),
    )
    for name, value, unit, key in rows:
        target = TARGETS[key]
        print(
            f"  {name:<30} {value:9.2f} {unit:<2}  target <= {target:g}  ratio {value / target:.2f}"
        )
    print(f"  {'store list':<30} {figures['list_ms']:9.2f} ms  raw SQL {figures['sql_ms']:.2f} ms")
    print(f"  {'every run loaded':<30} {figures['all_loaded_ms']:9.2f} ms")
    print(f"  {'memory per record':<30} {figures['bytes_per_record']:9.0f} B")
    print(f"  {'worst keystroke, any run':<30} {figures['keystroke_block_ms_max']:9.2f} ms")
    print(f"  filter {args.query!r}: {figures['filtered']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
