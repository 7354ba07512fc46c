"""The record store: every run of a hook, kept in a SQLite database inside the workspace.

``<workspace>/.hookstudio/records.sqlite3``, in WAL mode, holds two tables kept apart:

- ``decisions``: the content-free run record of each run (who ran, on what, how it ended, the
  contract's decision record, the effective change, warnings, the chain timeline, the host calls
  the hook made (method, gate, where the reply came from, error code, depth, duration), and a
  copy of the turn error without its message, stderr tail, details or traceback code lines).
  Rows are never removed by the studio.
- ``payloads``: what the run carried (the input, the result, stdout, stderr, the full turn error,
  the values each chain hook returned and printed, the host calls' arguments, replies, error
  messages and output, and the sample it was made on, less the input). The user may clear
  them; the run records survive, and the space the payloads took is reused by later runs (no
  VACUUM).

The schema version is ``PRAGMA user_version``; ``PRAGMA application_id`` marks the file as ours.
``MIGRATIONS`` is the ordered list of schema steps: migration *i* (0-based) takes the schema from
version *i* to *i + 1*. To add version 2, append a function; pending migrations run in one
transaction when a store is opened. A migration must use ``connection.execute`` only
(``executescript`` would commit in the middle of the upgrade).

A file that is not a SQLite database, a SQLite database that is not a record store, or a store
with a newer schema version than this code knows is refused with a ``RecordStoreError`` naming
the file; the studio never deletes or overwrites such a file.

Two processes may write the same store (the CLI while the GUI is open): writes take the write
lock up front (``BEGIN IMMEDIATE``) and wait for it up to the busy timeout.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import IO, Any, NamedTuple, cast

import pydantic_core
from pydantic import BaseModel, ConfigDict

from studio.core.json.deep import deep_json
from studio.core.json.files import syntax_problem
from studio.core.json.pieces import DEPTH, dumps_in_pieces
from studio.core.json.surrogates import escape_lone_surrogates
from studio.core.records.pending_writes import PendingWrites, Written
from studio.core.records.rebuild import rebuild_outcome
from studio.core.records.record_sample import SAMPLE_KEY, sample_payload
from studio.core.run_outcome import HostCall, RunOutcome, Status
from studio.core.turn_error import ContractName, TurnError

STORE_FOLDER = ".hookstudio"
STORE_FILE = "records.sqlite3"
# "HkSt": written to the database header so that a foreign SQLite file is never taken for ours.
APPLICATION_ID = 0x486B5374
DEFAULT_BUSY_TIMEOUT_S = 10.0
PAGE_SIZE = 16384

Migration = Callable[[sqlite3.Connection], None]


class RecordStoreError(Exception):
    """The record store cannot be opened, read or written; the message names the file."""


def store_path(workspace: str | Path) -> Path:
    """Where the record store of ``workspace`` lives (it may not exist yet)."""
    return Path(workspace) / STORE_FOLDER / STORE_FILE


# --- schema ------------------------------------------------------------------------------------


def _v1_initial(connection: sqlite3.Connection) -> None:
    connection.execute(
        """
        CREATE TABLE decisions (
            seq INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL UNIQUE,
            started_at REAL NOT NULL,
            contract TEXT NOT NULL,
            status TEXT NOT NULL,
            error_kind TEXT,
            hook_source TEXT,
            hook_function TEXT,
            loop TEXT,
            sample TEXT,
            duration_ms REAL NOT NULL,
            hook TEXT,
            inspection TEXT NOT NULL,
            effective TEXT,
            turn_error TEXT,
            warnings TEXT NOT NULL,
            chain TEXT NOT NULL,
            stdout_truncated INTEGER NOT NULL DEFAULT 0,
            stderr_truncated INTEGER NOT NULL DEFAULT 0
        )
        """
    )
    connection.execute("CREATE INDEX decisions_newest ON decisions (started_at DESC, seq DESC)")
    connection.execute(
        """
        CREATE TABLE payloads (
            seq INTEGER PRIMARY KEY REFERENCES decisions (seq) ON DELETE CASCADE,
            payload TEXT NOT NULL
        )
        """
    )


def _v2_calls(connection: sqlite3.Connection) -> None:
    # The host calls a hook made (adf.*), content-free; runs stored before have none.
    connection.execute("ALTER TABLE decisions ADD COLUMN calls TEXT NOT NULL DEFAULT '[]'")


MIGRATIONS: tuple[Migration, ...] = (_v1_initial, _v2_calls)
SCHEMA_VERSION = len(MIGRATIONS)

_SUMMARY_COLUMNS = (
    "run_id",
    "started_at",
    "contract",
    "status",
    "error_kind",
    "hook_source",
    "hook_function",
    "loop",
    "sample",
    "duration_ms",
)
# The columns a free-text filter looks in: every summary column that holds text.
_TEXT_COLUMNS = tuple(c for c in _SUMMARY_COLUMNS if c not in ("started_at", "duration_ms"))
_DECISION_JSON_COLUMNS = (
    "hook",
    "inspection",
    "effective",
    "turn_error",
    "warnings",
    "chain",
    "calls",
)
_SUMMARY_SELECT = ", ".join(f"d.{c}" for c in _SUMMARY_COLUMNS)
_DECISION_SELECT = ", ".join(
    f"d.{c}" for c in (*_DECISION_JSON_COLUMNS, "stdout_truncated", "stderr_truncated")
)
_HAS_PAYLOAD = "EXISTS (SELECT 1 FROM payloads p WHERE p.seq = d.seq)"
_INSERT_DECISION = (
    "INSERT INTO decisions (run_id, started_at, contract, status, error_kind, hook_source, "
    "hook_function, loop, sample, duration_ms, hook, inspection, effective, turn_error, "
    "warnings, chain, calls, stdout_truncated, stderr_truncated) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_PAYLOAD = "INSERT INTO payloads (seq, payload) VALUES (?, ?)"
_STORED = "SELECT 1 FROM decisions WHERE run_id = ?"


# --- what is stored ----------------------------------------------------------------------------


class RecordSummary(NamedTuple):
    """One row of the record list: the run record's columns, and whether the payload is kept.

    A tuple rather than a validated model: a list of 100,000 runs is built from SQLite rows as
    they come, at close to the cost of reading them (the store wrote every row itself)."""

    run_id: str
    started_at: float
    contract: ContractName
    status: Status
    error_kind: str | None = None
    hook_source: str | None = None
    hook_function: str | None = None
    loop: str | None = None
    sample: str | None = None
    duration_ms: float = 0.0
    has_payload: bool = True

    @property
    def hook_label(self) -> str | None:
        """``source:function``, or ``None`` for a run without a hook (a chain)."""
        if self.hook_source is None:
            return None
        return (
            f"{self.hook_source}:{self.hook_function}" if self.hook_function else self.hook_source
        )

    @property
    def status_label(self) -> str:
        """``ok``, ``not_applied``, or ``turn_error/<kind>``."""
        return f"{self.status}/{self.error_kind}" if self.error_kind else self.status


class StoredRecord(BaseModel):
    """A stored run: its summary, its content-free run record, its payload (``None`` once
    cleared)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    summary: RecordSummary
    record: dict[str, Any]
    payload: dict[str, Any] | None = None

    @property
    def run_id(self) -> str:
        return self.summary.run_id

    def to_json(self) -> dict[str, Any]:
        """The export shape: the run record, with ``payload`` (``null`` once cleared)."""
        return {**self.record, "payload": self.payload}

    def outcome(self) -> RunOutcome:
        """The run as a ``RunOutcome`` again (see :mod:`studio.core.records.rebuild`)."""
        return rebuild_outcome(self.record, self.payload)


def content_free_turn_error(error: TurnError) -> dict[str, Any]:
    """The turn error without anything the run carried: no message, stderr tail, details or
    traceback code lines; the kind, reason, path, hook, loop, exit, duration and frames stay."""
    return {
        "label": error.label,
        "kind": error.kind,
        "reason": error.reason,
        "path": error.path,
        "hook": error.hook.model_dump(mode="json") if error.hook else None,
        "loop": error.loop,
        "duration_ms": error.duration_ms,
        "exit": error.exit.model_dump(mode="json") if error.exit else None,
        "traceback": [
            {"file": frame.file, "line": frame.line, "function": frame.function}
            for frame in error.traceback
        ],
    }


_CHAIN_PAYLOAD_FIELDS = {"returned", "stdout", "stderr"}


def content_free_call(call: HostCall) -> dict[str, Any]:
    """A host call without what it carried: no arguments, reply, message or output."""
    return {
        "method": call.method,
        "gate": call.gate,
        "answered_by": call.answered_by,
        "code": call.error.code if call.error else None,
        "depth": call.depth,
        "duration_ms": call.duration_ms,
    }


DECISION_KEY = "inspection"
"""Where a run record keeps the contract's decision record (as ``hook-studio run --json`` does)."""


def run_record(outcome: RunOutcome) -> dict[str, Any]:
    """The content-free run record of ``outcome``, as stored and exported: who ran, on what, how
    it ended, and the contract's decision record (under ``inspection``)."""
    return {
        "run_id": outcome.run_id,
        "started_at": outcome.started_at,
        "contract": outcome.contract,
        "status": outcome.status,
        "error_kind": outcome.turn_error.kind if outcome.turn_error else None,
        "sample": outcome.sample,
        "loop": outcome.loop,
        "hook": outcome.hook.model_dump(mode="json") if outcome.hook else None,
        "duration_ms": outcome.duration_ms,
        DECISION_KEY: _plain(outcome.decision_record),
        "effective": _plain(outcome.effective),
        "turn_error": content_free_turn_error(outcome.turn_error) if outcome.turn_error else None,
        "warnings": _plain(outcome.warnings),
        "chain": [
            step.model_dump(mode="json", exclude=_CHAIN_PAYLOAD_FIELDS) for step in outcome.chain
        ],
        "calls": [content_free_call(call) for call in outcome.calls],
        "stdout_truncated": outcome.stdout_truncated,
        "stderr_truncated": outcome.stderr_truncated,
    }


def payload_record(outcome: RunOutcome, sample: dict[str, Any] | None = None) -> dict[str, Any]:
    """What ``outcome`` carried: the part of a record the user may clear; with ``sample``, the
    sample document the run was made on (less its input, see ``record_sample``)."""
    return {
        "input": outcome.input,
        SAMPLE_KEY: sample_payload(outcome.input, sample),
        "result": outcome.result,
        "rejected": outcome.rejected,
        "stdout": outcome.stdout,
        "stderr": outcome.stderr,
        "turn_error": outcome.turn_error,
        "chain": [
            {"returned": step.returned, "stdout": step.stdout, "stderr": step.stderr}
            for step in outcome.chain
        ],
        "calls": [
            {
                "args": call.args,
                "reply": call.reply,
                "message": call.error.message if call.error else None,
                "output": call.output,
            }
            for call in outcome.calls
        ],
    }


PAYLOAD_DEPTH = DEPTH + 1


def _dumps(value: Any, in_pieces: bool = False) -> str:
    """Standard JSON (NaN and infinities become null; unknown objects their ``str``), fast;
    ``in_pieces`` writes a large value a member at a time (see studio.core.json.pieces)."""
    if in_pieces:
        # The payload, its input and result, and their members' items (see json.pieces).
        return dumps_in_pieces(value, depth=PAYLOAD_DEPTH, leaf=_dumps)
    # pydantic_core refuses a lone surrogate, and past a few hundred levels it either refuses
    # or, with serialize_unknown, writes the rest as "..."; a hook's result may hold either,
    # and its run is recorded whole all the same. A real "..." string only costs the slower way.
    try:
        text = pydantic_core.to_json(value, inf_nan_mode="null", serialize_unknown=True).decode()
    except pydantic_core.PydanticSerializationError:
        return _dumps_standard(value)
    return _dumps_standard(value) if '"..."' in text else text


def _dumps_standard(value: Any) -> str:
    """The standard encoder, with each lone surrogate kept as its escape (``\\ud800``): valid
    JSON that SQLite can store as UTF-8, and that reads back as the same string."""
    with deep_json():
        text = json.dumps(value, ensure_ascii=False, default=_jsonable)
    return escape_lone_surrogates(text)


def _jsonable(value: Any) -> Any:
    return value.model_dump() if isinstance(value, BaseModel) else str(value)


def _text(text: str | None) -> str | None:
    """A name for a plain text column; a file name that is not UTF-8 is kept as its escapes."""
    return None if text is None else escape_lone_surrogates(text)


def _plain(value: Any) -> Any:
    return None if value is None else _loads(_dumps(value))


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    with deep_json():
        return json.loads(text)


# --- the store ---------------------------------------------------------------------------------

_Run = tuple[RunOutcome, dict[str, Any] | None]
"""A run to store, with the sample document it was made on."""


class RecordStore:
    """The records of one workspace. Thread-safe; several processes may write the same file."""

    def __init__(
        self,
        path: str | Path,
        *,
        create: bool = True,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        migrations: Sequence[Migration] = MIGRATIONS,
    ) -> None:
        self.path = Path(path)
        self.write_in_pieces = False
        self._lock = threading.RLock()
        self._pending: PendingWrites[_Run] = PendingWrites("record-writes", self._add_together)
        self._migrations = tuple(migrations)
        if not create and not self.path.exists():
            raise RecordStoreError(f"{self.path}: no record store here")
        if self.path.exists() and not self.path.is_file():
            raise RecordStoreError(f"{self.path}: is not a file")
        self._busy_timeout_s = busy_timeout_s
        self._connect("rwc" if create else "rw")

    def _connect(self, mode: str) -> None:
        uri = self.path.resolve().as_uri()
        try:
            self._db = sqlite3.connect(
                f"{uri}?mode={mode}",
                uri=True,
                timeout=self._busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise RecordStoreError(f"{self.path}: cannot open the record store ({exc})") from None
        self._closed = False
        try:
            self._prepare()
        except BaseException:
            self._db.close()
            self._closed = True
            raise
        self._identity = self._file_identity()

    def _file_identity(self) -> tuple[int, int] | None:
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def _reopen_if_replaced(self) -> str | None:
        """A database deleted or replaced behind the studio's back (by hand, or by a hook run
        without the sandbox) would take new runs with it silently: start a new one instead,
        and say so."""
        if self._file_identity() == self._identity:
            return None
        self._db.close()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RecordStoreError(
                f"{self.path.parent}: cannot create the record folder ({exc.strerror or exc})"
            ) from None
        self._connect("rwc")
        return (
            f"{self.path} was deleted or replaced while the studio had it open; a new one was "
            "started, which holds none of the runs the old one held"
        )

    @classmethod
    def open(cls, workspace: str | Path, **options: Any) -> RecordStore:
        """The store of ``workspace``, creating ``.hookstudio/`` and the database if needed."""
        workspace = Path(workspace)
        if not workspace.is_dir():
            raise RecordStoreError(f"{workspace}: no such workspace folder")
        path = store_path(workspace)
        try:
            path.parent.mkdir(exist_ok=True)
        except OSError as exc:
            raise RecordStoreError(
                f"{path.parent}: cannot create the record folder ({exc.strerror or exc})"
            ) from None
        return cls(path, **options)

    # lifecycle

    def __enter__(self) -> RecordStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Write the records still pending, then close."""
        self._pending.close()
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()

    @property
    def schema_version(self) -> int:
        with self._reading() as db:
            return int(db.execute("PRAGMA user_version").fetchone()[0])

    # opening: check that the file is ours, then switch to WAL and migrate

    def _prepare(self) -> None:
        db = self._db
        try:
            # Reads only: nothing is written until the file is known to be ours (or empty). One
            # statement sees one version of the file, never half of another process's upgrade.
            application_id, version, objects = db.execute(
                "SELECT a.application_id, v.user_version, (SELECT count(*) FROM sqlite_master)"
                " FROM pragma_application_id() AS a, pragma_user_version() AS v"
            ).fetchone()
        except sqlite3.OperationalError as exc:  # locked, unreadable, out of memory...
            raise RecordStoreError(f"{self.path}: cannot open the record store ({exc})") from None
        except sqlite3.DatabaseError as exc:  # not a database, malformed
            raise RecordStoreError(
                f"{self.path}: cannot be used as a record store: the file is not a SQLite "
                f"database, or it is damaged ({exc}); it was left untouched"
            ) from None
        fresh = application_id == 0 and version == 0 and objects == 0
        if application_id != APPLICATION_ID and not fresh:
            raise RecordStoreError(
                f"{self.path}: not a Hook Studio record store: a SQLite database of another "
                f"application (application id {application_id}, {objects} schema objects); "
                "it was left untouched"
            )
        self._refuse_newer(version)
        try:
            if fresh:
                # Large payloads span fewer overflow pages (a no-op once the file has content).
                db.execute(f"PRAGMA page_size = {PAGE_SIZE:d}")
            self._use_wal(db)
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as exc:
            raise RecordStoreError(f"{self.path}: cannot open the record store ({exc})") from None
        if version < len(self._migrations):
            self._migrate()

    def _use_wal(self, db: sqlite3.Connection) -> None:
        """Switch the file to write-ahead logging unless it is already. SQLite answers "database
        is locked" at once, without waiting, while another process has the file open (two
        studios opening a new store together): the switch is tried again until the busy
        timeout has passed, by when the other has usually made the switch itself."""
        deadline = time.monotonic() + self._busy_timeout_s
        pause = 0.001
        while db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            try:
                db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:
                    raise
                if time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(2 * pause, 0.05)

    def _refuse_newer(self, version: int) -> None:
        if version > len(self._migrations):
            raise RecordStoreError(
                f"{self.path}: the record store has schema version {version}, newer than the "
                f"{len(self._migrations)} this Hook Studio knows; open it with a newer Hook "
                "Studio (the file was left untouched)"
            )

    def _migrate(self) -> None:
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise RecordStoreError(
                f"{self.path}: cannot upgrade the record store ({exc})"
            ) from None
        start = None
        try:
            # Another process may have upgraded the store while this one waited for the lock.
            start = db.execute("PRAGMA user_version").fetchone()[0]
            self._refuse_newer(start)
            for version in range(start, len(self._migrations)):
                self._migrations[version](db)
                db.execute(f"PRAGMA user_version = {version + 1:d}")
            db.execute(f"PRAGMA application_id = {APPLICATION_ID:d}")
            db.execute("COMMIT")
        except BaseException as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if isinstance(exc, RecordStoreError | KeyboardInterrupt | SystemExit):
                raise
            raise RecordStoreError(
                f"{self.path}: could not upgrade the record store from schema version {start} to "
                f"{len(self._migrations)} ({type(exc).__name__}: {exc}); nothing was changed"
            ) from exc

    # access helpers

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        # A read shows every run whose record was handed over before it.
        self._pending.wait()
        with self._lock:
            if self._closed:
                raise RecordStoreError(f"{self.path}: the record store is closed")
            try:
                yield self._db
            except sqlite3.Error as exc:
                raise RecordStoreError(f"{self.path}: cannot read the records ({exc})") from None

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._closed:
                raise RecordStoreError(f"{self.path}: the record store is closed")
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                yield db
                db.execute("COMMIT")
            except BaseException as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise RecordStoreError(
                        f"{self.path}: cannot write the records ({exc})"
                    ) from None
                raise

    # writing

    def add(self, outcome: RunOutcome, sample: dict[str, Any] | None = None) -> str | None:
        """Store ``outcome``: its run record and its payload (with ``sample``, the document the
        run was made on), in one transaction. Returns what the caller should know about where
        it went (a database started anew), if anything."""
        ((notice, error),) = self._add_together([(outcome, sample)])
        if error is not None:
            raise error
        return cast("str | None", notice)

    def _add_together(self, runs: Sequence[_Run]) -> list[Written]:
        """:meth:`add` of each of ``runs`` in one transaction; for each, what :meth:`add` would
        return or raise. A run already stored fails alone; if the transaction cannot be
        written, each run is tried again in a transaction of its own."""
        written: list[Written] = []
        with self._lock:
            notice = None if self._closed else self._reopen_if_replaced()
        try:
            with self._writing() as db:
                for outcome, sample in runs:
                    # Each run is encoded just before its insert, which lets go of the
                    # interpreter: a run going on meanwhile never waits long for it.
                    try:
                        row, payload = self._rows(outcome, sample)
                    except Exception as exc:
                        written.append((None, exc))
                        continue
                    written.append((None, self._insert(db, row, payload)))
        except RecordStoreError:
            if len(runs) == 1:
                raise
            alone: list[Written] = []
            for run in runs:
                try:
                    alone.append(self._add_together([run])[0])
                except RecordStoreError as exc:
                    alone.append((None, exc))
            return alone
        # The newest run is the one whose runner found the database gone and waits to say so.
        for index in reversed(range(len(written))):
            if written[index][1] is None:
                written[index] = (notice, None)
                break
        return written

    def _rows(
        self, outcome: RunOutcome, sample: dict[str, Any] | None
    ) -> tuple[tuple[Any, ...], str]:
        """The row of ``outcome`` in ``decisions`` and the text of its payload."""
        # The run record's JSON columns are written straight from the outcome: the text is the
        # same as that of run_record's values, which are this very text read back.
        hook = outcome.hook
        error = outcome.turn_error
        row = (
            outcome.run_id,
            outcome.started_at,
            outcome.contract,
            outcome.status,
            error.kind if error else None,
            _text(hook.source) if hook else None,
            _text(hook.function) if hook else None,
            _text(outcome.loop),
            _text(outcome.sample),
            outcome.duration_ms,
            _dumps(hook.model_dump(mode="json")) if hook else None,
            _dumps(outcome.decision_record),
            None if outcome.effective is None else _dumps(outcome.effective),
            None if error is None else _dumps(content_free_turn_error(error)),
            _dumps(outcome.warnings),
            _dumps(
                [
                    step.model_dump(mode="json", exclude=_CHAIN_PAYLOAD_FIELDS)
                    for step in outcome.chain
                ]
            ),
            _dumps([content_free_call(call) for call in outcome.calls]),
            int(outcome.stdout_truncated),
            int(outcome.stderr_truncated),
        )
        return row, _dumps(payload_record(outcome, sample), self.write_in_pieces)

    def _insert(
        self, db: sqlite3.Connection, row: tuple[Any, ...], payload: str
    ) -> RecordStoreError | None:
        """Insert one run inside the open transaction; a run already stored is refused (the
        statement is undone, the transaction goes on)."""
        try:
            seq = db.execute(_INSERT_DECISION, row).lastrowid
        except sqlite3.IntegrityError:
            if db.execute(_STORED, (row[0],)).fetchone():
                return RecordStoreError(f"{self.path}: run {row[0]} is already stored")
            raise
        db.execute(_INSERT_PAYLOAD, (seq, payload))
        return None

    def add_later(
        self, outcome: RunOutcome, sample: dict[str, Any] | None = None
    ) -> Future[str | None]:
        """:meth:`add` on the store's writing thread, after the runs handed over before it
        (together with those that follow it closely, see ``pending_writes``); the future holds
        what :meth:`add` returns or raises. The caller goes on at once."""
        try:
            return self._pending.submit((outcome, sample))
        except RuntimeError:
            refused: Future[str | None] = Future()
            refused.set_exception(RecordStoreError(f"{self.path}: the record store is closed"))
            return refused

    def write_soon(self) -> None:
        """Write the records handed over so far without waiting for more runs to join them
        (held ones still wait for their release)."""
        self._pending.hurry()

    def flush(self) -> None:
        """Return once every record handed to :meth:`add_later` so far is written (held ones
        are let go)."""
        self._pending.let_go()
        self._pending.wait()

    def hold_writes(self) -> int:
        """Keep the records handed over from now on from being written until
        :meth:`release_writes` of the number returned (at most a couple of seconds each; see
        ``pending_writes``); the reads meanwhile wait for them as for any write."""
        return self._pending.hold()

    def release_writes(self, hold: int) -> None:
        self._pending.release(hold)

    def replaced(self) -> bool:
        """Whether the database file was deleted or replaced since it was opened; the next
        :meth:`add` then starts a new one and says so."""
        return self._file_identity() != self._identity

    def clear_payloads(self, run_ids: Iterable[str] | None = None) -> int:
        """Forget the payloads of ``run_ids`` (all when ``None``); the run records stay.

        Returns how many payloads were cleared. The cleared content is overwritten in the file
        (secure delete) and its pages are reused by later runs; the file does not shrink. The
        runs handed over before it are written first, so theirs are cleared too.
        """
        self.flush()
        with self._lock:
            if self._closed:
                raise RecordStoreError(f"{self.path}: the record store is closed")
            try:
                try:
                    self._db.execute("PRAGMA secure_delete = ON")  # zero what is deleted
                except sqlite3.Error as exc:
                    raise RecordStoreError(f"{self.path}: cannot clear payloads ({exc})") from None
                with self._writing() as db:
                    if run_ids is None:
                        cleared = db.execute("DELETE FROM payloads").rowcount
                    else:
                        cleared = db.execute(
                            "DELETE FROM payloads WHERE seq IN (SELECT seq FROM decisions "
                            "WHERE run_id IN (SELECT value FROM json_each(?)))",
                            (json.dumps(list(run_ids)),),
                        ).rowcount
            finally:
                with suppress(sqlite3.Error):
                    self._db.execute("PRAGMA secure_delete = OFF")
            if cleared:
                # Best effort: move the zeroed pages into the database and empty the WAL, so
                # the cleared content does not linger there either. Another reader may prevent
                # it; the WAL is then reset by a later checkpoint.
                with suppress(sqlite3.Error):
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            return cleared

    # reading

    def count(self) -> int:
        """How many runs are stored (with or without payload)."""
        with self._reading() as db:
            return int(db.execute("SELECT count(*) FROM decisions").fetchone()[0])

    def payload_count(self) -> int:
        """How many runs still have their payload."""
        with self._reading() as db:
            return int(db.execute("SELECT count(*) FROM payloads").fetchone()[0])

    def list(
        self,
        limit: int | None = None,
        *,
        contract: str | None = None,
        status: str | None = None,
        hook: str | None = None,
        loop: str | None = None,
        sample: str | None = None,
        kind: str | None = None,
        text: str | None = None,
    ) -> list[RecordSummary]:
        """The stored runs, newest first, at most ``limit``.

        Each filter given must match: ``contract``, ``status``, ``loop``, ``sample`` and the turn
        error ``kind`` exactly; ``hook`` is the source (``lib/policy.py``) or
        ``source:function``; ``text`` is a case-insensitive substring of the run id, contract,
        status, kind, hook source or function, loop or sample.
        """
        where: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("contract", contract),
            ("status", status),
            ("loop", loop),
            ("sample", sample),
            ("error_kind", kind),
        ):
            if value is not None:
                where.append(f"d.{column} = ?")
                params.append(value)
        if hook is not None:
            where.append("(d.hook_source = ? OR d.hook_source || ':' || d.hook_function = ?)")
            params += [hook, hook]
        if text:
            pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            searched = _TEXT_COLUMNS
            where.append("(" + " OR ".join(f"d.{c} LIKE ? ESCAPE '\\'" for c in searched) + ")")
            params += [pattern] * len(searched)
        sql = f"SELECT {_SUMMARY_SELECT}, {_HAS_PAYLOAD} FROM decisions d"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY d.started_at DESC, d.seq DESC LIMIT ?"
        params.append(-1 if limit is None else max(limit, 0))
        with self._reading() as db:
            rows = db.execute(sql, params).fetchall()
        # ``has_payload`` comes as SQLite's 0 or 1, which compares equal to False or True.
        return list(map(RecordSummary._make, rows))

    def get(self, run_id: str) -> StoredRecord | None:
        """The stored run ``run_id``, or ``None`` when there is none."""
        with self._reading() as db:
            row = db.execute(
                f"SELECT {_SUMMARY_SELECT}, p.payload IS NOT NULL, {_DECISION_SELECT}, p.payload "
                "FROM decisions d LEFT JOIN payloads p ON p.seq = d.seq WHERE d.run_id = ?",
                (run_id,),
            ).fetchone()
        return None if row is None else self._record(row)

    def export_jsonl(self, run_ids: Iterable[str] | None, stream: IO[str]) -> int:
        """Write one JSON object per line for each of ``run_ids`` that is stored (in that order;
        all runs newest first when ``None``): the run record and ``payload`` (``null`` once
        cleared). Returns the number of lines written."""
        ids = [s.run_id for s in self.list()] if run_ids is None else list(run_ids)
        written = 0
        for run_id in ids:
            record = self.get(run_id)
            if record is None:
                continue
            with deep_json():
                line = json.dumps(record.to_json(), allow_nan=False)
            stream.write(line + "\n")
            written += 1
        return written

    # rows to models

    def _summary(self, row: Sequence[Any]) -> RecordSummary:
        return RecordSummary._make(
            (*row[: len(_SUMMARY_COLUMNS)], bool(row[len(_SUMMARY_COLUMNS)]))
        )

    def _record(self, row: Sequence[Any]) -> StoredRecord:
        summary = self._summary(row)
        rest = row[len(_SUMMARY_COLUMNS) + 1 :]
        texts = (*rest[: len(_DECISION_JSON_COLUMNS)], rest[-1])
        parts = zip((*_DECISION_JSON_COLUMNS, "payload"), texts, strict=True)
        values: dict[str, Any] = {}
        for name, text in parts:
            try:
                values[name] = _loads(text)
            except json.JSONDecodeError as exc:
                raise RecordStoreError(
                    f"{self.path}: the record of run {summary.run_id} is damaged: its {name} is "
                    f"not JSON ({syntax_problem(exc)} at line {exc.lineno}, column {exc.colno})"
                ) from None
            except ValueError as exc:
                raise RecordStoreError(
                    f"{self.path}: the record of run {summary.run_id} is damaged: its {name} "
                    f"cannot be read ({exc})"
                ) from None
        payload = values.pop("payload")
        columns = values
        record = {
            "run_id": summary.run_id,
            "started_at": summary.started_at,
            "contract": summary.contract,
            "status": summary.status,
            "error_kind": summary.error_kind,
            "sample": summary.sample,
            "loop": summary.loop,
            "hook": columns["hook"],
            "duration_ms": summary.duration_ms,
            "inspection": columns["inspection"],
            "effective": columns["effective"],
            "turn_error": columns["turn_error"],
            "warnings": columns["warnings"],
            "chain": columns["chain"],
            "calls": columns["calls"],
            "stdout_truncated": bool(rest[len(_DECISION_JSON_COLUMNS)]),
            "stderr_truncated": bool(rest[len(_DECISION_JSON_COLUMNS) + 1]),
        }
        return StoredRecord(summary=summary, record=record, payload=payload)


# --- presentation ------------------------------------------------------------------------------

TABLE_HEADERS = ("time", "contract", "hook", "loop", "sample", "status", "duration ms")


def _cell(value: str | None) -> str:
    if not value:
        return "-"
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in value)


def format_records_table(records: Sequence[RecordSummary]) -> list[str]:
    """The records as aligned text lines, a header first: the local start time to the second,
    the contract, hook, loop, sample, ``status`` or ``turn_error/<kind>``, and the duration."""
    rows = [TABLE_HEADERS] + [
        (
            datetime.fromtimestamp(r.started_at).isoformat(timespec="seconds"),
            r.contract,
            _cell(r.hook_label),
            _cell(r.loop),
            _cell(r.sample),
            _cell(r.status_label),
            f"{r.duration_ms:.1f}",
        )
        for r in records
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE_HEADERS))]
    return [
        "  ".join(
            [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=False)]
            + [row[-1].rjust(widths[-1])]
        )
        for row in rows
    ]
