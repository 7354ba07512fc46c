"""Reading and safely editing ``.adf`` agent files (spec/adf-file.md), on real SQLite files built
by the fixture builder."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from studio.core.workspace.adf_file import (
    _OWN_CONNECTION,
    AdfBusy,
    AdfFile,
    AdfNotAgent,
    AdfOpenElsewhere,
    AdfProtected,
    AdfReadOnly,
    AdfUnreadable,
    sidecars,
)
from studio.core.workspace.adf_workspace import AdfHookDocument
from studio.core.workspace.agent_document import ExternalChange, with_metadata_stamp
from tests.support.adf_files import (
    POLICY_TS,
    UPDATED,
    AdfSpec,
    build_adf,
    default_config,
    pragma,
    table_dump,
)

ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
NEW_HOOK = {
    "source": "lib/policy.ts:transform",
    "scope": "loops",
    "loops": ["researcher", "reviewer"],
    "include_main": False,
    "timeout_ms": 5000,
}


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return build_adf(tmp_path / "agent.adf")


@contextmanager
def other_connection(path: Path, *, immediate: bool = False) -> Iterator[sqlite3.Connection]:
    """Another program with the agent open (as ADF keeps it), optionally holding the write lock."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("SELECT count(*) FROM adf_meta").fetchone()
    if immediate:
        db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    finally:
        if db.in_transaction:
            db.execute("ROLLBACK")
        db.close()


class TestReading:
    @pytest.mark.parametrize("schema", [28, 29])
    def test_every_kind_of_row_as_plain_data(self, tmp_path, schema):
        adf = AdfFile.open(build_adf(tmp_path / "a.adf", AdfSpec(schema=schema)))
        assert adf.meta.adf_version == "0.2"
        assert adf.meta.schema_version == schema
        assert adf.meta.name == "support-agent"
        assert adf.read_only_reason is None
        assert adf.open_elsewhere is False
        assert list(adf.config()) == list(default_config())
        assert adf.config()["pre_llm_hook"]["source"] == "lib/policy.ts:transform"

        files = {f.path: f for f in adf.files()}
        assert sorted(files) == [
            "data/refund-policy.json",
            "document.md",
            "lib/policy.ts",
            "lib/redact.ts",
            "mind.md",
        ]
        policy = files["lib/policy.ts"]
        assert (policy.text, policy.mime_type, policy.size) == (
            POLICY_TS,
            "text/typescript",
            len(POLICY_TS.encode()),
        )
        assert (policy.protection, policy.authorized) == ("none", True)
        assert (files["lib/redact.ts"].read_only, files["lib/redact.ts"].authorized) == (
            True,
            False,
        )
        assert adf.file("./lib/policy.ts") is None  # keys are exact
        entries = {e.path: e for e in adf.entries()}
        assert list(entries) == list(files)
        assert all(not hasattr(e, "content") for e in entries.values())
        assert entries["lib/policy.ts"].length == len(POLICY_TS.encode())
        assert entries["lib/policy.ts"].authorized and entries["lib/redact.ts"].read_only

        history = adf.history()
        assert [row.seq for row in history] == sorted(row.seq for row in history)
        assert history[1].content[1]["type"] == "tool_use"
        assert history[1].tokens == {"input": 813, "output": 64}
        if schema == 29:
            assert adf.loops() == ["main", "researcher"]
            assert [r.role for r in adf.history("researcher")] == ["user", "assistant"]
            assert len(adf.history("main")) == 4
        else:
            assert adf.loops() == ["main"]
            assert {r.loop for r in history} == {"main"}
            assert adf.history("researcher") == []

        hook_rows = adf.hook_logs()
        assert [(r.origin, r.event) for r in hook_rows] == [
            ("pre_llm_hook", "execute"),
            ("pre_llm_hook", "result"),
            ("pre_llm_hook", "execute"),
            ("executor", "pre_llm_hook_error"),
        ]
        assert hook_rows[0].data == {"loop": "main", "timeout_ms": 5000}
        assert hook_rows[-1].loop == ("researcher" if schema == 29 else None)
        assert len(adf.logs()) == 6
        assert [r.id for r in adf.logs(limit=2)] == [5, 6]

    def test_history_follows_ord_before_seq(self, agent):
        db = sqlite3.connect(agent, isolation_level=None)
        db.execute("UPDATE adf_loop SET ord = 0 WHERE seq = 4")
        db.close()
        assert [r.seq for r in AdfFile.open(agent).history("main")] == [4, 1, 2, 3]

    def test_reading_leaves_the_file_and_no_sidecars(self, agent):
        before = agent.read_bytes()
        adf = AdfFile.open(agent)
        adf.config()
        adf.files()
        adf.history()
        adf.hook_logs()
        assert agent.read_bytes() == before
        assert sidecars(agent) == []


class TestRefusedFiles:
    def _refused(self, path: Path, error: type[Exception], words: str) -> None:
        before = path.read_bytes()
        with pytest.raises(error) as caught:
            AdfFile.open(path)
        assert str(path) in str(caught.value)
        assert words in str(caught.value)
        assert path.read_bytes() == before
        assert sidecars(path) == []

    def test_empty_file(self, tmp_path):
        path = tmp_path / "empty.adf"
        path.write_bytes(b"")
        self._refused(path, AdfUnreadable, "is empty")

    def test_not_sqlite(self, tmp_path):
        path = tmp_path / "notes.adf"
        path.write_text('{"name": "not a database"}\n' * 20)
        self._refused(path, AdfUnreadable, "not a SQLite database")

    def test_corrupt(self, agent):
        data = bytearray(agent.read_bytes())
        data[100:4096] = b"\xa5" * (4096 - 100)  # the schema page after the header
        agent.write_bytes(bytes(data))
        self._refused(agent, AdfUnreadable, "damaged SQLite database")

    def test_truncated_header(self, tmp_path):
        path = tmp_path / "short.adf"
        path.write_bytes(b"SQLite format 3\x00\x10\x00")
        self._refused(path, AdfUnreadable, "damaged")

    def test_sqlite_but_not_an_agent(self, tmp_path):
        path = tmp_path / "other.adf"
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE notes (body TEXT)")
        db.execute("INSERT INTO notes VALUES ('hello')")
        db.commit()
        db.close()
        self._refused(path, AdfNotAgent, "not an ADF agent file (no adf_meta)")

    def test_missing(self, tmp_path):
        with pytest.raises(AdfUnreadable, match="no such file"):
            AdfFile.open(tmp_path / "gone.adf")
        assert not (tmp_path / "gone.adf").exists()


class TestUnknownVersions:
    @pytest.mark.parametrize(
        ("spec", "words"),
        [
            (AdfSpec(schema=30), "schema version '30' is newer than"),
            (AdfSpec(schema=27), "schema version '27' is not one of"),
            (AdfSpec(adf_version="0.3"), "ADF file version '0.3'"),
        ],
    )
    def test_read_but_never_written(self, tmp_path, spec, words):
        path = build_adf(tmp_path / "a.adf", spec)
        adf = AdfFile.open(path)
        assert words in (adf.read_only_reason or "")
        assert adf.config()["name"] == "support-agent"  # still readable
        before = path.read_bytes()
        document = AdfHookDocument.load_adf(adf)
        with pytest.raises(AdfReadOnly, match="read-only"):
            document.save_config(NEW_HOOK)
        with pytest.raises(AdfReadOnly):
            adf.write_source("lib/new.ts", "x")
        assert path.read_bytes() == before


class TestSavingTheHook:
    def test_only_the_hook_and_the_three_stamps_change(self, agent):
        before_text = AdfFile.open(agent).config_text()
        before_dump = table_dump(agent)
        document = AdfHookDocument.load_adf(AdfFile.open(agent))
        document.save_config(NEW_HOOK)

        adf = AdfFile.open(agent)
        after_text = adf.config_text()
        config = adf.config()
        stamp = config["metadata"]["updated_at"]
        assert ISO_MS.match(stamp) and stamp != UPDATED
        old_hook = json.dumps(default_config()["pre_llm_hook"], separators=(",", ":"))
        expected = before_text.replace(
            old_hook, json.dumps(NEW_HOOK, separators=(",", ":"))
        ).replace(f'"updated_at":"{UPDATED}"', f'"updated_at":"{stamp}"')
        assert after_text == expected  # every other byte, key order included

        dump = table_dump(agent)
        assert dump["adf_config"] == [(1, after_text, stamp)]
        meta_before = {k: (v, p) for k, v, p in before_dump["adf_meta"]}
        meta_after = {k: (v, p) for k, v, p in dump["adf_meta"]}
        assert meta_after.pop("adf_updated_at") == (stamp, "none")
        meta_before.pop("adf_updated_at")
        assert meta_after == meta_before
        for table in set(before_dump) - {"adf_config", "adf_meta"}:
            assert dump[table] == before_dump[table], table
        assert pragma(agent, "integrity_check") == "ok"
        assert pragma(agent, "journal_mode") == "wal"
        assert sidecars(agent) == []

        reopened = AdfHookDocument.load_adf(AdfFile.open(agent))
        assert reopened.hook_config == NEW_HOOK

    def test_a_new_hook_goes_after_limits_and_removing_it_restores_the_rest(self, tmp_path):
        path = build_adf(tmp_path / "a.adf", AdfSpec(config=default_config(hook=None)))
        document = AdfHookDocument.load_adf(AdfFile.open(path))
        document.save_config(NEW_HOOK)
        config = AdfFile.open(path).config()
        keys = list(config)
        assert keys[keys.index("limits") + 1] == "pre_llm_hook"
        # written in the config's own compact style
        assert AdfFile.open(path).config_text() == json.dumps(
            config, separators=(",", ":"), ensure_ascii=False
        )
        document.remove_hook()
        config = AdfFile.open(path).config()
        assert "pre_llm_hook" not in config
        assert list(config) == list(default_config(hook=None))

    def test_saving_the_same_hook_writes_nothing(self, agent):
        before = table_dump(agent)
        document = AdfHookDocument.load_adf(AdfFile.open(agent))
        document.save_config(default_config()["pre_llm_hook"])
        assert table_dump(agent) == before

    def test_a_change_made_meanwhile_elsewhere_in_the_config_is_kept(self, agent):
        document = AdfHookDocument.load_adf(AdfFile.open(agent))
        config = AdfFile.open(agent).config()
        config["instructions"] = "Changed by ADF meanwhile."
        db = sqlite3.connect(agent, isolation_level=None)
        db.execute(
            "UPDATE adf_config SET config_json = ? WHERE id = 1",
            (json.dumps(config, separators=(",", ":"), ensure_ascii=False),),
        )
        db.close()
        document.save_config(NEW_HOOK)
        saved = AdfFile.open(agent).config()
        assert saved["instructions"] == "Changed by ADF meanwhile."
        assert saved["pre_llm_hook"] == NEW_HOOK

    def test_a_hook_changed_meanwhile_is_not_overwritten_unless_forced(self, agent):
        document = AdfHookDocument.load_adf(AdfFile.open(agent))
        other = AdfHookDocument.load_adf(AdfFile.open(agent))
        other.save_config({**NEW_HOOK, "timeout_ms": 9000})
        with pytest.raises(ExternalChange, match="changed outside the studio"):
            document.save_config(NEW_HOOK)
        assert AdfFile.open(agent).config()["pre_llm_hook"]["timeout_ms"] == 9000
        document.save_config(NEW_HOOK, force=True)
        assert AdfFile.open(agent).config()["pre_llm_hook"] == NEW_HOOK


class TestAnotherProgram:
    def test_open_in_adf_refuses_config_saves_and_warns_on_sources(self, agent):
        with other_connection(agent):
            assert sidecars(agent)
            adf = AdfFile.open(agent)
            assert adf.open_elsewhere and adf.looks_open()
            before = table_dump(agent)
            with pytest.raises(AdfOpenElsewhere, match="close the agent in ADF first"):
                AdfHookDocument.load_adf(adf).save_config(NEW_HOOK)
            assert table_dump(agent) == before
            written = adf.write_source("lib/notes.ts", "// note\n")
            assert written.status == "saved"
            assert written.warning and "may write its own copy back" in written.warning
        adf = AdfFile.open(agent)
        assert not adf.open_elsewhere
        AdfHookDocument.load_adf(adf).save_config(NEW_HOOK)
        assert AdfFile.open(agent).config()["pre_llm_hook"] == NEW_HOOK

    def test_a_writer_holding_the_lock_makes_a_clear_busy_error_and_loses_nothing(self, agent):
        adf = AdfFile.open(agent, timeout=0.2)
        with other_connection(agent, immediate=True) as other:
            assert adf.config()["name"] == "support-agent"  # readers are not blocked
            with pytest.raises(AdfBusy, match=r"busy: another program held it past the 0.2 s"):
                adf.write_source("lib/policy.ts", "// mine\n", deauthorize=True)
            other.execute("ROLLBACK")
        assert adf.file("lib/policy.ts").text == POLICY_TS
        assert adf.write_source("lib/policy.ts", "// mine\n", deauthorize=True).status == "saved"
        assert adf.file("lib/policy.ts").text == "// mine\n"


class TestWritingSources:
    def test_an_authorized_file_needs_confirmation_and_loses_authorization(self, agent):
        adf = AdfFile.open(agent)
        before = table_dump(agent)
        assert adf.write_source("lib/policy.ts", "// edited\n").status == "would_deauthorize"
        assert table_dump(agent) == before
        assert adf.write_source("lib/policy.ts", POLICY_TS).status == "unchanged"
        assert adf.file("lib/policy.ts").authorized

        assert adf.write_source("lib/policy.ts", "// édité\n", deauthorize=True).status == "saved"
        edited = adf.file("lib/policy.ts")
        old = next(f for f in before["adf_files"] if f[0] == "lib/policy.ts")
        assert edited.content == "// édité\n".encode()
        assert (edited.size, edited.mime_type, edited.authorized) == (11, "text/typescript", False)
        assert edited.created_at == old[6]
        assert ISO_MS.match(edited.updated_at or "") and edited.updated_at != old[7]
        after = table_dump(agent)
        assert after["adf_config"] == before["adf_config"]
        assert after["adf_meta"] == before["adf_meta"]
        assert pragma(agent, "integrity_check") == "ok"

    @pytest.mark.parametrize(
        ("path", "mime"),
        [("lib/new.js", "text/javascript"), ("hooks/x.ts", "text/typescript"), ("a.bin", None)],
    )
    def test_a_new_file(self, agent, path, mime):
        adf = AdfFile.open(agent)
        assert adf.write_source(path, "export {}\n").status == "saved"
        row = adf.file(path)
        assert row is not None
        assert row.mime_type == (mime or "application/octet-stream")
        assert (row.protection, row.authorized, row.size) == ("none", False, 10)
        assert row.created_at == row.updated_at and ISO_MS.match(row.created_at or "")

    def test_read_only_files_and_bad_paths_are_refused(self, agent):
        adf = AdfFile.open(agent)
        before = table_dump(agent)
        with pytest.raises(AdfProtected, match="read_only"):
            adf.write_source("lib/redact.ts", "x", deauthorize=True)
        for bad in ("./lib/x.ts", "/abs.ts", "lib/../x.ts", "lib\\x.ts", ""):
            with pytest.raises(AdfProtected, match=re.escape(str(agent))):
                adf.write_source(bad, "x")
        assert table_dump(agent) == before


class TestMetadataStamp:
    STAMP = "2026-12-01T10:00:00.123Z"

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (
                '{"a":1,"metadata":{"updated_at":"old","x":[1]},"z":2}',
                '{"a":1,"metadata":{"updated_at":"2026-12-01T10:00:00.123Z","x":[1]},"z":2}',
            ),
            (
                '{"metadata":{"created_at":"c"}}',
                '{"metadata":{"created_at":"c","updated_at":"2026-12-01T10:00:00.123Z"}}',
            ),
            ('{"metadata":{}}', '{"metadata":{"updated_at":"2026-12-01T10:00:00.123Z"}}'),
            (
                '{\n  "metadata": {\n    "created_at": "c"\n  }\n}\n',
                '{\n  "metadata": {\n    "created_at": "c",\n'
                '    "updated_at": "2026-12-01T10:00:00.123Z"\n  }\n}\n',
            ),
            ('{"name":"x"}', '{"name":"x"}'),  # no metadata: nothing is added
            ('{"metadata":null}', '{"metadata":null}'),
        ],
    )
    def test_only_the_stamp_changes(self, text, expected):
        assert with_metadata_stamp(text, self.STAMP, Path("agent.adf")) == expected


def test_a_read_kept_for_the_next_call_gives_way_to_a_change_by_another_program(agent):
    old = 1_700_000_000_000_000_000
    os.utime(agent, ns=(old, old))  # a file last written long ago: reads of it are kept
    adf = AdfFile.open(agent)
    first = adf.config_text()
    assert adf.config_text() == first
    changed = first.replace('"support-agent"', '"support-agenT"')
    db = sqlite3.connect(agent, isolation_level=None)
    db.execute("UPDATE adf_config SET config_json = ? WHERE id = 1", (changed,))
    assert adf.config_text() == changed  # read while the other connection is open
    db.close()
    assert adf.config_text() == changed
    assert [e.path for e in adf.entries()] == [f.path for f in adf.files()]


def test_a_read_does_not_wait_for_a_save_that_waits_on_a_held_agent(agent: Path) -> None:
    adf = AdfFile.open(agent, timeout=60)
    listed = [entry.path for entry in adf.entries()]
    config = adf.config_text()
    saved: list[object] = []
    with other_connection(agent, immediate=True):
        saving = threading.Thread(
            target=lambda: saved.append(adf.write_source("lib/notes.ts", "// note\n"))
        )
        saving.start()
        # The save holds the studio's own connection while it waits on the other's lock.
        deadline = time.monotonic() + 30
        while _OWN_CONNECTION.acquire(blocking=False):
            _OWN_CONNECTION.release()
            assert time.monotonic() < deadline and saving.is_alive()
            time.sleep(0.001)
        answers: list[object] = []
        reading = threading.Thread(
            target=lambda: answers.extend(
                [[e.path for e in adf.entries()], adf.config_text(), adf.looks_open()]
            )
        )
        reading.start()
        reading.join(timeout=20)
        assert not reading.is_alive(), "a read waited for the save"
        assert saving.is_alive() and not saved
    saving.join(timeout=30)
    assert answers == [listed, config, False]
    assert saved and "lib/notes.ts" in [entry.path for entry in adf.entries()]
