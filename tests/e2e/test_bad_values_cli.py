"""`hook-studio run` (text and --json) and `records` on hooks and samples that hold a lone
surrogate or a result nested 1,500 deep: one turn error or ok, valid JSON, the escape shown and
recorded, and the next run works."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.support.paths import BUNDLED_WORKSPACE as BUNDLED

PY_HOOKS = """
def surrogate_result(payload):
    return {**payload["request"], "system": "a \\ud800 b"}

def surrogate_message(payload):
    raise ValueError("bad \\ud800 here")

def deep_schema(payload):
    value = {}
    for _ in range(1500):
        value = {"a": value}
    request = payload["request"]
    schema = {"type": "object", "properties": {"p": value}}
    return {**request, "tools": [{**request["tools"][0], "input_schema": schema}]}
"""

JS_HOOKS = """
export function surrogate_result(p) { return {...p.request, system: "a \\ud800 b"}; }
export function surrogate_message(p) { throw new Error("bad \\ud800 here"); }
export function deep_schema(p) {
  let v = {}; for (let i = 0; i < 1500; i++) v = {a: v};
  const schema = {type: "object", properties: {p: v}};
  return {...p.request, tools: [{...p.request.tools[0], input_schema: schema}]};
}
"""


def studio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio", *args],
        capture_output=True,
        text=True,
        errors="surrogateescape",
        timeout=120,
    )


@pytest.fixture
def workspace(tmp_path) -> str:
    target = tmp_path / "ws"
    shutil.copytree(BUNDLED, target, ignore=shutil.ignore_patterns(".hookstudio", "__pycache__"))
    (target / "bad.py").write_text(PY_HOOKS)
    (target / "bad.js").write_text(JS_HOOKS)
    return str(target)


def latest_record(workspace: str) -> str:
    done = studio("records", workspace, "--limit", "1", "--jsonl")
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_json(workspace: str, *args: str) -> dict:
    done = studio("run", workspace, "--sample", "support-ticket", "--json", *args)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 3), done.stderr
    with_room = sys.getrecursionlimit()
    sys.setrecursionlimit(max(with_room, 6000))
    try:
        return json.loads(done.stdout)
    finally:
        sys.setrecursionlimit(with_room)


def assert_next_run_works(workspace: str) -> None:
    assert run_json(workspace)["status"] == "ok"


@pytest.mark.parametrize("ext", ["py", "js"])
def test_surrogate_result_is_ok_shown_and_recorded_as_escape(workspace, ext):
    hook = f"bad.{ext}:surrogate_result"
    result = run_json(workspace, "--hook", hook)
    assert result["status"] == "ok"
    assert result["request"]["system"] == "a \ud800 b"
    assert '"a \\ud800 b"' in latest_record(workspace)
    done = studio("run", workspace, "--sample", "support-ticket", "--hook", hook)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert_next_run_works(workspace)


@pytest.mark.parametrize("ext", ["py", "js"])
def test_surrogate_in_exception_message_is_one_turn_error_shown_as_escape(workspace, ext):
    hook = f"bad.{ext}:surrogate_message"
    done = studio("run", workspace, "--sample", "support-ticket", "--hook", hook)
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    assert "bad \\ud800 here" in done.stdout
    assert "bad \\ud800 here" in latest_record(workspace)
    result = run_json(workspace, "--hook", hook)
    assert result["turn_error"]["kind"] == "exception"
    assert "bad \ud800 here" in result["turn_error"]["message"]
    assert_next_run_works(workspace)


@pytest.mark.parametrize("ext", ["py", "js"])
def test_result_nested_1500_deep_prints_as_json_and_is_recorded(workspace, ext):
    result = run_json(workspace, "--hook", f"bad.{ext}:deep_schema")
    assert result["status"] == "ok", result["turn_error"]
    assert latest_record(workspace).count('{"a":') == 1500
    assert_next_run_works(workspace)


@pytest.mark.parametrize("ext", ["py", "js"])
def test_hook_file_name_that_is_not_utf8(workspace, ext):
    name = os.fsdecode(b"h\xff." + ext.encode())
    shutil.copy(os.path.join(workspace, f"bad.{ext}"), os.fsencode(os.path.join(workspace, name)))
    hook = f"{name}:surrogate_message"
    done = studio("run", workspace, "--sample", "support-ticket", "--hook", hook)
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    assert "h\\udcff" in done.stdout
    assert "h\\udcff" in latest_record(workspace)
    assert_next_run_works(workspace)


def write_deep_sample(workspace: str, name: str, levels: int) -> None:
    """The bundled sample with an array nested ``levels`` deep in a tool's input schema."""
    path = os.path.join(workspace, "samples", "support-ticket.json")
    with open(path) as f:
        sample = json.load(f)
    sample["request"]["tools"][0]["input_schema"] = {"type": "object", "properties": {}}
    text = json.dumps(sample).replace('"properties": {}', '"deep": ' + "[" * levels + "]" * levels)
    with open(os.path.join(workspace, "samples", f"{name}.json"), "w") as f:
        f.write(text)


@pytest.mark.parametrize("hook", ["lib/policy.py:transform", "lib/policy.ts:transform"])
def test_sample_nested_1500_deep_runs_and_is_recorded(workspace, hook):
    write_deep_sample(workspace, "deep", 1500)
    done = studio("run", workspace, "--sample", "deep", "--hook", hook, "--json")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert latest_record(workspace).count("[") >= 1500
    assert_next_run_works(workspace)


def test_sample_nested_past_what_the_runtimes_take_is_one_turn_error(workspace):
    write_deep_sample(workspace, "deep", 20000)
    done = studio("run", workspace, "--sample", "deep", "--json")
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    error = json.loads(done.stdout)["turn_error"]
    assert error["kind"] == "sample_invalid"
    assert "nested deeper than 5,000 levels" in error["message"]
    assert '"sample_invalid"' in latest_record(workspace)
    assert_next_run_works(workspace)
