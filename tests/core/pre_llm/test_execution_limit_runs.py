"""A run agrees with ``check-config`` on the execution limit (spec/adf.md §7): a bad or missing
limit fails a hooked call as a ``config_invalid`` turn error with the runtime's message, and
leaves a call the hook does not apply to alone. Neither starts a worker."""

from __future__ import annotations

import json

import pytest

from studio.core.pre_llm.config import check_agent_config
from tests.support.runners import LiveRunner
from tests.support.workspaces import make_workspace, write_json

MESSAGE = "limits.execution_timeout_ms must be a positive integer"


def with_limit(root, limits: object, scope: str = "main") -> dict:
    config = json.loads((root / "agent.json").read_text())
    config["pre_llm_hook"]["scope"] = scope
    if limits is None:
        del config["limits"]
    else:
        config["limits"] = limits
    write_json(root / "agent.json", config)
    return config


def run(workspace, **kwargs):
    live = LiveRunner(workspace)
    try:
        return live.run(**kwargs)
    finally:
        live.close()


@pytest.mark.parametrize(
    "limits", [None, {}, {"execution_timeout_ms": 0}, {"execution_timeout_ms": "60000"}]
)
def test_a_hooked_call_fails_with_the_runtime_message(tmp_path, limits):
    workspace = make_workspace(tmp_path / "ws")
    config = with_limit(workspace.root, limits)
    outcome = run(workspace, loop="main")
    assert outcome.status == "turn_error"
    error = outcome.turn_error
    assert error.kind == "config_invalid"
    assert error.path == "/limits/execution_timeout_ms"
    assert MESSAGE in error.message
    # The window's findings say the same: the hook is valid, its calls are bound to fail.
    check = check_agent_config(config)
    assert check.valid and check.applies_to("main")
    assert [(f.pointer, f.message) for f in check.runtime_errors] == [(error.path, MESSAGE)]


def test_a_call_the_hook_does_not_apply_to_is_not_failed(tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    with_limit(workspace.root, None)
    outcome = run(workspace, loop="researcher")
    assert outcome.status == "not_applied"


def test_a_hook_run_by_hand_is_a_hooked_call_too(tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    with_limit(workspace.root, {"execution_timeout_ms": 1})
    agent = workspace.root / "agent.json"
    # 1e400 is valid JSON text that no double holds: it reads as Infinity.
    agent.write_text(
        agent.read_text().replace('"execution_timeout_ms": 1', '"execution_timeout_ms": 1e400')
    )
    outcome = run(workspace, loop="researcher", hook="lib/policy.py:transform")
    assert outcome.turn_error.kind == "config_invalid"
    assert MESSAGE in outcome.turn_error.message
