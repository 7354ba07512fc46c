"""The ``adf`` object of TypeScript and JavaScript pre-LLM hooks (spec/js-runtime.md §2): the
rules in their order, each gate both ways, replies from the sample, nested ``sys_lambda`` calls
to TypeScript and Python functions, and every call in the run's outcome. Real Node hosts and
Python workers, through the real runner."""

from __future__ import annotations

import itertools
import json
import subprocess
from typing import Any

import pytest

from studio.core.workspace.folder import Workspace
from studio.engine.node_binary import find_node
from studio.engine.node_runtime import HOST_SCRIPT
from tests.support.runners import LiveRunner
from tests.support.workspaces import REQUEST, SHORT_TIMEOUT_MS, write_json

# The hook runs the calls its file lists and returns, as the system prompt, what each gave:
# {"ok": value} or {"code", "message", "error": whether it is an Error}.
PROBE = """
export async function main(input) {
  const got = [];
  for (const [method, ...args] of CALLS) {
    try {
      got.push({ ok: await adf[method](...args) });
    } catch (e) {
      got.push({ code: e.code, message: e.message, error: e instanceof Error });
    }
  }
  return { ...input.request, system: JSON.stringify(got) };
}
"""


@pytest.fixture
def ws(workspace: Workspace) -> Workspace:
    write_json(workspace.root / "hookstudio.json", {"version": 1})
    return workspace


def configure(
    ws: Workspace,
    *,
    tools: Any = None,
    code_execution: dict[str, Any] | None = None,
    replies: dict[str, Any] | None = None,
    authorized: list[str] | None = None,
) -> None:
    agent = json.loads((ws.root / "agent.json").read_text())
    agent.pop("tools", None)
    if tools is not None:
        agent["tools"] = tools
    agent["code_execution"] = code_execution or {}
    write_json(ws.root / "agent.json", agent)
    sample: dict[str, Any] = {"loop": "main", "request": REQUEST}
    if replies is not None:
        sample["adf"] = {"replies": replies}
    write_json(ws.root / "samples" / "basic.json", sample)
    settings: dict[str, Any] = {"version": 1}
    if authorized is not None:
        settings["adf"] = {"authorized": authorized}
    write_json(ws.root / "hookstudio.json", settings)


def probe(ws: Workspace, calls: list[list[Any]], name: str = "probe.ts") -> str:
    (ws.root / "lib" / name).write_text(f"const CALLS = {json.dumps(calls)};\n{PROBE}")
    return f"lib/{name}"


def results(outcome: Any) -> list[dict[str, Any]]:
    assert outcome.status == "ok", outcome.turn_error
    return json.loads(outcome.result["system"])


def codes(outcome: Any) -> list[str | None]:
    return [r.get("code") for r in results(outcome)]


def tool(name: str, *, enabled: bool = True, restricted: bool = False) -> dict[str, Any]:
    return {"name": name, "enabled": enabled, "restricted": restricted}


# ---- replies from the sample ---------------------------------------------------------------


def test_a_single_reply_answers_every_call_and_string_results_are_parsed(ws, runner: LiveRunner):
    configure(
        ws,
        tools=[tool("fs_read")],
        replies={"fs_read": {"result": '{"text": "log line"}'}},
    )
    source = probe(ws, [["fs_read", {"path": "a"}], ["fs_read", {"path": "b"}]])
    outcome = runner.run(hook=source)
    assert results(outcome) == [{"ok": {"text": "log line"}}, {"ok": {"text": "log line"}}]
    assert [(c.method, c.gate, c.answered_by, c.reply) for c in outcome.calls] == [
        ("fs_read", "allowed", "sample /adf/replies/fs_read", {"text": "log line"}),
        ("fs_read", "allowed", "sample /adf/replies/fs_read", {"text": "log line"}),
    ]
    assert outcome.calls[0].args == {"path": "a"}
    assert outcome.calls[1].args == {"path": "b"}


def test_arguments_are_sent_as_the_reference_sends_them(ws, runner: LiveRunner):
    configure(ws, tools=[tool("fs_read")], replies={"fs_read": {"result": 1}})
    source = probe(ws, [["fs_read"], ["fs_read", "a", 2]])
    outcome = runner.run(hook=source)
    assert [c.args for c in outcome.calls] == [{}, ["a", 2]]


def test_a_list_of_replies_is_used_in_order_then_runs_out(ws, runner: LiveRunner):
    configure(
        ws,
        tools=[tool("fs_read")],
        replies={
            "fs_read": [
                {"result": "first"},
                {"error": {"code": "IO_ERROR", "message": "disk gone"}},
            ]
        },
    )
    source = probe(ws, [["fs_read", {}], ["fs_read", {}], ["fs_read", {}]])
    outcome = runner.run(hook=source)
    got = results(outcome)
    assert got[0] == {"ok": "first"}
    assert got[1] == {"code": "IO_ERROR", "message": "disk gone", "error": True}
    assert got[2]["code"] == "NO_REPLY"
    assert "every reply the sample lists for it is used" in got[2]["message"]
    assert [c.answered_by for c in outcome.calls] == [
        "sample /adf/replies/fs_read/0",
        "sample /adf/replies/fs_read/1",
        None,
    ]
    assert [c.error.code if c.error else None for c in outcome.calls] == [
        None,
        "IO_ERROR",
        "NO_REPLY",
    ]


def test_a_reply_with_args_answers_only_calls_with_those_arguments(ws, runner: LiveRunner):
    configure(
        ws,
        tools=[tool("fs_read")],
        replies={
            "fs_read": [
                {"args": {"path": "b"}, "result": "bee"},
                {"args": {"path": "a"}, "result": "ay"},
            ]
        },
    )
    source = probe(ws, [["fs_read", {"path": "a"}], ["fs_read", {"path": "b"}], ["fs_read", {}]])
    outcome = runner.run(hook=source)
    got = results(outcome)
    assert got[:2] == [{"ok": "ay"}, {"ok": "bee"}]
    assert got[2]["code"] == "NO_REPLY"


def test_a_call_without_a_reply_names_the_method_and_how_to_declare_one(ws, runner: LiveRunner):
    configure(ws, tools=[tool("web_search")])
    outcome = runner.run(hook=probe(ws, [["web_search", {"q": "x"}]]))
    (got,) = results(outcome)
    assert got["code"] == "NO_REPLY"
    assert got["message"].startswith("adf.web_search: the sample declares no reply for it")
    assert "studio only" in got["message"]
    assert '"adf": {"replies": {"web_search": {"result": ...}}}' in got["message"]


# ---- the enabled-tools check and the declared tools ----------------------------------------


def test_an_undeclared_or_disabled_tool_is_not_found(ws, runner: LiveRunner):
    configure(
        ws,
        tools=[tool("fs_read", enabled=False)],
        replies={"fs_read": {"result": 1}, "shell": {"result": 1}},
    )
    outcome = runner.run(hook=probe(ws, [["fs_read", {}], ["shell", {}]]))
    got = results(outcome)
    assert got == [
        {"code": "NOT_FOUND", "message": 'Tool "fs_read" is not available', "error": True},
        {"code": "NOT_FOUND", "message": 'Tool "shell" is not available', "error": True},
    ]
    assert [c.gate for c in outcome.calls] == ["enabled_tools", "enabled_tools"]


def test_a_restricted_tool_needs_authorized_code_both_ways(ws, runner: LiveRunner):
    replies = {"attest": {"result": "done"}}
    tools = [tool("attest", enabled=False, restricted=True)]
    configure(ws, tools=tools, replies=replies)
    source = probe(ws, [["attest", {}]])
    outcome = runner.run(hook=source)
    assert codes(outcome) == ["REQUIRES_AUTHORIZED_CODE"]
    assert outcome.calls[0].gate == "authorization"

    configure(ws, tools=tools, replies=replies, authorized=[source])
    outcome = runner.run(hook=source)
    assert results(outcome) == [{"ok": "done"}]
    assert outcome.calls[0].gate == "allowed"


def test_restricted_methods_need_authorized_code(ws, runner: LiveRunner):
    replies = {"attestation_issue": {"result": "ok"}, "fs_read": {"result": "ok"}}
    tools = [tool("attestation_issue"), tool("fs_read")]
    configure(ws, tools=tools, replies=replies)
    source = probe(ws, [["attestation_issue", {}], ["fs_read", {}]])
    assert codes(runner.run(hook=source)) == ["REQUIRES_AUTHORIZED_CODE", None]

    configure(ws, tools=tools, replies=replies, authorized=[source])
    assert codes(runner.run(hook=source)) == [None, None]

    configure(
        ws,
        tools=tools,
        replies=replies,
        code_execution={"restricted_methods": ["fs_read"]},
    )
    outcome = runner.run(hook=source)
    assert codes(outcome) == [None, "REQUIRES_AUTHORIZED_CODE"]
    assert "restricted_methods" in results(outcome)[1]["message"]


def test_conversation_tools_are_excluded_from_code(ws, runner: LiveRunner):
    configure(ws, tools=[tool(n) for n in ("say", "ask", "loop_compact", "loop_clear")])
    outcome = runner.run(
        hook=probe(ws, [[n, {}] for n in ("say", "ask", "loop_compact", "loop_clear")])
    )
    assert codes(outcome) == ["EXCLUDED_TOOL"] * 4
    assert {c.gate for c in outcome.calls} == {"excluded"}


# ---- code-execution methods ----------------------------------------------------------------


def test_model_invoke_is_on_by_default_and_returns_raw_text(ws, runner: LiveRunner):
    configure(ws, replies={"model_invoke": {"result": '{"looks": "like json"}'}})
    outcome = runner.run(
        hook=probe(ws, [["model_invoke", {"messages": [{"role": "user", "content": "hi"}]}]])
    )
    assert results(outcome) == [{"ok": '{"looks": "like json"}'}]


def test_model_invoke_switched_off(ws, runner: LiveRunner):
    configure(ws, code_execution={"model_invoke": False}, replies={"model_invoke": {"result": "x"}})
    outcome = runner.run(hook=probe(ws, [["model_invoke", {"messages": []}]]))
    assert codes(outcome) == ["DISABLED"]
    assert outcome.calls[0].gate == "code_execution.model_invoke"


def test_model_invoke_refuses_tool_blocks(ws, runner: LiveRunner):
    configure(ws, replies={"model_invoke": {"result": "x"}})
    messages = REQUEST["messages"]
    outcome = runner.run(hook=probe(ws, [["model_invoke", {"messages": messages}]]))
    (got,) = results(outcome)
    assert got["code"] == "INVALID_INPUT"
    assert "messages[1].content[0]" in got["message"]
    assert '"tool_use"' in got["message"]
    assert outcome.calls[0].gate == "input"


def test_network_is_off_unless_switched_on(ws, runner: LiveRunner):
    configure(ws, replies={"network": {"result": "r"}})
    source = probe(ws, [["network", {}]])
    outcome = runner.run(hook=source)
    assert codes(outcome) == ["NOT_FOUND"]
    configure(ws, code_execution={"network": True}, replies={"network": {"result": "r"}})
    assert results(runner.run(hook=source)) == [{"ok": "r"}]


def test_sys_lambda_switched_off(ws, runner: LiveRunner):
    configure(ws, code_execution={"sys_lambda": False})
    outcome = runner.run(hook=probe(ws, [["sys_lambda", {"source": "lib/x.ts", "args": {}}]]))
    assert codes(outcome) == ["DISABLED"]
    assert outcome.calls[0].gate == "code_execution.sys_lambda"


# ---- sys_lambda ----------------------------------------------------------------------------


def write(ws: Workspace, name: str, text: str) -> str:
    (ws.root / "lib" / name).write_text(text)
    return f"lib/{name}"


def test_sys_lambda_runs_a_typescript_function_with_its_own_calls(ws, runner: LiveRunner):
    configure(ws, tools=[tool("fs_read")], replies={"fs_read": [{"result": "a"}, {"result": "b"}]})
    write(
        ws,
        "helper.ts",
        "export async function enrich(args: {n: number}) {\n"
        "  const read = await adf.fs_read({inner: true});\n"
        "  return {doubled: args.n * 2, read};\n"
        "}\n",
    )
    source = probe(
        ws,
        [["fs_read", {}], ["sys_lambda", {"source": "lib/helper.ts:enrich", "args": {"n": 21}}]],
    )
    outcome = runner.run(hook=source)
    assert results(outcome) == [{"ok": "a"}, {"ok": {"doubled": 42, "read": "b"}}]
    assert [(c.method, c.depth, c.answered_by) for c in outcome.calls] == [
        ("fs_read", 0, "sample /adf/replies/fs_read/0"),
        ("sys_lambda", 0, "lib/helper.ts:enrich"),
        ("fs_read", 1, "sample /adf/replies/fs_read/1"),
    ]


def test_sys_lambda_runs_a_python_function_through_the_studio(ws, runner: LiveRunner):
    configure(ws)
    write(ws, "rag.py", "def enrich(args):\n    return {'topic': args['q'].upper()}\n")
    outcome = runner.run(
        hook=probe(ws, [["sys_lambda", {"source": "lib/rag.py:enrich", "args": {"q": "refund"}}]])
    )
    assert results(outcome) == [{"ok": {"topic": "REFUND"}}]
    assert outcome.calls[0].answered_by == "lib/rag.py:enrich"


def test_a_python_callees_own_sys_lambda_calls_are_listed_under_it(ws, runner: LiveRunner):
    configure(ws, code_execution={"sys_lambda": True})
    write(ws, "leaf.py", "def main(args):\n    return {'leaf': args['n'] + 1}\n")
    write(
        ws,
        "middle.py",
        "def main(args):\n    return adf.sys_lambda(source='lib/leaf.py', args={'n': args['n']})\n",
    )
    outcome = runner.run(
        hook=probe(ws, [["sys_lambda", {"source": "lib/middle.py", "args": {"n": 1}}]])
    )
    assert results(outcome) == [{"ok": {"leaf": 2}}]
    assert [(c.method, c.depth, c.answered_by) for c in outcome.calls] == [
        ("sys_lambda", 0, "lib/middle.py:main"),
        ("sys_lambda", 1, "lib/leaf.py:main"),
    ]
    assert outcome.calls[1].args == {"source": "lib/leaf.py", "args": {"n": 1}}
    assert outcome.calls[1].reply == {"leaf": 2}


def test_a_callee_that_printed_returns_text(ws, runner: LiveRunner):
    configure(ws)
    write(ws, "loud.py", "def main(args):\n    print('working')\n    return {'n': 1}\n")
    write(ws, "loud.ts", "export function main() { console.log('from ts'); return 'v'; }\n")
    outcome = runner.run(
        hook=probe(
            ws,
            [
                ["sys_lambda", {"source": "lib/loud.py", "args": {}}],
                ["sys_lambda", {"source": "lib/loud.ts", "args": {}}],
            ],
        )
    )
    assert results(outcome) == [
        {"ok": '{\n  "n": 1\n}\n\nOutput:\nworking'},
        {"ok": "v\n\nOutput:\nfrom ts"},
    ]
    assert [c.output for c in outcome.calls] == ["working\n", "from ts\n"]


def test_a_circular_sys_lambda_fails(ws, runner: LiveRunner):
    configure(ws)
    write(
        ws,
        "a.ts",
        "export async function main(input) {\n"
        "  const got = await adf.sys_lambda({source: 'lib/b.ts', args: {}});\n"
        "  return {...input.request, system: JSON.stringify(got)};\n"
        "}\n"
        "export async function again() { return 'never'; }\n",
    )
    write(
        ws,
        "b.ts",
        "export async function main() {\n"
        "  try { await adf.sys_lambda({source: 'lib/a.ts:main', args: {}}); }\n"
        "  catch (e) { return {code: e.code, message: e.message}; }\n"
        "}\n",
    )
    outcome = runner.run(hook="lib/a.ts")
    assert outcome.status == "ok", outcome.turn_error
    got = json.loads(outcome.result["system"])
    assert got == {
        "code": "CIRCULAR_CALL",
        "message": "sys_lambda: circular call lib/a.ts:main -> lib/b.ts:main -> lib/a.ts:main",
    }
    assert [(c.method, c.depth, c.gate) for c in outcome.calls] == [
        ("sys_lambda", 0, "allowed"),
        ("sys_lambda", 1, "circular"),
    ]


def test_a_failing_callee_is_fn_error(ws, runner: LiveRunner):
    configure(ws)
    write(ws, "bad.ts", "export function main() { throw new Error('no luck'); }\n")
    write(ws, "bad.py", "def main(args):\n    raise ValueError('nope')\n")
    outcome = runner.run(
        hook=probe(
            ws,
            [
                ["sys_lambda", {"source": "lib/bad.ts", "args": {}}],
                ["sys_lambda", {"source": "lib/bad.py", "args": {}}],
                ["sys_lambda", {"source": "lib/missing.ts", "args": {}}],
            ],
        )
    )
    got = results(outcome)
    assert codes(outcome) == ["FN_ERROR"] * 3
    assert "no luck" in got[0]["message"]
    assert "nope" in got[1]["message"]
    assert 'source file "lib/missing.ts" was not found' in got[2]["message"]


def test_an_unauthorized_caller_cannot_call_authorized_code(ws, runner: LiveRunner):
    write(ws, "vault.ts", "export function main() { return 'secret'; }\n")
    source = probe(ws, [["sys_lambda", {"source": "lib/vault.ts", "args": {}}]])
    configure(ws, authorized=["lib/vault.ts"])
    outcome = runner.run(hook=source)
    assert codes(outcome) == ["REQUIRES_AUTHORIZED_CALLER"]
    assert outcome.calls[0].gate == "authorization"

    configure(ws, authorized=["lib/vault.ts", source])
    assert results(runner.run(hook=source)) == [{"ok": "secret"}]


def test_a_callee_runs_with_its_own_authorization(ws, runner: LiveRunner):
    write(
        ws,
        "plain.ts",
        "export async function main() {\n"
        "  try { return await adf.attestation_issue({}); } catch (e) { return e.code; }\n"
        "}\n",
    )
    source = probe(ws, [["sys_lambda", {"source": "lib/plain.ts", "args": {}}]])
    replies = {"attestation_issue": {"result": "issued"}}
    configure(ws, tools=[tool("attestation_issue")], replies=replies, authorized=[source])
    outcome = runner.run(hook=source)
    assert results(outcome) == [{"ok": "REQUIRES_AUTHORIZED_CODE"}]


# ---- the outcome ---------------------------------------------------------------------------


def test_calls_made_before_the_hook_fails_are_reported(ws, runner: LiveRunner):
    configure(ws, tools=[tool("fs_read")], replies={"fs_read": {"result": "x"}})
    write(
        ws,
        "fails.ts",
        "export async function main() {\n  await adf.fs_read({});\n  await adf.shell({});\n}\n",
    )
    outcome = runner.run(hook="lib/fails.ts")
    assert outcome.status == "turn_error"
    assert "NOT_FOUND" not in outcome.turn_error.message
    assert 'Tool "shell" is not available' in outcome.turn_error.message
    # The Error was made where the hook called: the report points at that line.
    assert [(f.file, f.line) for f in outcome.turn_error.traceback] == [("lib/fails.ts", 3)]
    assert [(c.method, c.error.code if c.error else None) for c in outcome.calls] == [
        ("fs_read", None),
        ("shell", "NOT_FOUND"),
    ]


def test_a_malformed_tools_entry_is_a_config_error(ws, runner: LiveRunner):
    configure(ws, tools=[{"name": "fs_read", "enabled": "yes"}])
    outcome = runner.run(hook=probe(ws, []))
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "config_invalid"
    assert outcome.turn_error.path == "/tools/0/enabled"


# ---- the host's own check of declared tools ------------------------------------------------

# The worker's enabled-tools check comes first, so a hook never reaches these; the host still
# refuses on its own, as the reference's host does.
HOST_GATE = """
import { hostGate } from %s;
const adf = JSON.parse(process.argv[1]);
const out = [];
for (const method of JSON.parse(process.argv[2])) {
  try { hostGate(adf, method, {}); out.push([method, 'allowed']); }
  catch (e) { out.push([method, e.code, e.gate]); }
}
console.log(JSON.stringify(out));
"""


def host_gate(adf: dict[str, Any], methods: list[str]) -> list[list[str]]:
    module = json.dumps((HOST_SCRIPT.parent / "adf_calls.mjs").as_uri())
    done = subprocess.run(
        [
            find_node().path,
            "--input-type=module",
            "-e",
            HOST_GATE % module,
            "--",
            json.dumps(adf),
            json.dumps(methods),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_host_refuses_undeclared_disabled_and_restricted_tools_by_itself():
    adf = {
        "tools": {
            "off": {"enabled": False, "restricted": False},
            "vault": {"enabled": False, "restricted": True},
            "on": {"enabled": True, "restricted": False},
        },
        "authorized": False,
    }
    assert host_gate(adf, ["nowhere", "off", "vault", "on"]) == [
        ["nowhere", "NOT_FOUND", "declared_tools"],
        ["off", "DISABLED", "declared_tools"],
        ["vault", "REQUIRES_AUTHORIZED_CODE", "authorization"],
        ["on", "allowed"],
    ]
    assert host_gate({**adf, "authorized": True}, ["vault"]) == [["vault", "allowed"]]


def test_a_hook_calling_in_a_loop_keeps_a_bounded_log(ws, runner: LiveRunner):
    configure(ws, tools=[tool("fs_read")], replies={"fs_read": {"result": 1}})
    # Ten thousand round trips to the host: seconds on a busy machine, not the default second.
    agent = json.loads((ws.root / "agent.json").read_text())
    agent["pre_llm_hook"]["timeout_ms"] = 30_000
    write_json(ws.root / "agent.json", agent)
    write(
        ws,
        "loop.ts",
        "export async function main(input) {\n"
        "  let total = 0;\n"
        "  for (let i = 0; i < 10005; i++) total += await adf.fs_read({i});\n"
        "  return {...input.request, system: String(total)};\n"
        "}\n",
    )
    outcome = runner.run(hook="lib/loop.ts")
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["system"] == "10005"
    assert len(outcome.calls) == 10_000
    assert outcome.calls[-1].args == {"i": 9999}
    assert {
        "path": "",
        "message": "the hook made 10005 adf calls; the first 10000 are listed, "
        "the rest were answered but not kept",
    } in outcome.warnings


def test_nested_calls_started_together_run_one_after_another(ws, runner: LiveRunner):
    configure(ws)
    write(
        ws,
        "counter.ts",
        "export async function main(args) {\n"
        "  const start = Date.now();\n"
        "  await new Promise((r) => setTimeout(r, 20));\n"
        "  return {i: args.i, start, end: Date.now()};\n"
        "}\n",
    )
    write(
        ws,
        "fan.ts",
        "export async function main(input) {\n"
        "  const calls = [];\n"
        "  for (let i = 0; i < 5; i++) {\n"
        "    calls.push(adf.sys_lambda({source: 'lib/counter.ts', args: {i}}));\n"
        "  }\n"
        "  return {...input.request, system: JSON.stringify(await Promise.all(calls))};\n"
        "}\n",
    )
    outcome = runner.run(hook="lib/fan.ts")
    assert outcome.status == "ok", outcome.turn_error
    ran = json.loads(outcome.result["system"])
    assert [r["i"] for r in ran] == [0, 1, 2, 3, 4]
    # Each callee started after the one before it had ended.
    assert all(later["start"] >= earlier["end"] for earlier, later in itertools.pairwise(ran))


def deep_chain(ws: Workspace, length: int) -> None:
    """lib/deep.ts: f0 calls f1 calls f2 ... each a different function, so none is circular;
    lib/start.ts:main calls f0 and returns what came back as its system prompt."""
    functions = "".join(
        f"export async function f{i}() {{\n"
        f"  const next = {{source: 'lib/deep.ts:f{i + 1}', args: {{}}}};\n"
        "  try { return await adf.sys_lambda(next); }\n"
        f"  catch (e) {{ return {{code: e.code, at: {i}}}; }}\n"
        "}\n"
        for i in range(length)
    )
    write(ws, "deep.ts", functions)
    write(
        ws,
        "start.ts",
        "export async function main(input) {\n"
        "  const got = await adf.sys_lambda({source: 'lib/deep.ts:f0', args: {}});\n"
        "  return {...input.request, system: JSON.stringify(got)};\n"
        "}\n",
    )


def test_a_chain_of_nested_calls_stops_at_the_studios_depth_limit(ws, runner: LiveRunner):
    configure(ws)
    agent = json.loads((ws.root / "agent.json").read_text())
    agent["pre_llm_hook"]["timeout_ms"] = 30_000
    write_json(ws.root / "agent.json", agent)
    deep_chain(ws, 40)
    outcome = runner.run(hook="lib/start.ts")
    assert outcome.status == "ok", outcome.turn_error
    assert json.loads(outcome.result["system"]) == {"code": "DEPTH_LIMIT", "at": 31}
    assert max(c.depth for c in outcome.calls) == 32
    assert outcome.calls[-1].gate == "depth"


def test_a_hook_that_times_out_during_nested_calls_leaves_nothing_running(ws, runner: LiveRunner):
    configure(ws)
    # Nested calls keep asking the studio when the hook's 1000 ms run out and the runner closes.
    deep_chain(ws, 32)
    outcome = runner.run(hook_config={"source": "lib/start.ts", "timeout_ms": SHORT_TIMEOUT_MS})
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "timeout"
    assert outcome.calls[0].method == "sys_lambda"
    # The hook ended with its call still out: the call says so.
    assert outcome.calls[0].error is not None
    assert outcome.calls[0].error.code == "UNANSWERED"
    assert outcome.calls[0].duration_ms >= 900
    # The fixture checks that no process outlives the runner.
