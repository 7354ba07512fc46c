"""Samples rebuilt from an ``.adf``'s history (spec/provider-requests.md §4), on real agent files
of both schema versions built by the fixture builder."""

from __future__ import annotations

import json
import sqlite3

import pytest

from studio.core.pre_llm.request import validate_request
from studio.core.provider.history_sample import (
    HistorySampleError,
    RowRange,
    build_history_sample,
    parse_row_range,
    row_kinds,
    row_preview,
    save_history_sample,
    select_rows,
)
from studio.core.workspace.adf_file import AdfFile
from tests.support.adf_files import BASE_MS, HISTORY, AdfSpec, build_adf, default_config

SYSTEM = "You are a support agent. Today is 2026-11-28."


@pytest.fixture(params=[28, 29])
def agent(request, tmp_path) -> AdfFile:
    return AdfFile.open(build_adf(tmp_path / "agent.adf", AdfSpec(schema=request.param)))


def main_rows(adf: AdfFile, rows: str = ":"):
    return select_rows(adf.history("main"), parse_row_range(rows), "main")


def test_main_history_becomes_the_request_messages_on_both_schemas(agent):
    rows = main_rows(agent)
    built = build_history_sample(agent.config(), "main", rows, SYSTEM, origin="agent.adf")
    request = built.sample["request"]
    assert built.valid, built.report_lines()
    assert built.sample["contract"] == "pre_llm" and built.sample["loop"] == "main"
    assert request["system"] == SYSTEM
    main = [(role, json.loads(content)) for loop, role, content in HISTORY if loop == "main"]
    assert [(m["role"], m["content"]) for m in request["messages"]] == main
    assert [m["seq"] for m in request["messages"]] == [1, 2, 3, 4]
    assert [m["created_at"] for m in request["messages"]] == [BASE_MS + i * 1000 for i in range(4)]
    assert list(request["messages"][0]) == ["role", "content", "created_at", "seq"]
    assert validate_request(request) == []
    assert "rows S1 to S4" in built.sample["description"]
    assert "agent.adf" in built.sample["description"]


def test_tools_are_the_enabled_ones_and_options_the_model_settings(agent):
    built = build_history_sample(agent.config(), "main", main_rows(agent), SYSTEM)
    request = built.sample["request"]
    assert [t["name"] for t in request["tools"]] == ["fs_read", "fs_write", "kb_search"]
    assert all(
        t["description"] == "" and t["input_schema"]["type"] == "object" for t in request["tools"]
    )
    assert request["options"] == {"maxTokens": 4096}
    (loss,) = built.losses
    assert loss.change == "changed" and loss.where == "tools"
    assert "fs_read, fs_write, kb_search" in loss.message


def test_model_settings_map_to_options_and_the_rest_is_reported(tmp_path):
    config = default_config()
    config["model"] = {
        "provider": "anthropic",
        "model_id": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "temperature": 0.3,
        "top_p": 0.9,
        "thinking_budget": 1024,
        "stop_sequences": ["END"],
    }
    config["tools"] = [
        {
            "name": "fs_read",
            "enabled": True,
            "description": "Read a file",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
        {"name": "shell", "enabled": False},
        "not-a-tool",
    ]
    adf = AdfFile.open(build_adf(tmp_path / "a.adf", AdfSpec(config=config)))
    built = build_history_sample(adf.config(), "main", main_rows(adf), SYSTEM)
    request = built.sample["request"]
    assert request["options"] == {
        "maxTokens": 2048,
        "temperature": 0.3,
        "topP": 0.9,
        "thinkingBudget": 1024,
    }
    assert request["tools"] == [{k: v for k, v in config["tools"][0].items() if k != "enabled"}]
    assert [loss.line() for loss in built.losses] == [
        "tools[2]: dropped: not a tool object with a name",
        "model.stop_sequences: not representable: a model setting that is no request option",
    ]
    assert built.valid


def test_an_inner_loop_on_schema_29_takes_only_its_own_rows(tmp_path):
    adf = AdfFile.open(build_adf(tmp_path / "a.adf", AdfSpec(schema=29)))
    assert adf.loops() == ["main", "researcher"]
    rows = select_rows(adf.history("researcher"), RowRange(), "researcher")
    built = build_history_sample(adf.config(), "researcher", rows, SYSTEM)
    assert built.sample["loop"] == "researcher"
    assert [m["seq"] for m in built.sample["request"]["messages"]] == [5, 6]
    assert built.valid


def test_schema_28_has_one_history_named_main(tmp_path):
    adf = AdfFile.open(build_adf(tmp_path / "a.adf", AdfSpec(schema=28)))
    assert adf.loops() == ["main"]
    with pytest.raises(HistorySampleError, match="'researcher' has no history"):
        select_rows(adf.history("researcher"), RowRange(), "researcher")


def test_a_range_follows_the_runtime_order_not_the_seq_numbers(tmp_path):
    path = build_adf(tmp_path / "a.adf", AdfSpec(schema=29))
    db = sqlite3.connect(path, isolation_level=None)
    try:  # ADF moved row 4 before row 3 (ord), as a compaction does
        db.execute("UPDATE adf_loop SET ord = 2 WHERE seq = 4")
        db.execute("UPDATE adf_loop SET ord = 3 WHERE seq = 3")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    adf = AdfFile.open(path)
    assert [r.seq for r in select_rows(adf.history("main"), parse_row_range("2:4"), "main")] == [
        2,
        4,
    ]
    with pytest.raises(HistorySampleError, match="S3 comes after S4"):
        select_rows(adf.history("main"), parse_row_range("3:4"), "main")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2:3", RowRange(2, 3)),
        ("2:", RowRange(2, None)),
        (":3", RowRange(None, 3)),
        (":", RowRange()),
        ("4", RowRange(4, 4)),
        (" 1 : 2 ", RowRange(1, 2)),
    ],
)
def test_row_ranges_parse(text, expected):
    assert parse_row_range(text) == expected


@pytest.mark.parametrize("text", ["a:b", "1-3", "", "1:2:3", "-1:2"])
def test_a_bad_row_range_says_how_to_write_one(text):
    with pytest.raises(HistorySampleError, match="FIRST:LAST"):
        parse_row_range(text)


def test_a_row_the_loop_does_not_have_is_named_with_the_rows_it_has(agent):
    with pytest.raises(HistorySampleError, match=r"no row S9 \(its rows: S1 to S4, 4 in all\)"):
        main_rows(agent, "2:9")


def test_a_range_that_cuts_a_tool_call_is_refused_by_the_validator_and_not_saved(agent, tmp_path):
    built = build_history_sample(agent.config(), "main", main_rows(agent, "1:2"), SYSTEM)
    assert not built.valid
    assert any("(row S2)" in line and "never answered" in line for line in built.report_lines())
    samples = tmp_path / "samples"
    with pytest.raises(ValueError, match="does not pass the request checks"):
        save_history_sample(samples, "cut", built)
    assert not (samples / "cut.json").exists()


def test_a_range_starting_at_a_tool_result_is_refused(agent):
    built = build_history_sample(agent.config(), "main", main_rows(agent, "3:4"), SYSTEM)
    assert not built.valid
    assert built.findings[0].path[:3] == ("request", "messages", 0)


def test_a_row_that_is_no_block_array_is_kept_as_text_and_reported(tmp_path):
    rows = [("main", "user", "plain words, not JSON"), ("main", "assistant", '"a JSON string"')]
    adf = AdfFile.open(build_adf(tmp_path / "a.adf", AdfSpec(history_rows=rows)))
    built = build_history_sample(adf.config(), "main", main_rows(adf), SYSTEM)
    messages = built.sample["request"]["messages"]
    assert [m["content"] for m in messages] == ["plain words, not JSON", "a JSON string"]
    assert [loss.where for loss in built.losses][:2] == [
        "adf_loop.S1.content_json",
        "adf_loop.S2.content_json",
    ]
    assert built.valid


def test_a_role_the_request_does_not_know_is_refused(tmp_path):
    rows = [("main", "system", '[{"type":"text","text":"compacted"}]')]
    adf = AdfFile.open(build_adf(tmp_path / "a.adf", AdfSpec(history_rows=rows)))
    built = build_history_sample(adf.config(), "main", main_rows(adf), SYSTEM)
    assert not built.valid
    assert built.findings[0].path[:3] == ("request", "messages", 0)


def test_saving_never_replaces_a_sample_without_force(agent, tmp_path):
    samples = tmp_path / "samples"
    built = build_history_sample(agent.config(), "main", main_rows(agent), SYSTEM)
    path = save_history_sample(samples, "refunds", built)
    assert json.loads(path.read_text()) == built.sample
    other = build_history_sample(agent.config(), "main", main_rows(agent), "Another prompt.")
    with pytest.raises(FileExistsError):
        save_history_sample(samples, "refunds", other)
    assert json.loads(path.read_text())["request"]["system"] == SYSTEM
    save_history_sample(samples, "refunds", other, force=True)
    assert json.loads(path.read_text())["request"]["system"] == "Another prompt."
    assert sorted(p.name for p in samples.iterdir()) == ["refunds.json"]


def test_a_bad_sample_name_is_refused(agent, tmp_path):
    built = build_history_sample(agent.config(), "main", main_rows(agent), SYSTEM)
    with pytest.raises(ValueError, match="sample name"):
        save_history_sample(tmp_path, "../escape", built)


def test_rows_are_described_by_their_block_kinds_and_a_short_preview(tmp_path):
    long_text = "word " * 60
    rows = [
        ("main", "user", json.dumps([{"type": "text", "text": long_text}])),
        (
            "main",
            "assistant",
            json.dumps([{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "a\n b"}]),
        ),
        ("main", "user", "not json"),
        ("main", "user", "[]"),
    ]
    adf = AdfFile.open(build_adf(tmp_path / "a.adf", AdfSpec(history_rows=rows)))
    first, second, third, fourth = adf.history("main")
    assert row_kinds(first) == "text" and len(row_preview(first)) == 120
    assert row_preview(first).endswith("…")
    assert row_kinds(second) == "thinking + text"
    assert row_preview(second) == "(thinking) hm · a b"
    assert (row_kinds(third), row_preview(third)) == ("text", "not json")
    assert (row_kinds(fourth), row_preview(fourth)) == ("empty", "")
