"""Unsaved work that survives a crash: each open draft is copied, atomically, to
``<workspace>/.hookstudio/recovery/`` as it changes, and discarded once saved or abandoned.

A draft is kept under a ``key`` the editor chooses (``"agent.json#pre_llm_hook"``,
``"samples/basic.json"``); the text is opaque here. One file per key, holding the key, the text
and when it was saved, so that a listing after a crash says what each file is.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from studio.core.file_reads import read_bytes
from studio.core.workspace.atomic_write import write_atomically
from studio.core.workspace.folder import STATE_DIR

RECOVERY_DIR = "recovery"
_VERSION = 1
_SUFFIX = ".draft.json"


@dataclass(frozen=True, slots=True)
class Recovery:
    key: str
    text: str
    saved_at: float  # seconds since the epoch
    path: Path


def recovery_dir(workspace_root: str | Path) -> Path:
    return Path(workspace_root) / STATE_DIR / RECOVERY_DIR


def _path(workspace_root: str | Path, key: str) -> Path:
    if not key:
        raise ValueError("a recovery key must not be empty")
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    readable = re.sub(r"[^A-Za-z0-9_-]+", "-", key).strip("-")[:48] or "draft"
    return recovery_dir(workspace_root) / f"{readable}-{digest}{_SUFFIX}"


def save_recovery(workspace_root: str | Path, key: str, text: str) -> Path:
    """Keep ``text`` as the unsaved draft for ``key``, replacing the one kept before."""
    path = _path(workspace_root, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"version": _VERSION, "key": key, "saved_at": time.time(), "text": text}
    write_atomically(path, json.dumps(record, ensure_ascii=True).encode("ascii"))
    return path


def load_recovery(workspace_root: str | Path, key: str) -> Recovery | None:
    """The draft kept for ``key``, or None when there is none (or it cannot be read)."""
    recovery = _read(_path(workspace_root, key))
    return recovery if recovery is not None and recovery.key == key else None


def discard_recovery(workspace_root: str | Path, key: str) -> bool:
    """Forget the draft for ``key`` (after a save, or when the user drops it); True if one was
    kept."""
    try:
        _path(workspace_root, key).unlink()
    except FileNotFoundError:
        return False
    return True


def list_recoveries(workspace_root: str | Path) -> list[Recovery]:
    """Every draft kept in the workspace, oldest first; unreadable files are skipped."""
    folder = recovery_dir(workspace_root)
    if not folder.is_dir():
        return []
    found = [r for p in folder.glob("*" + _SUFFIX) if (r := _read(p)) is not None]
    return sorted(found, key=lambda r: (r.saved_at, r.key))


def _read(path: Path) -> Recovery | None:
    try:
        record = json.loads(read_bytes(path))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("version") != _VERSION:
        return None
    key, text, saved_at = record.get("key"), record.get("text"), record.get("saved_at")
    if not isinstance(key, str) or not isinstance(text, str):
        return None
    if not isinstance(saved_at, int | float) or isinstance(saved_at, bool):
        return None
    return Recovery(key, text, float(saved_at), path)
