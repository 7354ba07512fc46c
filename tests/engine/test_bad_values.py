"""A lone surrogate or a deeply nested value, wherever a hook or a sample puts it, ends as one
turn error (or ok where the value is valid) and one record that holds the surrogate as its JSON
escape; the next run works. Both runtimes, on one runner with a real record store."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.core.json.deep import deep_json
from studio.core.records.store import RecordStore
from studio.core.workspace.folder import Workspace
from studio.engine.runner import Runner
from tests.support.workspaces import REQUEST, make_workspace

PY_HOOKS = """
def surrogate_result(payload):
    return {**payload["request"], "system": "a \\ud800 b"}

def surrogate_message(payload):
    raise ValueError("bad \\ud800 here")

def surrogate_output(payload):
    import sys
    print("out \\ud800", flush=True)
    sys.stderr.write("err \\udcff\\n")
    return payload["request"]

def same(payload):
    return payload["request"]

def _nested(levels):
    value = {}
    for _ in range(levels):
        value = {"a": value}
    return value

def deep_unknown_key(payload):
    return {**payload["request"], "x": _nested(1500)}

def deep_schema(payload):
    request = payload["request"]
    schema = {"type": "object", "properties": {"p": _nested(1500)}}
    return {**request, "tools": [{**request["tools"][0], "input_schema": schema}]}

def too_deep(payload):
    return {**payload["request"], "x": _nested(20000)}
"""

JS_HOOKS = """
export function surrogate_result(p) { return {...p.request, system: "a \\ud800 b"}; }
export function surrogate_message(p) { throw new Error("bad \\ud800 here"); }
export function surrogate_output(p) {
  console.log("out \\ud800"); console.error("err \\udcff"); return p.request;
}
export function same(p) { return p.request; }
function nested(levels) { let v = {}; for (let i = 0; i < levels; i++) v = {a: v}; return v; }
export function deep_unknown_key(p) { return {...p.request, x: nested(1500)}; }
export function deep_schema(p) {
  const schema = {type: "object", properties: {p: nested(1500)}};
  return {...p.request, tools: [{...p.request.tools[0], input_schema: schema}]};
}
export function too_deep(p) { return {...p.request, x: nested(20000)}; }
"""

RUNTIMES = ["py", "js"]


class RecordingRunner:
    """A runner that records every run in the workspace's record store."""

    def __init__(self, workspace: Workspace) -> None:
        self.loop = asyncio.new_event_loop()
        self.store = RecordStore.open(workspace.root)
        self.runner = Runner(workspace, store=self.store)

    def run(self, sample: str = "basic", **kwargs: Any) -> Any:
        return self.loop.run_until_complete(self.runner.run(sample, **kwargs))

    def close(self) -> None:
        self.loop.run_until_complete(self.runner.close())
        self.loop.close()
        self.store.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    # JSON.stringify with an indent builds each level's indentation before it overflows, which
    # takes seconds on a loaded machine: the hooks here are judged on what they return, never on
    # their time.
    return make_workspace(tmp_path / "ws", timeout_ms=30_000)


@pytest.fixture
def recording(workspace: Workspace) -> Iterator[RecordingRunner]:
    (workspace.root / "lib" / "bad.py").write_text(PY_HOOKS)
    (workspace.root / "lib" / "bad.js").write_text(JS_HOOKS)
    live = RecordingRunner(workspace)
    yield live
    live.close()


def run_and_follow(recording: RecordingRunner, hook: str, sample: str = "basic") -> Any:
    outcome = recording.run(sample, hook=hook)
    follow_up = recording.run()
    assert follow_up.status == "ok", follow_up.turn_error
    return outcome


def stored_text(recording: RecordingRunner, run_id: str) -> str:
    """Every column of the run's row and its payload, as SQLite holds them."""
    recording.store.flush()  # the record is written after the run's outcome is delivered
    with sqlite3.connect(recording.store.path) as db:
        row = db.execute(
            "SELECT d.*, p.payload FROM decisions d LEFT JOIN payloads p ON p.seq = d.seq "
            "WHERE d.run_id = ?",
            (run_id,),
        ).fetchone()
    assert row is not None, f"run {run_id} was not recorded"
    return " ".join(str(column) for column in row)


@pytest.mark.parametrize("ext", RUNTIMES)
def test_lone_surrogate_in_result_is_ok_and_stored_as_its_escape(recording, ext):
    outcome = run_and_follow(recording, f"lib/bad.{ext}:surrogate_result")
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["system"] == "a \ud800 b"
    assert "a \\ud800 b" in stored_text(recording, outcome.run_id)
    again = recording.store.get(outcome.run_id).outcome()
    assert again.result["system"] == "a \ud800 b"


@pytest.mark.parametrize("ext", RUNTIMES)
def test_lone_surrogate_in_exception_message_is_one_turn_error(recording, ext):
    outcome = run_and_follow(recording, f"lib/bad.{ext}:surrogate_message")
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "exception"
    assert "bad \ud800 here" in outcome.turn_error.message
    assert "bad \\ud800 here" in stored_text(recording, outcome.run_id)


@pytest.mark.parametrize("ext", RUNTIMES)
def test_lone_surrogate_in_output_is_kept_as_escape(recording, ext):
    outcome = run_and_follow(recording, f"lib/bad.{ext}:surrogate_output")
    assert outcome.status == "ok", outcome.turn_error
    shown = outcome.stdout.encode("utf-8", "backslashreplace").decode()
    assert "out \\ud800" in shown
    assert "\\ud800" in stored_text(recording, outcome.run_id)


@pytest.mark.parametrize("ext", RUNTIMES)
def test_sample_with_escaped_lone_surrogate_runs_and_is_recorded(recording, workspace, ext):
    text = json.dumps({"loop": "main", "request": {**REQUEST, "system": "S"}})
    (workspace.root / "samples" / "surrogate.json").write_text(text.replace('"S"', '"x \\ud800 y"'))
    outcome = run_and_follow(recording, f"lib/bad.{ext}:same", sample="surrogate")
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["system"] == "x \ud800 y"
    assert "x \\ud800 y" in stored_text(recording, outcome.run_id)


@pytest.mark.parametrize("ext", RUNTIMES)
def test_hook_file_name_that_is_not_utf8(recording, workspace, ext):
    name = os.fsdecode(b"lib/h\xff." + ext.encode())
    hooks = PY_HOOKS if ext == "py" else JS_HOOKS
    with open(os.fsencode(workspace.root / name), "w") as f:
        f.write(hooks)
    outcome = run_and_follow(recording, f"{name}:surrogate_message")
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "exception"
    assert "h\\udcff" in stored_text(recording, outcome.run_id)


@pytest.mark.parametrize("ext", RUNTIMES)
def test_result_nested_1500_deep_is_checked_at_its_path(recording, ext):
    outcome = run_and_follow(recording, f"lib/bad.{ext}:deep_unknown_key")
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "invalid_result"
    assert outcome.turn_error.path == "/x"
    stored_text(recording, outcome.run_id)


@pytest.mark.parametrize("ext", RUNTIMES)
def test_valid_result_nested_1500_deep_is_ok_and_recorded(recording, ext):
    outcome = run_and_follow(recording, f"lib/bad.{ext}:deep_schema")
    assert outcome.status == "ok", outcome.turn_error
    again = recording.store.get(outcome.run_id).outcome()
    with deep_json():  # comparing 1,500 levels recurses once per level
        assert again.result == outcome.result


@pytest.mark.parametrize("ext", RUNTIMES)
def test_result_nested_past_what_the_runtimes_take_is_invalid(recording, ext):
    outcome = run_and_follow(recording, f"lib/bad.{ext}:too_deep")
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "invalid_result"
    # Python says where the studio's bound is; JavaScript, as ADF, what JSON.stringify said.
    expected = "nested deeper than 5,000 levels" if ext == "py" else "Maximum call stack size"
    assert expected in outcome.turn_error.message
    stored_text(recording, outcome.run_id)
