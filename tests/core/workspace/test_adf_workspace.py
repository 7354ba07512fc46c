"""One workspace abstraction over a folder and an ``.adf`` agent file."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from studio.core.pre_llm.host_calls import AdfSettings
from studio.core.workspace.adf_file import AdfNotAgent
from studio.core.workspace.adf_workspace import AdfHookDocument, AdfWorkspace, state_folder
from studio.core.workspace.agent_document import AgentDocument
from studio.core.workspace.folder import Workspace, WorkspaceFileError
from tests.support.adf_files import POLICY_TS, AdfSpec, build_adf, table_dump
from tests.support.workspaces import write_json

HOOK = {"source": "lib/policy.ts:transform", "timeout_ms": 4000}


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return build_adf(tmp_path / "agent.adf")


def test_opening_a_file_gives_an_adf_workspace_with_its_state_beside_it(agent):
    workspace = Workspace.open(agent)
    assert isinstance(workspace, AdfWorkspace)
    assert workspace.kind == "adf"
    assert workspace.location == agent
    assert workspace.root == agent.parent / "agent.adf.hookstudio" == state_folder(agent)
    assert workspace.root.is_dir()
    assert workspace.agent_label == "agent.adf"
    assert workspace.agent_document()["name"] == "support-agent"
    assert workspace.read_only_reason is None and workspace.open_elsewhere is False
    assert workspace.notice() is None


def test_samples_and_settings_come_from_the_state_folder(agent):
    workspace = Workspace.open(agent)
    write_json(workspace.root / "samples" / "basic.json", {"request": {"messages": []}})
    write_json(workspace.root / "hookstudio.json", {"version": 1, "loops": ["researcher"]})
    assert [s.name for s in workspace.samples()] == ["basic"]
    assert workspace.sample("basic").path == workspace.root / "samples" / "basic.json"
    settings = workspace.settings()
    assert settings.loops == ["researcher"]
    # authorized comes from the agent file's column, not from the studio's settings
    assert settings.section("adf") == AdfSettings(authorized=("lib/policy.ts",))


def test_hook_sources_with_their_state(agent):
    workspace = Workspace.open(agent)
    assert workspace.hook_sources((".ts", ".js")) == ["lib/policy.ts", "lib/redact.ts"]
    files = {f.path: f for f in workspace.source_files((".ts",))}
    assert (files["lib/policy.ts"].authorized, files["lib/policy.ts"].read_only) == (True, False)
    assert (files["lib/redact.ts"].authorized, files["lib/redact.ts"].read_only) == (False, True)
    assert workspace.read_source("lib/policy.ts") == POLICY_TS
    with pytest.raises(WorkspaceFileError, match=r"no file 'lib/none\.ts'"):
        workspace.read_source("lib/none.ts")


def test_an_agent_whose_files_cannot_be_read_offers_no_source_and_says_why_when_listed(agent):
    db = sqlite3.connect(agent)
    db.execute("DROP TABLE adf_files")
    db.commit()
    db.close()
    workspace = Workspace.open(agent)
    # Offered as a folder offers what it cannot list: nothing, without failing its caller.
    assert workspace.hook_sources((".ts", ".js")) == []
    with pytest.raises(WorkspaceFileError, match=r"agent\.adf.*no such table: adf_files"):
        workspace.source_files((".ts",))


def test_sources_are_copied_read_only_for_the_runtimes_and_follow_the_database(agent):
    workspace = Workspace.open(agent)
    root = workspace.sync_sources()
    assert root == workspace.source_root
    copy = root / "lib" / "policy.ts"
    assert copy.read_text() == POLICY_TS
    assert not os.stat(copy).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    unchanged_inode = os.stat(root / "lib" / "redact.ts").st_ino

    workspace.write_source("lib/policy.ts", "// new\n", deauthorize=True)
    workspace.write_source("extra/more.ts", "// more\n")
    db = sqlite3.connect(agent, isolation_level=None)
    db.execute("DELETE FROM adf_files WHERE path = 'data/refund-policy.json'")
    db.close()
    workspace.sync_sources()
    assert copy.read_text() == "// new\n"
    assert (root / "extra" / "more.ts").read_text() == "// more\n"
    assert not (root / "data").exists()  # gone from the agent, gone from the copies
    assert os.stat(root / "lib" / "redact.ts").st_ino == unchanged_inode  # same bytes, untouched
    assert workspace.settings().section("adf") == AdfSettings(authorized=())


def test_the_database_never_holds_studio_state(agent):
    before = table_dump(agent)
    workspace = Workspace.open(agent)
    write_json(workspace.root / "samples" / "basic.json", {"request": {"messages": []}})
    workspace.sync_sources()
    workspace.settings()
    assert table_dump(agent) == before


def test_both_kinds_save_a_hook_edit_through_save_config(agent, tmp_path):
    folder = tmp_path / "folder"
    write_json(folder / "agent.json", {"name": "x", "limits": {"execution_timeout_ms": 1000}})
    for workspace in (Workspace.open(folder), Workspace.open(agent)):
        document = workspace.hook_document()
        assert isinstance(document, AdfHookDocument if workspace.kind == "adf" else AgentDocument)
        document.save_config(HOOK)
        assert workspace.hook_document().hook_config == HOOK
        assert workspace.agent_document()["pre_llm_hook"] == HOOK
    assert json.loads((folder / "agent.json").read_text())["pre_llm_hook"] == HOOK


def test_a_file_that_is_not_an_agent_is_refused_without_a_state_folder(tmp_path):
    path = tmp_path / "notes.adf"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.close()
    with pytest.raises(AdfNotAgent, match=r"notes\.adf"):
        Workspace.open(path)
    assert not state_folder(path).exists()


def test_an_unreadable_config_is_a_workspace_error_naming_the_file(tmp_path):
    path = build_adf(tmp_path / "a.adf", AdfSpec(config_text='{"name": "x",'))
    workspace = Workspace.open(path)
    with pytest.raises(WorkspaceFileError, match=r"a\.adf.*not JSON"):
        workspace.agent_document()


def test_an_agent_open_elsewhere_is_seen_at_open_and_now(agent):
    other = sqlite3.connect(agent, isolation_level=None)
    try:
        other.execute("SELECT 1 FROM adf_meta").fetchone()
        workspace = Workspace.open(agent)
        assert workspace.open_elsewhere and workspace.looks_open()
        assert "agent.adf looks open in ADF" in (workspace.notice() or "")
    finally:
        other.close()
    assert workspace.open_elsewhere and not workspace.looks_open()
    assert workspace.notice() is None
    assert not Workspace.open(agent).open_elsewhere


def test_copies_never_leave_the_sources_folder_and_a_clash_is_skipped(agent, tmp_path):
    db = sqlite3.connect(agent, isolation_level=None)
    rows = [("../escape.ts", b"x"), ("/abs.ts", b"x"), ("clash", b"file"), ("clash/in.ts", b"x")]
    db.executemany(
        "INSERT INTO adf_files (path, content, size, created_at, updated_at) "
        "VALUES (?, ?, 1, 'c', 'u')",
        rows,
    )
    db.close()
    workspace = Workspace.open(agent)
    root = workspace.sync_sources()
    assert (root / "lib" / "policy.ts").read_text() == POLICY_TS
    assert (root / "clash").read_bytes() == b"file"
    assert not (root / "clash").is_dir()
    assert not (root.parent / "escape.ts").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.adf", "agent.adf.hookstudio"]


def test_a_change_written_by_another_program_reaches_the_copy(agent):
    workspace = Workspace.open(agent)
    copy = workspace.sync_sources() / "lib" / "policy.ts"
    db = sqlite3.connect(agent, isolation_level=None)
    db.execute(
        "UPDATE adf_files SET content = ?, updated_at = 'later' WHERE path = 'lib/policy.ts'",
        (b"// same length? no, shorter\n",),
    )
    db.close()
    workspace.sync_sources()
    assert copy.read_bytes() == b"// same length? no, shorter\n"


def test_agent_json_beside_the_state_is_never_where_the_config_goes(agent):
    workspace = Workspace.open(agent)
    assert workspace.agent_path == agent
    assert not (workspace.root / "agent.json").exists()
