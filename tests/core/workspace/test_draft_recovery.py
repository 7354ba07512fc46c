"""Unsaved drafts kept under .hookstudio/recovery survive a crash, and go once discarded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from studio.core.workspace import atomic_write
from studio.core.workspace.draft_recovery import (
    discard_recovery,
    list_recoveries,
    load_recovery,
    recovery_dir,
    save_recovery,
)

KEY = "agent.json#pre_llm_hook"


def test_save_load_discard(tmp_path: Path) -> None:
    assert load_recovery(tmp_path, KEY) is None
    path = save_recovery(tmp_path, KEY, '{"source": "half typed')
    assert path.parent == tmp_path / ".hookstudio" / "recovery" == recovery_dir(tmp_path)
    recovery = load_recovery(tmp_path, KEY)
    assert recovery is not None
    assert (recovery.key, recovery.text, recovery.path) == (KEY, '{"source": "half typed', path)
    assert discard_recovery(tmp_path, KEY) is True
    assert load_recovery(tmp_path, KEY) is None
    assert discard_recovery(tmp_path, KEY) is False


def test_a_new_draft_replaces_the_old(tmp_path: Path) -> None:
    save_recovery(tmp_path, KEY, "first")
    save_recovery(tmp_path, KEY, "second")
    recovery = load_recovery(tmp_path, KEY)
    assert recovery is not None and recovery.text == "second"
    assert len(list(recovery_dir(tmp_path).iterdir())) == 1


def test_keys_never_escape_the_folder_and_never_collide(tmp_path: Path) -> None:
    keys = ["../../etc/passwd", "..", ".", "a/b", "a\\b", "a-b", "a b", "ключ", "x" * 500, "a:b"]
    for index, key in enumerate(keys):
        path = save_recovery(tmp_path, key, f"text {index}")
        assert path.parent == recovery_dir(tmp_path)
        assert len(path.name) < 100
    for index, key in enumerate(keys):
        recovery = load_recovery(tmp_path, key)
        assert recovery is not None and recovery.text == f"text {index}"
    assert sorted(r.key for r in list_recoveries(tmp_path)) == sorted(keys)
    assert sorted(os.listdir(tmp_path)) == [".hookstudio"]


def test_an_empty_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="empty"):
        save_recovery(tmp_path, "", "text")


def test_any_text_is_kept_exactly(tmp_path: Path) -> None:
    text = 'line 1\r\nline 2\n\ttab "quotes" \\ café 😀 \x00 \ud800'
    save_recovery(tmp_path, KEY, text)
    recovery = load_recovery(tmp_path, KEY)
    assert recovery is not None and recovery.text == text


def test_list_oldest_first_skipping_what_cannot_be_read(tmp_path: Path) -> None:
    assert list_recoveries(tmp_path) == []
    save_recovery(tmp_path, "b", "B")
    first = save_recovery(tmp_path, "a", "A")
    record = json.loads(first.read_text())
    record["saved_at"] -= 60
    first.write_text(json.dumps(record))
    (recovery_dir(tmp_path) / "junk.draft.json").write_text("{not json")
    (recovery_dir(tmp_path) / "other.draft.json").write_text('{"version": 99}')
    assert [(r.key, r.text) for r in list_recoveries(tmp_path)] == [("a", "A"), ("b", "B")]


def test_a_failed_save_keeps_the_previous_draft(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_recovery(tmp_path, KEY, "kept")

    def failing_replace(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(atomic_write.os, "replace", failing_replace)
    with pytest.raises(OSError):
        save_recovery(tmp_path, KEY, "lost")
    monkeypatch.undo()
    recovery = load_recovery(tmp_path, KEY)
    assert recovery is not None and recovery.text == "kept"
    assert len(list(recovery_dir(tmp_path).iterdir())) == 1
