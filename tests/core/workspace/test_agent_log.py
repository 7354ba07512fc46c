"""The agent's own pre-LLM hook log rows as the studio shows and filters them."""

from __future__ import annotations

from studio.core.workspace.adf_file import AdfFile, LogRow
from studio.core.workspace.agent_log import (
    log_data,
    log_event,
    log_json,
    log_lines,
    log_time,
    matches,
)
from tests.support.adf_files import BASE_MS, AdfSpec, build_adf


def hook_rows(tmp_path, schema=29) -> list[LogRow]:
    return AdfFile.open(build_adf(tmp_path / "a.adf", AdfSpec(schema=schema))).hook_logs()


def test_time_is_utc_with_milliseconds():
    assert log_time(BASE_MS + 500) == "2025-11-28 08:53:20.500"
    assert log_time(None) == "" and log_time("soon") == "" and log_time(10**20) == ""


def test_rows_read_as_event_target_message_and_data(tmp_path):
    rows = hook_rows(tmp_path)
    assert [log_event(r) for r in rows] == [
        "pre_llm_hook execute",
        "pre_llm_hook result",
        "pre_llm_hook execute",
        "executor pre_llm_hook_error",
    ]
    assert log_data(rows[0]) == '{"loop": "main", "timeout_ms": 5000}'
    assert log_data(rows[1]) == ""
    assert log_json(rows[3])["loop"] == "researcher"
    assert log_json(rows[3])["time"] == log_time(rows[3].created_at)


def test_schema_28_rows_have_no_loop(tmp_path):
    rows = hook_rows(tmp_path, schema=28)
    assert len(rows) == 4 and all(r.loop is None for r in rows)


def test_filter_by_level_and_by_every_word(tmp_path):
    rows = hook_rows(tmp_path)
    assert [r.event for r in rows if matches(r, level="error")] == ["pre_llm_hook_error"]
    assert [r.id for r in rows if matches(r, "researcher")] == [rows[2].id, rows[3].id]
    assert [r.id for r in rows if matches(r, "RESEARCHER invalid")] == [rows[3].id]
    assert [r.id for r in rows if matches(r, "researcher", "info")] == [rows[2].id]
    assert [r for r in rows if matches(r, "nowhere")] == []
    assert len([r for r in rows if matches(r)]) == 4


def test_lines_are_aligned_and_keep_message_and_data(tmp_path):
    lines = log_lines(hook_rows(tmp_path))
    assert len(lines) == 4
    assert lines[0].startswith("2025-11-28 08:53:21.500  info ")
    assert lines[0].endswith('transform()  {"loop": "main", "timeout_ms": 5000}')
    assert lines[3].index("lib/policy.ts") == lines[0].index("lib/policy.ts")
