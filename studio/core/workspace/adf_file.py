"""An ADF agent file (``.adf``): one SQLite database holding an agent's config, files, history
and logs (spec/adf-file.md).

The studio follows the file format's safe recipe (§4): every connection is read-write with a
busy timeout (a read-only one leaves ``-wal``/``-shm`` behind), lives only as long as one read or
one transaction, and never changes a pragma, the journal mode or the identity rows, and never
vacuums. Before anything touches SQLite the file's first bytes are checked, so an empty file or
one that is not SQLite is reported without being opened; a file SQLite cannot read is left
exactly as it was.

Reading gives plain data (:class:`AdfMeta`, :class:`AdfSource`, :class:`LoopRow`,
:class:`LogRow`); the two edits (:meth:`AdfFile.save_config_text` for ``pre_llm_hook``,
:meth:`AdfFile.write_source` for a hook source) each run in one ``BEGIN IMMEDIATE`` transaction
that re-reads what it changes.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from urllib.parse import quote

from studio.core.file_reads import read_bytes
from studio.core.json.deep import MAX_DEPTH, deep_json
from studio.core.workspace.file_stamps import settled_stamp

ADF_VERSION = "0.2"
KNOWN_SCHEMAS = (28, 29)
BUSY_TIMEOUT_S = 5.0
SQLITE_HEADER = b"SQLite format 3\x00"
SIDECAR_SUFFIXES = ("-wal", "-shm")

MIME_TYPES = {
    ".ts": "text/typescript",
    ".js": "text/javascript",
    ".md": "text/markdown",
    ".json": "application/json",
}
OCTET_STREAM = "application/octet-stream"

# The runtime's pre-LLM hook log rows (spec/js-runtime.md §1, Logs).
HOOK_LOG_ORIGIN = "pre_llm_hook"
HOOK_ERROR_EVENT = "pre_llm_hook_error"

OPEN_ELSEWHERE = (
    "the agent looks open in ADF ({sidecars} beside the file): close the agent in ADF first, or "
    "ADF will overwrite this change and will not see it until the agent is reloaded"
)
SOURCE_OPEN_ELSEWHERE = (
    "the agent looks open in ADF: if ADF has this file open in its editor, it may write its "
    "own copy back over this change"
)

# Our own connections, one at a time, so that sidecars seen before connecting are another
# process's and never this process's.
_OWN_CONNECTION = threading.RLock()


class AdfFileError(Exception):
    """An ``.adf`` file that cannot be read or changed as asked; the message names the file."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class AdfUnreadable(AdfFileError):
    """Missing, empty, not SQLite, or a database SQLite cannot read (corrupt)."""


class AdfNotAgent(AdfFileError):
    """A SQLite database without ``adf_meta``: not an ADF agent file."""


class AdfBusy(AdfFileError):
    """Another connection held the database past the busy timeout; nothing was changed."""


class AdfReadOnly(AdfFileError):
    """A version or schema the studio does not know: it reads the file but never writes it."""


class AdfOpenElsewhere(AdfFileError):
    """``-wal``/``-shm`` beside the file: probably open in ADF, which would overwrite a config
    change and not see it until reload."""


class AdfProtected(AdfFileError):
    """A ``read_only`` file, or a path that is not a valid ``adf_files`` key."""


class AdfConfigError(AdfFileError):
    """``adf_config`` row 1 is missing or its ``config_json`` is not a JSON object."""


def now_iso() -> str:
    """Now as the runtime writes it: ISO 8601, milliseconds, ``Z``."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def mime_type_for(path: str) -> str:
    return MIME_TYPES.get(PurePosixPath(path).suffix.lower(), OCTET_STREAM)


def sidecars(path: str | Path) -> list[Path]:
    """The ``-wal``/``-shm`` files beside ``path`` right now."""
    path = Path(path)
    return [p for s in SIDECAR_SUFFIXES if (p := path.with_name(path.name + s)).exists()]


def source_path_problem(path: str) -> str | None:
    """Why ``path`` is not an ``adf_files`` key the studio may write (exact relative POSIX path,
    ``lib/x.ts``, never ``./lib/x.ts``), or None."""
    if not path or path != path.strip():
        return "a file path must be non-empty, without spaces around it"
    if "\\" in path or path.startswith("/") or "\x00" in path:
        return "a file path is relative, with '/' between folders"
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "a file path has no empty, '.' or '..' parts (write lib/x.ts, not ./lib/x.ts)"
    return None


@dataclass(frozen=True)
class AdfMeta:
    """The identity rows of ``adf_meta`` (key → value), and what the studio makes of them."""

    rows: dict[str, str]

    @property
    def adf_version(self) -> str | None:
        return self.rows.get("adf_version")

    @property
    def schema_version(self) -> int | None:
        """``adf_schema_version`` (``schema_version`` before v14) as a number; None when absent
        or not a number."""
        raw = self.rows.get("adf_schema_version", self.rows.get("schema_version"))
        try:
            return int(raw) if raw is not None else None
        except ValueError:
            return None

    @property
    def name(self) -> str | None:
        return self.rows.get("adf_name")

    @property
    def handle(self) -> str | None:
        return self.rows.get("adf_handle")

    @property
    def updated_at(self) -> str | None:
        return self.rows.get("adf_updated_at")

    @property
    def read_only_reason(self) -> str | None:
        """Why the studio must not write this file (a version or schema it does not know)."""
        if self.adf_version != ADF_VERSION:
            return (
                f"ADF file version {self.adf_version!r} is not {ADF_VERSION!r}, the one the studio "
                "knows; it is opened read-only"
            )
        schema = self.schema_version
        if schema not in KNOWN_SCHEMAS:
            raw = self.rows.get("adf_schema_version", self.rows.get("schema_version"))
            known = " and ".join(str(s) for s in KNOWN_SCHEMAS)
            newer = schema is not None and schema > max(KNOWN_SCHEMAS)
            what = "newer than" if newer else "not one of"
            return (
                f"schema version {raw!r} is {what} the ones the studio knows ({known}); it is "
                "opened read-only"
            )
        return None


Protection = Literal["read_only", "no_delete", "none"]


@dataclass(frozen=True)
class AdfFileEntry:
    """One row of ``adf_files`` without its content: ``size`` as the row says, ``length`` the
    content's actual number of bytes."""

    path: str
    mime_type: str | None
    size: int | None
    length: int
    protection: str
    authorized: bool
    created_at: str | None
    updated_at: str | None

    @property
    def read_only(self) -> bool:
        return self.protection == "read_only"


@dataclass(frozen=True)
class AdfSource(AdfFileEntry):
    """One row of ``adf_files`` with ``content``, the raw bytes; :attr:`text` decodes UTF-8."""

    content: bytes

    @property
    def text(self) -> str | None:
        """The content as UTF-8 text; None for bytes that are not UTF-8."""
        try:
            return self.content.decode("utf-8")
        except UnicodeDecodeError:
            return None


@dataclass(frozen=True)
class LoopRow:
    """One row of ``adf_loop`` (the agent's history). ``content`` is ``content_json`` parsed (the
    text as is when it is not JSON), ``tokens`` likewise; ``loop`` is ``"main"`` before schema 29.
    ``created_at`` is epoch milliseconds."""

    seq: int
    role: str
    content: Any
    model: str | None
    tokens: Any
    created_at: int | None
    ord: int | None
    loop: str


@dataclass(frozen=True)
class LogRow:
    """One row of ``adf_logs``. ``data`` is parsed JSON (the text as is when it is not JSON);
    ``loop`` is None before schema 29 or when the row has none. ``created_at`` is epoch ms."""

    id: int
    level: str | None
    origin: str | None
    event: str | None
    target: str | None
    message: str
    data: Any
    created_at: int | None
    loop: str | None


SourceWriteStatus = Literal["saved", "unchanged", "would_deauthorize"]


@dataclass(frozen=True)
class SourceWrite:
    """What :meth:`AdfFile.write_source` did. ``would_deauthorize``: nothing was written, because
    the file is authorized and the caller did not confirm that an edit removes that (ADF sets
    ``authorized = 0`` on every content change). ``warning``: saved, but the agent looks open in
    ADF."""

    status: SourceWriteStatus
    path: str
    warning: str | None = None


def _parse_json(text: Any) -> Any:
    if not isinstance(text, str | bytes):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _check_header(path: Path) -> None:
    try:
        head = read_bytes(path, most=100)
    except FileNotFoundError:
        raise AdfUnreadable(path, "no such file") from None
    except IsADirectoryError:
        raise AdfUnreadable(path, "is a folder, not an .adf file") from None
    except OSError as exc:
        raise AdfUnreadable(path, f"cannot be read ({exc.strerror or exc})") from None
    if not head:
        raise AdfUnreadable(path, "is empty, not an ADF agent file")
    if not head.startswith(SQLITE_HEADER):
        raise AdfUnreadable(path, "is not a SQLite database, so not an ADF agent file")
    if len(head) < 100:
        raise AdfUnreadable(path, "is a damaged SQLite database (shorter than its header)")


def _sqlite_problem(path: Path, exc: sqlite3.Error, timeout: float) -> AdfFileError:
    text = str(exc)
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        return AdfBusy(
            path,
            f"the agent file is busy: another program held it past the {timeout:g} s wait "
            f"({text}); nothing was changed, try again when it is free",
        )
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return AdfUnreadable(path, f"is a damaged SQLite database ({text})")
    if "no such table: adf_meta" in lowered:
        return AdfNotAgent(path, "is a SQLite database but not an ADF agent file (no adf_meta)")
    return AdfUnreadable(path, f"cannot be read ({text})")


class AdfFile:
    """One ``.adf`` file. It holds no connection: each method opens one and closes it.

    :meth:`open` checks the file (header, ``adf_meta``, versions) and notes whether the agent
    looked open in ADF (sidecars beside the file) at that moment."""

    def __init__(self, path: Path, meta: AdfMeta, open_elsewhere: bool, timeout: float) -> None:
        self.path = path
        self.meta = meta
        self.open_elsewhere = open_elsewhere
        self.timeout = timeout
        self._cache: dict[str, tuple[tuple[int, int, int], Any]] = {}
        # The last value each read gave, whatever the file's stamp then.
        self._last: dict[str, Any] = {}
        self._looked_open = open_elsewhere

    @classmethod
    def open(cls, path: str | Path, *, timeout: float = BUSY_TIMEOUT_S) -> AdfFile:
        """Check and open ``path``. Raises :class:`AdfUnreadable` (missing, empty, not SQLite,
        corrupt) or :class:`AdfNotAgent`; the file is not changed in either case."""
        path = Path(path).absolute()
        _check_header(path)
        with _OWN_CONNECTION:
            elsewhere = bool(sidecars(path))
            probe = cls(path, AdfMeta({}), elsewhere, timeout)
            with probe._connect() as db:
                rows = probe._query(db, "SELECT key, value FROM adf_meta")
        meta = AdfMeta({str(k): str(v) for k, v in rows if k is not None and v is not None})
        if "adf_version" not in meta.rows:
            raise AdfNotAgent(path, "has an adf_meta table without adf_version: not an ADF agent")
        return cls(path, meta, elsewhere, timeout)

    # -- connections ---------------------------------------------------------------------------

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        uri = "file:" + quote(str(self.path)) + "?mode=rw"
        with _OWN_CONNECTION:
            try:
                db = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None)
            except sqlite3.Error as exc:
                raise self._problem(exc) from None
            try:
                yield db
            finally:
                db.close()

    def _problem(self, exc: sqlite3.Error) -> AdfFileError:
        return _sqlite_problem(self.path, exc, self.timeout)

    def _query(self, db: sqlite3.Connection, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        try:
            return db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise self._problem(exc) from None

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        with self._connect() as db:
            return self._query(db, sql, args)

    def _columns(self, db: sqlite3.Connection, table: str) -> set[str]:
        return {row[1] for row in self._query(db, f"PRAGMA table_info({table})")}

    def _stamp(self) -> tuple[int, int, int] | None:
        """The file's version while no connection has it open: with no sidecars, every write
        has been checkpointed into the file, so an unchanged stat means unchanged contents.
        None while sidecars exist (another program may be writing to its log) and while the
        file's modification time is too recent to tell two writes apart."""
        with _OWN_CONNECTION:
            if sidecars(self.path):
                return None
            try:
                info = self.path.stat()
            except OSError:
                return None
        return settled_stamp(info)

    def _cached(self, name: str, load: Callable[[], Any]) -> Any:
        """``load()``, kept while the file stays the same version (see :meth:`_stamp`): runs
        read the config and the file list on every hook call."""
        if not _OWN_CONNECTION.acquire(blocking=False):
            # Another thread's connection is open, such as a save waiting on an agent that
            # another program holds busy: the last value read serves meanwhile, so that a
            # reader on the window's thread is never held up by it.
            if name in self._last:
                return self._last[name]
        else:
            _OWN_CONNECTION.release()
        stamp = self._stamp()
        hit = self._cache.get(name)
        if stamp is not None and hit is not None and hit[0] == stamp:
            return hit[1]
        value = load()
        self._last[name] = value
        if stamp is not None and self._stamp() == stamp:
            self._cache[name] = (stamp, value)
        return value

    # -- state ---------------------------------------------------------------------------------

    @property
    def read_only_reason(self) -> str | None:
        """Why nothing may be written (an unknown version or schema), or None."""
        return self.meta.read_only_reason

    def looks_open(self) -> bool:
        """Whether another process has the file open now (sidecars while we hold none)."""
        if not _OWN_CONNECTION.acquire(blocking=False):
            # Our own connection is open, so the sidecars say nothing: the last answer stands
            # rather than make the caller (the window's thread, every 2 s) wait for it.
            return self._looked_open
        try:
            self._looked_open = bool(sidecars(self.path))
            return self._looked_open
        finally:
            _OWN_CONNECTION.release()

    # -- reading -------------------------------------------------------------------------------

    def config_text(self) -> str:
        """``adf_config`` row 1's ``config_json``, as stored."""
        return str(
            self._cached(
                "config",
                lambda: self._config_text_of(
                    self._read("SELECT config_json FROM adf_config WHERE id = 1")
                ),
            )
        )

    def _config_text_of(self, rows: list[Any]) -> str:
        if not rows or rows[0][0] is None:
            raise AdfConfigError(self.path, "adf_config has no row 1 (the agent config)")
        value = rows[0][0]
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                raise AdfConfigError(self.path, "adf_config.config_json is not UTF-8") from None
        return str(value)

    def config(self) -> dict[str, Any]:
        """The agent config (keys in stored order). Raises :class:`AdfConfigError` when it is
        not a JSON object."""
        text = self.config_text()
        try:
            with deep_json():  # the runtime reads configs nested a few thousand levels deep
                document = json.loads(text)
        except ValueError as exc:
            raise AdfConfigError(self.path, f"adf_config.config_json is not JSON: {exc}") from None
        except RecursionError:
            raise AdfConfigError(
                self.path, f"adf_config.config_json is nested deeper than {MAX_DEPTH:,} levels"
            ) from None
        if not isinstance(document, dict):
            raise AdfConfigError(self.path, "adf_config.config_json is not a JSON object")
        return document

    _ENTRY_COLUMNS = (
        "path, mime_type, size, length(CAST(content AS BLOB)), protection, authorized, "
        "created_at, updated_at"
    )

    @staticmethod
    def _entry_fields(row: Any) -> dict[str, Any]:
        path, mime, size, length, protection, authorized, created, updated = row[:8]
        return {
            "path": str(path),
            "mime_type": mime,
            "size": size,
            "length": int(length or 0),
            "protection": str(protection or "none"),
            "authorized": bool(authorized),
            "created_at": created,
            "updated_at": updated,
        }

    def entries(self) -> list[AdfFileEntry]:
        """Every row of ``adf_files`` by path, without the content (cheap on a large agent)."""

        def load() -> tuple[AdfFileEntry, ...]:
            rows = self._read(f"SELECT {self._ENTRY_COLUMNS} FROM adf_files ORDER BY path")
            return tuple(AdfFileEntry(**self._entry_fields(row)) for row in rows)

        return list(self._cached("entries", load))

    def _source(self, row: Any) -> AdfSource:
        content = row[8]
        if isinstance(content, str):
            content = content.encode("utf-8")
        return AdfSource(**self._entry_fields(row), content=bytes(content or b""))

    def files(self) -> list[AdfSource]:
        """Every row of ``adf_files`` with its content, by path."""
        rows = self._read(f"SELECT {self._ENTRY_COLUMNS}, content FROM adf_files ORDER BY path")
        return [self._source(row) for row in rows]

    def file(self, path: str) -> AdfSource | None:
        """The row of ``adf_files`` with exactly this path, or None."""
        rows = self._read(
            f"SELECT {self._ENTRY_COLUMNS}, content FROM adf_files WHERE path = ?", (path,)
        )
        return self._source(rows[0]) if rows else None

    def loops(self) -> list[str]:
        """The loops with history in ``adf_loop`` (``["main"]`` before schema 29 when there is
        any history), ``main`` first."""
        with self._connect() as db:
            if "loop" in self._columns(db, "adf_loop"):
                names = [r[0] for r in self._query(db, "SELECT DISTINCT loop FROM adf_loop")]
            else:
                names = ["main"] if self._query(db, "SELECT 1 FROM adf_loop LIMIT 1") else []
        return sorted(names, key=lambda name: (name != "main", name))

    def history(self, loop: str | None = None) -> list[LoopRow]:
        """``adf_loop`` rows in the runtime's order (``COALESCE(ord, seq), seq``); only
        ``loop``'s when given (before schema 29 every row is ``main``'s)."""
        with self._connect() as db:
            has_loop = "loop" in self._columns(db, "adf_loop")
            columns = "seq, role, content_json, model, tokens, created_at, ord"
            columns += ", loop" if has_loop else ", 'main'"
            sql = f"SELECT {columns} FROM adf_loop"
            args: tuple[Any, ...] = ()
            if loop is not None:
                if not has_loop and loop != "main":
                    return []
                if has_loop:
                    sql += " WHERE loop = ?"
                    args = (loop,)
            rows = self._query(db, sql + " ORDER BY COALESCE(ord, seq), seq", args)
        return [
            LoopRow(
                int(seq),
                str(role),
                _parse_json(content),
                model,
                _parse_json(tokens),
                created,
                ord_,
                str(name),
            )
            for seq, role, content, model, tokens, created, ord_, name in rows
        ]

    def logs(
        self,
        *,
        origins: tuple[str, ...] = (),
        events: tuple[str, ...] = (),
        limit: int | None = None,
    ) -> list[LogRow]:
        """``adf_logs`` rows, oldest first; only those whose origin is in ``origins`` or whose
        event is in ``events`` when either is given; the newest ``limit`` when given."""
        with self._connect() as db:
            has_loop = "loop" in self._columns(db, "adf_logs")
            columns = "id, level, origin, event, target, message, data, created_at"
            columns += ", loop" if has_loop else ", NULL"
            where: list[str] = []
            args: list[Any] = []
            if origins:
                where.append(f"origin IN ({', '.join('?' * len(origins))})")
                args += origins
            if events:
                where.append(f"event IN ({', '.join('?' * len(events))})")
                args += events
            sql = f"SELECT {columns} FROM adf_logs"
            if where:
                sql += " WHERE " + " OR ".join(where)
            sql += " ORDER BY id DESC"
            if limit is not None:
                sql += f" LIMIT {int(limit)}"
            rows = self._query(db, sql, tuple(args))
        return [
            LogRow(int(i), lv, og, ev, tg, str(msg), _parse_json(data), created, loop)
            for i, lv, og, ev, tg, msg, data, created, loop in reversed(rows)
        ]

    def hook_logs(self, limit: int | None = None) -> list[LogRow]:
        """The runtime's own pre-LLM hook rows: origin ``pre_llm_hook`` (execute, result,
        failed) and event ``pre_llm_hook_error``."""
        return self.logs(origins=(HOOK_LOG_ORIGIN,), events=(HOOK_ERROR_EVENT,), limit=limit)

    # -- writing -------------------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE ... COMMIT``; any error rolls back and nothing is changed."""
        self._cache.clear()
        with self._connect() as db:
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._problem(exc) from None
            try:
                yield db
                db.execute("COMMIT")
            except BaseException as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise self._problem(exc) from None
                raise

    def _refuse_read_only(self) -> None:
        reason = self.read_only_reason
        if reason:
            raise AdfReadOnly(self.path, reason)

    def save_config_text(self, edit: Callable[[str, str], str]) -> str:
        """Change the config in one transaction: ``edit(text, stamp)`` gets ``config_json`` as
        re-read inside it and the time of this save (:func:`now_iso`), and returns the new text
        (the caller changes only ``pre_llm_hook`` and sets ``metadata.updated_at`` to ``stamp``,
        see :mod:`studio.core.workspace.adf_workspace`). Row ``updated_at`` and
        ``adf_meta.adf_updated_at`` are set to ``stamp``; returns the stored text.

        Refused (nothing written) for a read-only file and when the agent looks open in ADF;
        :class:`AdfBusy` past the busy timeout. An ``edit`` that returns the same text writes
        nothing."""
        self._refuse_read_only()
        with _OWN_CONNECTION:
            found = sidecars(self.path)
            if found:
                names = " and ".join(p.name for p in found)
                raise AdfOpenElsewhere(self.path, OPEN_ELSEWHERE.format(sidecars=names))
            with self._transaction() as db:
                rows = self._query(db, "SELECT config_json FROM adf_config WHERE id = 1")
                old = self._config_text_of(rows)
                stamp = now_iso()
                new = edit(old, stamp)
                if new == old:
                    return old
                db.execute(
                    "UPDATE adf_config SET config_json = ?, updated_at = ? WHERE id = 1",
                    (new, stamp),
                )
                db.execute(
                    "INSERT INTO adf_meta (key, value) VALUES ('adf_updated_at', ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (stamp,),
                )
        return new

    def write_source(self, path: str, text: str, *, deauthorize: bool = False) -> SourceWrite:
        """Write a hook source as UTF-8 in one transaction, as the runtime does: ``content``,
        ``mime_type``, ``size``, ``updated_at`` and ``authorized = 0`` (a new file: protection
        ``none``, authorized 0, both timestamps).

        Raises :class:`AdfProtected` for a ``read_only`` file or a bad path and
        :class:`AdfReadOnly` for a file the studio does not write. Writing an authorized file
        needs ``deauthorize=True``; without it the answer is ``would_deauthorize`` and nothing is
        written. Unchanged content writes nothing (and de-authorizes nothing)."""
        self._refuse_read_only()
        problem = source_path_problem(path)
        if problem:
            raise AdfProtected(self.path, f"{path!r}: {problem}")
        data = text.encode("utf-8")
        with _OWN_CONNECTION:
            warning = SOURCE_OPEN_ELSEWHERE if sidecars(self.path) else None
            with self._transaction() as db:
                rows = self._query(
                    db,
                    "SELECT content, protection, authorized FROM adf_files WHERE path = ?",
                    (path,),
                )
                stamp = now_iso()
                if rows:
                    content, protection, authorized = rows[0]
                    if protection == "read_only":
                        raise AdfProtected(
                            self.path,
                            f"{path} is read_only in the agent; the studio never writes it",
                        )
                    old = content.encode("utf-8") if isinstance(content, str) else content
                    if bytes(old or b"") == data:
                        return SourceWrite("unchanged", path, warning)
                    if authorized and not deauthorize:
                        return SourceWrite("would_deauthorize", path, warning)
                    db.execute(
                        "UPDATE adf_files SET content = ?, mime_type = ?, size = ?, "
                        "updated_at = ?, authorized = 0 WHERE path = ?",
                        (data, mime_type_for(path), len(data), stamp, path),
                    )
                else:
                    db.execute(
                        "INSERT INTO adf_files (path, content, mime_type, size, protection, "
                        "authorized, created_at, updated_at) VALUES (?, ?, ?, ?, 'none', 0, ?, ?)",
                        (path, data, mime_type_for(path), len(data), stamp, stamp),
                    )
        return SourceWrite("saved", path, warning)
