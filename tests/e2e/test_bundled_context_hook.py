"""The bundled retrieval hook (lib/context.ts) calls the agent's tools through `adf`, answered by
the sample's `adf.replies`: `hook-studio run --json` lists each call and what the hook built from
the replies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.workspaces import copy_bundled_workspace

HOOK = "lib/context.ts:withTicketContext"
SAMPLE = "support-ticket-context"


def run(workspace: Path, exit_code: int = 0) -> dict:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "studio",
            "run",
            str(workspace),
            "--sample",
            SAMPLE,
            "--hook",
            HOOK,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == exit_code, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_hook_builds_its_context_from_the_replies_and_the_calls_are_listed(
    tmp_path: Path,
) -> None:
    workspace = copy_bundled_workspace(tmp_path / "ws")
    sample = json.loads((workspace / "samples" / f"{SAMPLE}.json").read_text())
    replies = sample["adf"]["replies"]
    result = run(workspace)

    assert result["status"] == "ok"
    system = result["request"]["system"]
    assert system.startswith(sample["request"]["system"])
    assert f"Ticket: {replies['model_invoke']['result']}" in system
    for article in replies["kb_search"]["result"]["results"]:
        assert f"- {article['title']}: {article['snippet']}" in system

    calls = [(c["method"], c["gate"], c["error"] and c["error"]["code"]) for c in result["calls"]]
    assert calls == [
        ("kb_search", "allowed", None),
        ("model_invoke", "allowed", None),
        ("audit_note", "enabled_tools", "NOT_FOUND"),
    ]
    assert result["calls"][0]["args"] == replies["kb_search"]["args"]
    assert result["calls"][0]["reply"] == replies["kb_search"]["result"]
    assert "audit note skipped (NOT_FOUND)" in result["stderr"]


def test_a_question_the_sample_has_no_reply_for_fails_the_turn_naming_the_method(
    tmp_path: Path,
) -> None:
    workspace = copy_bundled_workspace(tmp_path / "ws")
    path = workspace / "samples" / f"{SAMPLE}.json"
    sample = json.loads(path.read_text())
    sample["request"]["messages"][0]["content"] = "Where is my parcel?"
    path.write_text(json.dumps(sample))
    result = run(workspace, exit_code=3)
    assert [c["error"]["code"] for c in result["calls"]] == ["NO_REPLY"]
    assert "kb_search" in result["turn_error"]["message"]
    assert result["turn_error"]["traceback"][-1]["file"] == "lib/context.ts"
