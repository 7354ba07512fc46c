"""The bundled workspace's TypeScript hooks and their Python twins decide alike: `hook-studio run
--json` on each bundled sample, once with each twin, gives the same status, request, decision
record and turn error kind; what may differ is the language's own wording of an exception, the
hook's name, ids and timings."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import BUNDLED_WORKSPACE
from tests.support.workspaces import copy_bundled_workspace, write_json

# Every Python hook of the bundled workspace, with its TypeScript twin.
TWINS = {
    "lib/policy.py:transform": "lib/policy.ts:transform",
    "lib/prepare.py:prepare_step": "lib/prepare.ts:prepareStep",
    "lib/chain_hooks.py:route_small_talk": "lib/chain_hooks.ts:routeSmallTalk",
    "lib/chain_hooks.py:policy_suffix": "lib/chain_hooks.ts:policySuffix",
    "lib/chain_hooks.py:no_refund_promises": "lib/chain_hooks.ts:noRefundPromises",
    "lib/failing.py:typo_key": "lib/failing.ts:typoKey",
    "lib/failing.py:tool_result_from_assistant": "lib/failing.ts:toolResultFromAssistant",
    "lib/failing.py:returns_whole_payload": "lib/failing.ts:returnsWholePayload",
    "lib/failing.py:slow_lookup": "lib/failing.ts:slowLookup",
    "lib/failing.py:activate_unknown_tool": "lib/failing.ts:activateUnknownTool",
    "lib/failing.py:read_undeclared_resource": "lib/failing.ts:readUndeclaredResource",
    "lib/failing.py:misspelt_suffix": "lib/failing.ts:misspeltSuffix",
    "lib/invocation.py:prepare_invocation": "lib/invocation.ts:prepareInvocation",
    "lib/invocation.py:refund_step": "lib/invocation.ts:refundStep",
}
PYTHON_OF = {ts: py for py, ts in TWINS.items()}

# Each Python hook given with `--hook`, on its sample, and how the run ends (`ok`, or the kind of
# turn error the sample workspace's README lists). The chain hooks run as the chain of
# hookstudio.json (a post hook cannot be given with --hook), in test_the_chain_twins_run_alike.
RUNS = [
    ("support-ticket", "lib/policy.py:transform", "ok"),
    ("support-ticket", "lib/failing.py:typo_key", "exception"),
    ("support-ticket", "lib/failing.py:tool_result_from_assistant", "invalid_result"),
    ("support-ticket", "lib/failing.py:returns_whole_payload", "invalid_result"),
    ("support-ticket", "lib/failing.py:slow_lookup", "timeout"),
    ("step-escalated", "lib/prepare.py:prepare_step", "ok"),
    ("step-escalated", "lib/failing.py:activate_unknown_tool", "invalid_composition"),
    ("step-escalated", "lib/failing.py:read_undeclared_resource", "resource_read"),
    ("chain-refund", "lib/failing.py:misspelt_suffix", "invalid_result"),
    ("step-escalated", "lib/invocation.py:refund_step", "ok"),
    ("invocation-pipeline-review", "lib/invocation.py:prepare_invocation", "ok"),
    ("invocation-parallel-billing", "lib/invocation.py:prepare_invocation", "ok"),
    ("invocation-consensus-failing", "lib/invocation.py:prepare_invocation", "exception"),
    ("invocation-swarm-refund", "lib/invocation.py:prepare_invocation", "invalid_composition"),
]
CHAIN_HOOKS = [py for py in TWINS if py.startswith("lib/chain_hooks.py:")]
# Samples for a TypeScript hook with no twin: a Python hook has no adf tools to call
# (tests/e2e/test_bundled_context_hook.py runs it).
TYPESCRIPT_ONLY = {"support-ticket-context"}

# A hook that sleeps past its timeout fails the same way at any timeout; the shortest one allowed
# keeps the test from waiting the bundled 5 s twice.
SLOW = "lib/failing.py:slow_lookup"
SHORT_TIMEOUT_MS = 1000

VARYING = {"duration_ms", "durationMs", "sealedRequestId", "previousRequestId"}
DEFINITION = re.compile(r"^(?:export )?(?:async )?(?:def|function) (\w+)")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_bundled_workspace(tmp_path_factory.mktemp("twins") / "ws")


def configured(workspace: Path) -> set[str]:
    agent = json.loads((workspace / "agent.json").read_text())
    settings = json.loads((workspace / "hookstudio.json").read_text())
    return {
        agent["pre_llm_hook"]["source"],
        settings["step"]["source"],
        settings["invocation"]["source"],
    }


def run_both(*runs: tuple[Path, list[str]]) -> list[dict[str, Any]]:
    """`hook-studio run --json` once per run, all at once: each spends most of its time starting
    up and waiting for its worker, so the twins need not wait for each other."""
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "studio", "run", str(workspace), *args, "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for workspace, args in runs
    ]
    try:
        ended = [process.communicate(timeout=120) for process in started]
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait()
    for process, (stdout, stderr) in zip(started, ended, strict=True):
        assert process.returncode in (0, 3), stdout + stderr
    return [json.loads(stdout) for stdout, _ in ended]


def normalized(value: Any) -> Any:
    """The outcome without what is allowed to differ, TypeScript hook names read as their twins'."""
    if isinstance(value, dict):
        found = {k: normalized(v) for k, v in value.items() if k not in VARYING}
        named = f"{found.get('source')}:{found.get('function')}"
        if named in PYTHON_OF:
            found["source"], found["function"] = PYTHON_OF[named].split(":")
        return found
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if isinstance(value, str):
        return PYTHON_OF.get(value, value)
    return value


def assert_alike(ts: dict[str, Any], py: dict[str, Any]) -> None:
    assert ts["status"] == py["status"]
    for key in ("request", "inspection", "warnings", "calls", "stdout", "stderr"):
        assert normalized(ts[key]) == normalized(py[key]), key
    if py["turn_error"] is None:
        assert ts["turn_error"] is None, ts["turn_error"]
        return
    same = ("kind", "reason", "path", "hook", "loop")
    assert {k: normalized(ts["turn_error"][k]) for k in same} == {
        k: normalized(py["turn_error"][k]) for k in same
    }


def assert_frames_name_their_functions(workspace: Path, error: dict[str, Any]) -> None:
    """Each traceback frame is a real line of the hook's file, inside the function it names."""
    for frame in error["traceback"]:
        lines = (workspace / frame["file"]).read_text().splitlines()
        assert 1 <= frame["line"] <= len(lines), frame
        above = (DEFINITION.match(text) for text in reversed(lines[: frame["line"]]))
        assert next(m.group(1) for m in above if m) == frame["function"], frame
        if frame["column"] is not None:
            assert 1 <= frame["column"] <= len(lines[frame["line"] - 1]), frame


def test_every_python_hook_and_every_sample_is_covered() -> None:
    defined = {
        f"lib/{path.name}:{node.name}"
        for path in (BUNDLED_WORKSPACE / "lib").glob("*.py")
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.FunctionDef)
    }
    assert defined == set(TWINS)
    assert {hook for _, hook, _ in RUNS} | set(CHAIN_HOOKS) == set(TWINS)
    samples = {path.stem for path in (BUNDLED_WORKSPACE / "samples").glob("*.json")}
    assert {sample for sample, _, _ in RUNS} == samples - TYPESCRIPT_ONLY


@pytest.mark.parametrize(
    ("sample", "python", "ending"), RUNS, ids=[py.split(":")[1] for _, py, _ in RUNS]
)
def test_the_twins_run_alike(
    workspace: Path, tmp_path: Path, sample: str, python: str, ending: str
) -> None:
    if python == SLOW:
        workspace = copy_bundled_workspace(tmp_path / "short")
        config = json.loads((workspace / "agent.json").read_text())
        config["pre_llm_hook"]["timeout_ms"] = SHORT_TIMEOUT_MS
        write_json(workspace / "agent.json", config)
    # The twin the workspace is configured with runs as configured, as `make run` would run it.
    given = [] if TWINS[python] in configured(workspace) else ["--hook", TWINS[python]]
    ts, py = run_both(
        (workspace, ["--sample", sample, *given]),
        (workspace, ["--sample", sample, "--hook", python]),
    )
    assert (py["turn_error"] or {"kind": py["status"]})["kind"] == ending
    assert_alike(ts, py)
    if ts["turn_error"] is not None:
        assert_frames_name_their_functions(workspace, ts["turn_error"])
        assert_frames_name_their_functions(workspace, py["turn_error"])
        assert bool(ts["turn_error"]["traceback"]) == bool(py["turn_error"]["traceback"])


def test_the_chain_twins_run_alike(workspace: Path, tmp_path: Path) -> None:
    python = copy_bundled_workspace(tmp_path / "python")
    settings = (python / "hookstudio.json").read_text()
    for hook in CHAIN_HOOKS:
        assert f'"{TWINS[hook]}"' in settings
        settings = settings.replace(f'"{TWINS[hook]}"', f'"{hook}"')
    (python / "hookstudio.json").write_text(settings)
    ts, py = run_both(
        (workspace, ["--sample", "chain-refund"]), (python, ["--sample", "chain-refund"])
    )
    assert ts["status"] == "ok"
    assert_alike(ts, py)
    ran = {step["hook"] for step in py["inspection"]["hooks"] if not step["builtin"]}
    assert ran == set(CHAIN_HOOKS)
