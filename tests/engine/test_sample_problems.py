"""A sample the hook cannot be run on ends the run as the sample's problem: the sample file and
the JSON path are named, no hook starts, and the report never blames the hook."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from studio.core.run_report import describe_outcome
from studio.core.sample_findings import is_sample_problem
from tests.support.workspaces import copy_bundled_workspace


def write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value) if not isinstance(value, str) else value)


def marking_hook(workspace_root: Path) -> Path:
    marker = workspace_root / "hook-ran"
    write(
        workspace_root / "lib" / "marks.py",
        f"def main(p):\n    open({str(marker)!r}, 'w').close()\n    return p['request']\n",
    )
    return marker


ASSISTANT_TOOL_RESULT = {
    "request": {
        "system": "s",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}],
            },
        ],
        "tools": [],
    }
}


def test_an_invalid_sample_is_a_sample_problem_and_no_hook_starts(workspace, runner):
    marker = marking_hook(workspace.root)
    write(workspace.root / "samples" / "broken.json", ASSISTANT_TOOL_RESULT)
    outcome = runner.run("broken", hook="lib/marks.py")

    error = outcome.turn_error
    assert is_sample_problem(error)
    assert error.label == "Sample problem"
    assert error.path == "/request/messages/1/content/0"
    assert error.message.startswith("samples/broken.json /request/messages/1/content/0: ")
    assert "a tool_result must be in a user message" in error.message
    assert error.hook is None and outcome.hook is None
    assert not marker.exists()

    first = describe_outcome(outcome).splitlines()[0]
    assert first.startswith("Sample problem (the hook was not run): samples/broken.json ")
    assert "Turn error" not in describe_outcome(outcome)


def test_a_hook_failure_is_still_a_turn_error(workspace, runner):
    write(workspace.root / "lib" / "raises.py", "def main(p):\n    raise ValueError('no')\n")
    outcome = runner.run(hook="lib/raises.py")
    assert outcome.turn_error.label == "Turn error"
    assert not is_sample_problem(outcome.turn_error)
    assert describe_outcome(outcome).startswith("Turn error (exception, reason callback)")


def test_a_chain_sample_short_of_responses_is_named_though_its_hooks_ran(tmp_path):
    root = copy_bundled_workspace(tmp_path / "ws")
    sample = json.loads((root / "samples" / "chain-refund.json").read_text())
    sample["responses"] = []
    write(root / "samples" / "no-replies.json", sample)
    done = subprocess.run(
        [sys.executable, "-m", "studio", "run", str(root), "--sample", "no-replies", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    error = json.loads(done.stdout)["turn_error"]
    assert (error["label"], error["kind"], error["path"]) == (
        "Sample problem",
        "sample_invalid",
        "/responses",
    )
    assert error["message"].startswith("samples/no-replies.json /responses: ")


def test_the_command_line_says_what_the_window_says(tmp_path):
    root = copy_bundled_workspace(tmp_path / "ws")
    marker = marking_hook(root)
    write(root / "samples" / "broken.json", ASSISTANT_TOOL_RESULT)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "studio",
            "run",
            str(root),
            "--sample",
            "broken",
            "--hook",
            "lib/marks.py",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(
        "Sample problem (the hook was not run): samples/broken.json /request/messages/1/content/0: "
    )
    assert lines[1] == "  at /request/messages/1/content/0"
    assert not marker.exists()
