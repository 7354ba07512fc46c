"""ADF agent files (``.adf``) built with Python's ``sqlite3`` from the facts in
spec/adf-file.md: WAL mode, the ``adf_meta`` identity rows, the config row, default files,
TypeScript hook sources (one authorized, one ``read_only``), history in two loops, log rows
(the runtime's ``pre_llm_hook`` and ``pre_llm_hook_error`` ones among them), the tables the studio
never touches, and an agent's own ``local_*`` table.

Schema 28 has no ``loop`` columns; schema 29 adds one to ``adf_loop`` (NOT NULL, ``'main'``) and a
nullable one to ``adf_timers``, ``adf_logs`` and ``adf_tasks``.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CREATED = "2026-11-20T09:00:00.000Z"
UPDATED = "2026-11-28T17:42:10.250Z"
BASE_MS = 1_764_320_000_000  # epoch milliseconds of the first history row

POLICY_TS = """\
// Present only the file tools, and remind the model of the data policy. ADF runs this file as a
// script body: it calls transform({request, loop}) and sends the request it returns.

interface Tool {
  name: string;
  description?: string;
  input_schema?: unknown;
}

interface Request {
  system: string;
  messages: unknown[];
  tools: Tool[];
  options?: Record<string, unknown>;
}

const ALLOWED_TOOLS = new Set(['fs_read', 'fs_write']);
const REMINDER = 'Never copy customer data into tool arguments.';

function transform(input: { request: Request; loop: { name: string } }): Request {
  const { request } = input;
  return {
    ...request,
    system: `${request.system}\\n\\n${REMINDER}`,
    tools: request.tools.filter((tool) => ALLOWED_TOOLS.has(tool.name)),
  };
}
"""

REDACT_TS = """\
// Kept read-only by the agent's owner: masks order numbers in user text.
function redact(input: { request: { messages: { role: string; content: unknown }[] } }) {
  const request = input.request;
  const messages = request.messages.map((m) =>
    typeof m.content === 'string' ? { ...m, content: m.content.replace(/\\d{4,}/g, '####') } : m,
  );
  return { ...request, messages };
}
"""

DEFAULT_FILES: dict[str, bytes] = {
    "document.md": b"# Support agent\n\nAnswers order questions from the order logs.\n",
    "mind.md": b"Refunds over 100 EUR need a human.\n",
}


def default_config(*, hook: dict[str, Any] | bool | None = True) -> dict[str, Any]:
    """A support agent's config, in the key order ADF writes. ``hook``: True for the policy
    hook, a dict for another one, None or False for no ``pre_llm_hook`` key."""
    config: dict[str, Any] = {
        "adf_version": "0.2",
        "id": "agt_01JD7Q3S8M2N4P5R6T7V8W9X0Y",
        "name": "support-agent",
        "description": "Answers questions about orders and refunds.",
        "model": {"provider": "anthropic", "model_id": "claude-sonnet-4-5", "max_tokens": 4096},
        "instructions": "You are a support agent. Be brief; cite the order log.",
    }
    if hook is True:
        config["pre_llm_hook"] = {
            "source": "lib/policy.ts:transform",
            "scope": "loops",
            "loops": ["researcher"],
            "include_main": True,
            "timeout_ms": 5000,
        }
    elif isinstance(hook, dict):
        config["pre_llm_hook"] = hook
    config.update(
        {
            "limits": {"execution_timeout_ms": 30000, "max_loop_messages": 200},
            "code_execution": {"sys_lambda": False, "restricted_methods": []},
            "tools": [
                {"name": "fs_read", "enabled": True},
                {"name": "fs_write", "enabled": True},
                {"name": "kb_search", "enabled": True},
                {"name": "shell", "enabled": False},
            ],
            "metadata": {"created_at": CREATED, "updated_at": UPDATED, "tags": ["support", "é"]},
        }
    )
    return config


def _blocks(*texts: str) -> str:
    return json.dumps([{"type": "text", "text": t} for t in texts], separators=(",", ":"))


HISTORY: list[tuple[str, str, str]] = [
    ("main", "user", _blocks("Why was order 4821 refunded twice?")),
    (
        "main",
        "assistant",
        json.dumps(
            [
                {"type": "text", "text": "Let me read the order log."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "fs_read",
                    "input": {"path": "orders/4821.log"},
                },
            ],
            separators=(",", ":"),
        ),
    ),
    (
        "main",
        "user",
        json.dumps(
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "content": "refund issued 09:14; refund issued 09:15",
                }
            ],
            separators=(",", ":"),
        ),
    ),
    ("main", "assistant", _blocks("The refund job ran twice, a minute apart.")),
    ("researcher", "user", _blocks("Find the refund job's retry policy.")),
    ("researcher", "assistant", _blocks("It retries once after 60 s without an idempotency key.")),
]


def hook_log_rows() -> list[tuple[str, str, str, str | None, str, dict[str, Any] | None, str]]:
    """(level, origin, event, target, message, data, loop) as the runtime logs a pre-LLM hook:
    one good call, one that failed validation."""
    source = "lib/policy.ts"
    return [
        ("info", "system", "agent_start", None, "agent started", None, "main"),
        (
            "info",
            "pre_llm_hook",
            "execute",
            source,
            "transform()",
            {"loop": "main", "timeout_ms": 5000},
            "main",
        ),
        ("info", "pre_llm_hook", "result", source, "transform() → ok (12ms)", None, "main"),
        (
            "info",
            "pre_llm_hook",
            "execute",
            source,
            "transform()",
            {"loop": "researcher", "timeout_ms": 5000},
            "researcher",
        ),
        (
            "error",
            "executor",
            "pre_llm_hook_error",
            source,
            "pre_llm_hook returned an invalid request: messages must be an array",
            None,
            "researcher",
        ),
        ("warn", "tools", "denied", "shell", "tool shell is disabled", None, "main"),
    ]


@dataclass
class AdfSpec:
    """What :func:`build_adf` writes; every field has a realistic default."""

    schema: int = 29
    adf_version: str = "0.2"
    config: dict[str, Any] | None = field(default_factory=default_config)
    config_text: str | None = None  # stored as is instead of ``config``
    hook_files: bool = True
    history: bool = True
    history_rows: list[tuple[str, str, str]] = field(default_factory=lambda: list(HISTORY))
    logs: bool = True
    meta_extra: dict[str, str] = field(default_factory=dict)


def _schema_sql(schema: int) -> list[str]:
    loops = schema >= 29
    loop_col = ", loop TEXT NOT NULL DEFAULT 'main'" if loops else ""
    nullable_loop = ", loop TEXT" if loops else ""
    return [
        "CREATE TABLE adf_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL, protection TEXT NOT "
        "NULL DEFAULT 'none' CHECK (protection IN ('none', 'readonly', 'increment')))",
        "CREATE TABLE adf_config (id INTEGER PRIMARY KEY CHECK (id = 1), config_json TEXT NOT "
        "NULL, updated_at TEXT NOT NULL)",
        "CREATE TABLE adf_files (path TEXT PRIMARY KEY, content BLOB NOT NULL, mime_type TEXT, "
        "size INTEGER NOT NULL, protection TEXT NOT NULL DEFAULT 'none' CHECK (protection IN "
        "('read_only', 'no_delete', 'none')), authorized INTEGER NOT NULL DEFAULT 0, created_at "
        "TEXT NOT NULL, updated_at TEXT NOT NULL)",
        "CREATE TABLE adf_loop (seq INTEGER PRIMARY KEY AUTOINCREMENT, role TEXT NOT NULL, "
        f"content_json TEXT NOT NULL, model TEXT, tokens TEXT, created_at INTEGER NOT NULL, ord "
        f"INTEGER{loop_col})",
        "CREATE TABLE adf_logs (id INTEGER PRIMARY KEY AUTOINCREMENT, level TEXT NOT NULL, "
        "origin TEXT, event TEXT, target TEXT, message TEXT NOT NULL, data TEXT, created_at "
        f"INTEGER NOT NULL{nullable_loop})",
        "CREATE TABLE adf_inbox (id TEXT PRIMARY KEY, sender TEXT, body TEXT, received_at INTEGER)",
        "CREATE TABLE adf_outbox (id TEXT PRIMARY KEY, recipient TEXT, body TEXT, sent_at INTEGER)",
        f"CREATE TABLE adf_timers (id TEXT PRIMARY KEY, fire_at INTEGER, payload TEXT"
        f"{nullable_loop})",
        f"CREATE TABLE adf_tasks (id TEXT PRIMARY KEY, status TEXT, payload TEXT{nullable_loop})",
        "CREATE TABLE adf_audit (id INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT, created_at "
        "INTEGER)",
        "CREATE TABLE adf_identity (key TEXT PRIMARY KEY, value BLOB)",
        "CREATE TABLE adf_attestations (id TEXT PRIMARY KEY, statement TEXT)",
        "CREATE TABLE local_tickets (id INTEGER PRIMARY KEY, order_id TEXT, status TEXT)",
        "CREATE INDEX local_tickets_order ON local_tickets (order_id)",
    ]


def build_adf(path: Path, spec: AdfSpec | None = None) -> Path:
    """Write a new ``.adf`` at ``path`` (replacing none: the file must not exist), checkpointed
    and closed, so no ``-wal``/``-shm`` remain."""
    spec = spec or AdfSpec()
    if path.exists():
        raise FileExistsError(path)
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("BEGIN")
        for sql in _schema_sql(spec.schema):
            db.execute(sql)
        meta = {
            "adf_version": spec.adf_version,
            "adf_schema_version": str(spec.schema),
            "adf_name": "support-agent",
            "adf_handle": "support-agent",
            "adf_created_at": CREATED,
            "adf_updated_at": UPDATED,
            "adf_clean_close": "1",
            **spec.meta_extra,
        }
        protection = {"adf_version": "readonly", "adf_created_at": "readonly"}
        db.executemany(
            "INSERT INTO adf_meta (key, value, protection) VALUES (?, ?, ?)",
            [(k, v, protection.get(k, "none")) for k, v in meta.items()],
        )
        if spec.config_text is not None or spec.config is not None:
            text = spec.config_text
            if text is None:
                text = json.dumps(spec.config, separators=(",", ":"), ensure_ascii=False)
            db.execute(
                "INSERT INTO adf_config (id, config_json, updated_at) VALUES (1, ?, ?)",
                (text, UPDATED),
            )
        files: list[tuple[str, bytes, str, str, int]] = [
            (p, c, "text/markdown", "no_delete", 0) for p, c in DEFAULT_FILES.items()
        ]
        if spec.hook_files:
            files += [
                ("lib/policy.ts", POLICY_TS.encode(), "text/typescript", "none", 1),
                ("lib/redact.ts", REDACT_TS.encode(), "text/typescript", "read_only", 0),
                ("data/refund-policy.json", b'{"max_eur":100}', "application/json", "none", 0),
            ]
        db.executemany(
            "INSERT INTO adf_files (path, content, mime_type, size, protection, authorized, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(p, c, m, len(c), pr, a, CREATED, UPDATED) for p, c, m, pr, a in files],
        )
        if spec.history:
            for i, (loop, role, content) in enumerate(spec.history_rows):
                columns = "role, content_json, model, tokens, created_at, ord"
                values: list[Any] = [
                    role,
                    content,
                    "claude-sonnet-4-5" if role == "assistant" else None,
                    json.dumps({"input": 812 + i, "output": 64}) if role == "assistant" else None,
                    BASE_MS + i * 1000,
                    None,
                ]
                if spec.schema >= 29:
                    columns += ", loop"
                    values.append(loop)
                elif loop != "main":
                    continue
                db.execute(
                    f"INSERT INTO adf_loop ({columns}) VALUES ({', '.join('?' * len(values))})",
                    values,
                )
        if spec.logs:
            for i, (level, origin, event, target, message, data, loop) in enumerate(
                hook_log_rows()
            ):
                columns = "level, origin, event, target, message, data, created_at"
                row: list[Any] = [
                    level,
                    origin,
                    event,
                    target,
                    message,
                    json.dumps(data) if data is not None else None,
                    BASE_MS + 500 + i * 1000,
                ]
                if spec.schema >= 29:
                    columns += ", loop"
                    row.append(loop)
                db.execute(
                    f"INSERT INTO adf_logs ({columns}) VALUES ({', '.join('?' * len(row))})", row
                )
        db.execute("INSERT INTO adf_identity VALUES ('did', ?)", (b"\x01\x02did:key:z6Mk",))
        db.execute("INSERT INTO adf_audit (event, created_at) VALUES ('created', ?)", (BASE_MS,))
        db.executemany(
            "INSERT INTO local_tickets (order_id, status) VALUES (?, ?)",
            [("4821", "open"), ("4822", "closed")],
        )
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    return path


def table_dump(path: Path, *, skip: tuple[str, ...] = ()) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows (by rowid or primary key) and the schema, for comparing two versions
    of a file; ``skip`` leaves tables out."""
    db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, isolation_level=None)
    try:
        dump: dict[str, list[tuple[Any, ...]]] = {
            "sqlite_master": db.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
            ).fetchall()
        }
        tables = [
            r[0]
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        for table in tables:
            if table not in skip:
                dump[table] = db.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
        return dump
    finally:
        db.close()


def pragma(path: Path, name: str) -> Any:
    db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, isolation_level=None)
    try:
        return db.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        db.close()
