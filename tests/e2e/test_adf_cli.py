"""The command line on ``.adf`` agent files: the bundled ``resources/sample-agent.adf`` (run on a
copy, read on the shipped file) and fixture-built ones."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from studio.core.workspace.adf_file import AdfFile, sidecars
from tests.support.adf_files import AdfSpec, build_adf, pragma, table_dump
from tests.support.paths import REPOSITORY

SHIPPED = REPOSITORY / "resources" / "sample-agent.adf"
SHIPPED_STATE = REPOSITORY / "resources" / "sample-agent.adf.hookstudio"
REMINDER = "Never copy customer data into tool arguments."


def studio(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
    )


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    """A copy of the shipped agent and its studio folder (samples, settings), no records."""
    shutil.copyfile(SHIPPED, tmp_path / SHIPPED.name)
    shutil.copytree(
        SHIPPED_STATE, tmp_path / SHIPPED_STATE.name, ignore=shutil.ignore_patterns(".hookstudio")
    )
    return tmp_path / SHIPPED.name


def test_the_shipped_agent_is_a_clean_schema_29_file():
    assert sidecars(SHIPPED) == []
    adf = AdfFile.open(SHIPPED)
    assert (adf.meta.schema_version, adf.read_only_reason) == (29, None)
    assert adf.config()["pre_llm_hook"]["source"] == "lib/policy.ts:transform"
    assert adf.file("lib/policy.ts") is not None
    assert adf.loops() == ["main", "researcher"] and adf.hook_logs()


def test_printing_the_hook_of_the_shipped_agent_leaves_it_byte_for_byte(tmp_path):
    before = SHIPPED.read_bytes()
    done = studio("hook", str(SHIPPED))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pre_llm_hook"]["source"] == "lib/policy.ts:transform"
    assert SHIPPED.read_bytes() == before
    assert sidecars(SHIPPED) == []


def test_run_executes_the_agents_typescript_hook_and_records_it(agent):
    before = table_dump(agent)
    done = studio("run", str(agent), "--sample", "support-ticket", "--json")
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["status"] == "ok", outcome
    assert outcome["request"]["system"].endswith(REMINDER)
    assert [t["name"] for t in outcome["request"]["tools"]] == ["fs_read", "fs_write"]
    assert table_dump(agent) == before  # the run wrote nothing into the agent

    records = studio("records", str(agent))
    assert records.returncode == 0, records.stderr
    assert "lib/policy.ts:transform" in records.stdout and "support-ticket" in records.stdout
    assert (agent.parent / "sample-agent.adf.hookstudio" / ".hookstudio").is_dir()


def test_run_follows_a_source_edited_in_the_database(agent):
    adf = AdfFile.open(agent)
    edited = (adf.file("lib/policy.ts").text or "").replace(REMINDER, "Edited in the agent.")
    assert adf.write_source("lib/policy.ts", edited, deauthorize=True).status == "saved"
    done = studio("run", str(agent), "--sample", "support-ticket", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["request"]["system"].endswith("Edited in the agent.")


def test_hook_set_saves_by_the_safe_path_and_a_reopen_shows_it(agent, tmp_path):
    new = {"source": "lib/policy.ts:transform", "scope": "all", "timeout_ms": 3000}
    before = table_dump(agent)
    file = tmp_path / "hook.json"
    file.write_text(json.dumps(new))
    done = studio("hook", str(agent), "--set", str(file))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["saved"] == str(agent)
    shown = studio("hook", str(agent))
    assert json.loads(shown.stdout) == {"pre_llm_hook": new}
    after = table_dump(agent)
    for table in set(before) - {"adf_config", "adf_meta"}:
        assert after[table] == before[table], table
    assert pragma(agent, "integrity_check") == "ok"
    assert pragma(agent, "journal_mode") == "wal"

    removed = studio("hook", str(agent), "--set", "-", stdin="null")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(studio("hook", str(agent)).stdout) == {}


def test_what_hook_prints_edited_can_be_given_back_to_hook_set(agent):
    printed = json.loads(studio("hook", str(agent)).stdout)
    printed["pre_llm_hook"]["loops"].append("reviewer")
    done = studio("hook", str(agent), "--set", "-", stdin=json.dumps(printed))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(studio("hook", str(agent)).stdout) == printed


def test_hook_set_refuses_an_invalid_hook_with_its_findings(agent):
    before = agent.read_bytes()
    done = studio(
        "hook", str(agent), "--set", "-", stdin='{"source": "lib/policy.ts", "timeout_ms": 10}'
    )
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["valid"] is False
    assert any(e["path"] == "/pre_llm_hook/timeout_ms" for e in result["errors"])
    assert agent.read_bytes() == before


def test_hook_set_on_an_agent_open_in_adf_is_refused_and_changes_nothing(agent):
    other = sqlite3.connect(agent, isolation_level=None)
    try:
        other.execute("SELECT 1 FROM adf_meta").fetchone()
        before = table_dump(agent)
        done = studio("hook", str(agent), "--set", "-", stdin='{"source": "lib/policy.ts"}')
        assert done.returncode == 2
        assert "looks open in ADF" in done.stderr
        assert "close the agent in ADF first" in done.stderr
        assert table_dump(agent) == before
    finally:
        other.close()


@pytest.mark.parametrize(
    ("content", "words"),
    [(b"", "is empty"), (b"plain text\n", "is not a SQLite database")],
)
def test_every_workspace_command_names_an_unusable_file(tmp_path, content, words):
    path = tmp_path / "broken.adf"
    path.write_bytes(content)
    for args in (
        ("hook", str(path)),
        ("run", str(path), "--sample", "x"),
        ("records", str(path)),
        ("check-config", str(path)),
    ):
        done = studio(*args)
        assert done.returncode == 2, args
        assert f"{path}: {words}" in done.stderr, args
    assert path.read_bytes() == content
    assert not (tmp_path / "broken.adf.hookstudio").exists()


def test_a_newer_schema_is_read_but_not_saved(tmp_path):
    path = build_adf(tmp_path / "new.adf", AdfSpec(schema=30))
    before = path.read_bytes()
    shown = studio("hook", str(path))
    assert shown.returncode == 0
    assert "schema version '30' is newer" in shown.stderr
    done = studio("hook", str(path), "--set", "-", stdin='{"source": "lib/policy.ts"}')
    assert done.returncode == 2
    assert "read-only" in done.stderr
    assert path.read_bytes() == before


def test_check_config_reads_the_agents_config(agent):
    done = studio("check-config", str(agent), "--loop", "researcher")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["applies"] == {"main": True, "researcher": True}


def test_an_invalid_hook_in_the_agent_stops_the_run_naming_the_agent_file(agent):
    db = sqlite3.connect(agent, isolation_level=None)
    config = json.loads(db.execute("SELECT config_json FROM adf_config").fetchone()[0])
    config["pre_llm_hook"]["timeout_ms"] = 10
    db.execute("UPDATE adf_config SET config_json = ?", (json.dumps(config),))
    db.close()
    done = studio("run", str(agent), "--sample", "support-ticket", "--json")
    assert done.returncode == 3, done.stderr
    error = json.loads(done.stdout)["turn_error"]
    assert error["kind"] == "config_invalid"
    assert "sample-agent.adf" in json.dumps(error)
    assert "agent.json" not in json.dumps(error)


def test_bench_runs_the_agents_hook(agent):
    done = studio("bench", str(agent), "--sample", "support-ticket", "-n", "3", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["n"] == 3


def test_hook_on_a_folder_workspace_prints_and_saves_agent_json(tmp_path):
    folder = tmp_path / "ws"
    shutil.copytree(
        REPOSITORY / "resources" / "sample-workspace",
        folder,
        ignore=shutil.ignore_patterns(".hookstudio"),
    )
    shown = studio("hook", str(folder))
    assert json.loads(shown.stdout)["pre_llm_hook"]["source"] == "lib/policy.ts:transform"
    before = json.loads((folder / "agent.json").read_text())
    done = studio("hook", str(folder), "--set", "-", stdin='{"source": "lib/policy.py"}')
    assert done.returncode == 0, done.stderr
    after = json.loads((folder / "agent.json").read_text())
    assert after["pre_llm_hook"] == {"source": "lib/policy.py"}
    assert list(after) == list(before)
    assert {k: v for k, v in after.items() if k != "pre_llm_hook"} == {
        k: v for k, v in before.items() if k != "pre_llm_hook"
    }


def test_a_source_named_other_than_its_exact_key_is_missing_as_in_adf(agent):
    new = {"source": "./lib/policy.ts:transform"}
    done = studio("hook", str(agent), "--set", "-", stdin=json.dumps(new))
    assert done.returncode == 0, done.stderr
    run = studio("run", str(agent), "--sample", "support-ticket", "--json")
    assert run.returncode == 3, run.stderr
    error = json.loads(run.stdout)["turn_error"]
    assert error["kind"] == "source_missing"
    assert "ADF names its files exactly: 'lib/policy.ts'" in error["message"]


RESTRICTED_HOOK = """\
async function transform(input: any) {
  let outcome = 'wrote';
  try {
    await adf.fs_write({ path: 'notes.md', content: 'x' });
  } catch (e: any) {
    outcome = e.code;
  }
  return { ...input.request, system: `${input.request.system} [${outcome}]` };
}
"""


def test_the_authorized_column_decides_what_a_source_may_call(agent):
    db = sqlite3.connect(agent, isolation_level=None)
    config = json.loads(db.execute("SELECT config_json FROM adf_config").fetchone()[0])
    config["tools"] = [{"name": "fs_write", "enabled": True, "restricted": True}]
    db.execute("UPDATE adf_config SET config_json = ?", (json.dumps(config),))
    db.close()
    adf = AdfFile.open(agent)
    for path in ("lib/owner.ts", "lib/visitor.ts"):
        assert adf.write_source(path, RESTRICTED_HOOK).status == "saved"
    db = sqlite3.connect(agent, isolation_level=None)
    db.execute("UPDATE adf_files SET authorized = 1 WHERE path = 'lib/owner.ts'")
    db.close()
    state = agent.parent / "sample-agent.adf.hookstudio" / "samples" / "support-ticket.json"
    sample = json.loads(state.read_text())
    sample["adf"] = {"replies": {"fs_write": {"result": {"ok": True}}}}
    state.write_text(json.dumps(sample))

    systems = {}
    for path in ("lib/owner.ts", "lib/visitor.ts"):
        done = studio(
            "run", str(agent), "--sample", "support-ticket", "--hook", f"{path}:transform", "--json"
        )
        assert done.returncode == 0, done.stdout + done.stderr
        systems[path] = json.loads(done.stdout)["request"]["system"]
    assert systems["lib/owner.ts"].endswith("[wrote]")
    assert systems["lib/visitor.ts"].endswith("[REQUIRES_AUTHORIZED_CODE]")


def test_hook_set_judges_sources_as_an_agent_file_does_and_says_what_will_fail(agent):
    # In an .adf a source is a key: one that would leave a folder is only a warning there.
    new = {"source": "../shared/policy.ts:transform", "timeout_ms": 3000}
    done = studio("hook", str(agent), "--set", "-", stdin=json.dumps(new))
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["valid"] is True and result["errors"] == []
    assert [w["rule"] for w in result["warnings"]] == ["studio.source.path"]
    assert result["runtime_errors"] == []
