"""`hook-studio history-sample` and `hook-studio agent-log` as scripts call them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.adf_files import AdfSpec, build_adf, table_dump

SYSTEM = "You are a support agent."


def studio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def agent(tmp_path):
    return build_adf(tmp_path / "support.adf", AdfSpec(schema=29))


def test_history_sample_prints_the_sample_and_the_report(agent):
    done = studio("history-sample", str(agent), "--loop", "researcher", "--system", SYSTEM)
    assert done.returncode == 0, done.stderr
    sample = json.loads(done.stdout)
    assert sample["loop"] == "researcher" and sample["request"]["system"] == SYSTEM
    assert [m["seq"] for m in sample["request"]["messages"]] == [5, 6]
    assert "loop researcher: 2 rows, S5 to S6" in done.stderr
    assert "tools: changed:" in done.stderr


def test_history_sample_saves_into_the_agents_workspace_and_leaves_the_file_alone(agent):
    before = table_dump(agent)
    args = ("history-sample", str(agent), "--rows", "1:3", "--system", SYSTEM, "--name", "refund")
    done = studio(*args)
    assert done.returncode == 0, done.stderr
    saved = agent.with_name("support.adf.hookstudio") / "samples" / "refund.json"
    assert json.loads(saved.read_text())["request"]["messages"][-1]["seq"] == 3
    assert f"saved {saved}" in done.stderr
    assert table_dump(agent) == before

    again = studio(*args[:-1], "refund")
    assert again.returncode == 2 and "exists already (--force replaces it)" in again.stderr
    forced = studio(*args, "--force", "--json")
    assert forced.returncode == 0 and json.loads(forced.stdout)["saved"] == str(saved)


def test_a_range_the_validator_refuses_exits_1_and_saves_nothing(agent):
    done = studio(
        "history-sample", str(agent), "--rows", "1:2", "--system", SYSTEM, "--name", "cut", "--json"
    )
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["valid"] is False and "saved" not in result
    assert result["findings"][0]["path"] == "/request/messages/1/content/1"
    assert not (agent.with_name("support.adf.hookstudio") / "samples" / "cut.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--loop", "nope"), "no history in loop 'nope' (loops: main, researcher)"),
        (("--rows", "2:99"), "no row S99"),
        (("--rows", "two"), "FIRST:LAST"),
    ],
)
def test_history_sample_names_what_is_wrong(agent, args, message):
    done = studio("history-sample", str(agent), "--system", SYSTEM, *args)
    assert done.returncode == 2 and message in done.stderr


def test_a_folder_has_no_history(tmp_path):
    done = studio("history-sample", str(tmp_path), "--system", SYSTEM)
    assert done.returncode == 2 and "not an .adf agent file" in done.stderr
    log = studio("agent-log", str(tmp_path))
    assert log.returncode == 2 and "not an .adf agent file" in log.stderr


def test_agent_log_prints_the_hook_rows_oldest_first(agent):
    done = studio("agent-log", str(agent))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4
    assert "pre_llm_hook execute" in lines[0] and "executor pre_llm_hook_error" in lines[3]
    assert "agent started" not in done.stdout and "tool shell is disabled" not in done.stdout


def test_agent_log_json_filters_by_level_text_and_limit(agent):
    rows = json.loads(studio("agent-log", str(agent), "--json").stdout)["rows"]
    assert [r["event"] for r in rows] == ["execute", "result", "execute", "pre_llm_hook_error"]
    errors = json.loads(studio("agent-log", str(agent), "--json", "--level", "error").stdout)
    assert [r["level"] for r in errors["rows"]] == ["error"]
    found = json.loads(studio("agent-log", str(agent), "--json", "--filter", "researcher").stdout)
    assert [r["loop"] for r in found["rows"]] == ["researcher", "researcher"]
    newest = json.loads(studio("agent-log", str(agent), "--json", "--limit", "1").stdout)
    assert newest["rows"] == rows[-1:]


def test_agent_log_of_an_agent_without_hook_rows(tmp_path):
    agent = build_adf(tmp_path / "quiet.adf", AdfSpec(logs=False))
    done = studio("agent-log", str(agent))
    assert done.returncode == 0 and done.stdout == "no pre_llm_hook rows in the agent's log\n"
