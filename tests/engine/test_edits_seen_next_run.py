"""What a run reads from the workspace is read once per file version and reused while the file
is unchanged; an edit between two runs is what the second run uses."""

from __future__ import annotations

import json
import os

from tests.support.workspaces import REQUEST, write_json

ENV_HOOK = (
    "import os\n"
    "def transform(payload):\n"
    "    return {**payload['request'], 'system': os.environ.get('WORKSPACE_VAR', 'unset')}\n"
)


def test_an_edited_hookstudio_json_is_used_by_the_next_run(workspace, runner):
    (workspace.root / "lib" / "policy.py").write_text(ENV_HOOK)
    assert runner.run().result["system"] == "declared"
    write_json(
        workspace.root / "hookstudio.json", {"version": 1, "env": {"WORKSPACE_VAR": "edited"}}
    )
    assert runner.run().result["system"] == "edited"


def test_hookstudio_json_made_invalid_stops_the_next_run(workspace, runner):
    assert runner.run().status == "ok"
    write_json(workspace.root / "hookstudio.json", {"version": 1, "limits": {"memory_mb": 1}})
    outcome = runner.run()
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "config_invalid"
    assert outcome.turn_error.path == "/limits/memory_mb"


def test_an_edited_agent_json_is_used_by_the_next_run(workspace, runner):
    (workspace.root / "lib" / "other.py").write_text(
        "def shout(payload):\n    return {**payload['request'], 'system': 'OTHER HOOK'}\n"
    )
    first = runner.run()
    assert first.status == "ok"
    assert [t["name"] for t in first.result["tools"]] == ["fs_read"]
    agent = json.loads((workspace.root / "agent.json").read_text())
    agent["pre_llm_hook"] = {"source": "lib/other.py:shout"}
    write_json(workspace.root / "agent.json", agent)
    second = runner.run()
    assert second.status == "ok"
    assert second.result["system"] == "OTHER HOOK"
    assert second.hook.source == "lib/other.py"
    assert second.hook.function == "shout"


def test_an_agent_json_edit_that_breaks_the_hook_config_stops_the_next_run(workspace, runner):
    assert runner.run().status == "ok"
    agent = json.loads((workspace.root / "agent.json").read_text())
    agent["pre_llm_hook"]["scope"] = "everywhere"
    write_json(workspace.root / "agent.json", agent)
    outcome = runner.run()
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "config_invalid"


def test_an_edited_sample_is_what_the_next_run_sends(workspace, runner):
    assert runner.run().input == REQUEST
    edited = {**REQUEST, "system": "An edited system prompt, longer than before."}
    write_json(workspace.root / "samples" / "basic.json", {"loop": "main", "request": edited})
    outcome = runner.run()
    assert outcome.input == edited
    assert outcome.result["system"] == edited["system"]


def test_a_hook_source_replaced_by_a_link_out_of_the_workspace_is_refused_next_run(
    workspace, runner, tmp_path
):
    assert runner.run().status == "ok"
    outside = tmp_path / "outside"
    outside.mkdir()
    source = workspace.root / "lib" / "policy.py"
    (outside / "policy.py").write_text(source.read_text())
    source.unlink()
    os.symlink(outside / "policy.py", source)
    outcome = runner.run()
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "source_outside_workspace"


def test_a_hook_folder_replaced_by_a_link_out_of_the_workspace_is_refused_next_run(
    workspace, runner, tmp_path
):
    assert runner.run().status == "ok"
    outside = tmp_path / "outside"
    os.rename(workspace.root / "lib", outside)
    os.symlink(outside, workspace.root / "lib")
    outcome = runner.run()
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "source_outside_workspace"


def test_a_same_size_edit_in_the_same_clock_tick_is_used_by_the_next_run(workspace, runner):
    sample = workspace.root / "samples" / "basic.json"
    first = {**REQUEST, "system": "first"}
    second = {**REQUEST, "system": "other"}
    # A coarse clock gives both writes one modification time; a time in the future is as
    # recent as a write can be, however long the first run takes.
    tick = os.stat(sample).st_mtime_ns + 10_000_000_000
    write_json(sample, {"loop": "main", "request": first})
    os.utime(sample, ns=(tick, tick))
    inode = os.stat(sample).st_ino
    assert runner.run().input == first
    with open(sample, "r+b") as same_file:
        text = same_file.read().replace(b'"first"', b'"other"')
        same_file.seek(0)
        same_file.write(text)
    os.utime(sample, ns=(tick, tick))
    assert os.stat(sample).st_ino == inode
    assert runner.run().input == second
