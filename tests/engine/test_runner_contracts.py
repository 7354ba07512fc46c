"""The runner applies each contract to what a real worker returned."""

from __future__ import annotations

import json
import shutil

import pytest

from studio.core.pre_llm.decision_record import request_hash
from tests.support.paths import BUNDLED_WORKSPACE as SAMPLES
from tests.support.runners import LiveRunner
from tests.support.workspaces import REQUEST, make_workspace, write_json


def hook_file(workspace, name: str, text: str) -> None:
    (workspace.root / "lib" / name).write_text(text)


class TestPreLlm:
    def test_the_transformed_request_and_its_decision_record(self, runner):
        outcome = runner.run()
        assert outcome.status == "ok"
        assert [t["name"] for t in outcome.result["tools"]] == ["fs_read"]
        decision = outcome.decision_record
        assert decision["changed"] == {
            "system": False,
            "messages": False,
            "tools": True,
            "options": False,
        }
        assert decision["tools"] == {"before": 2, "after": 1, "added": [], "removed": ["shell"]}
        assert decision["requestHashBefore"] != decision["requestHashAfter"]
        assert decision["sealedRequestId"].startswith("request_")
        assert "Read the log." not in json.dumps(decision)

    def test_print_output_is_captured_apart_from_the_result(self, workspace, runner):
        hook_file(
            workspace,
            "noisy.py",
            "import sys\n"
            "def main(p):\n"
            "    print('to stdout')\n"
            "    print('to stderr', file=sys.stderr)\n"
            "    return p['request']\n",
        )
        outcome = runner.run(hook="lib/noisy.py")
        assert outcome.status == "ok"
        assert (outcome.stdout, outcome.stderr) == ("to stdout\n", "to stderr\n")
        assert outcome.result == REQUEST

    def test_the_input_is_a_copy_and_the_loop_is_named(self, workspace, runner):
        hook_file(
            workspace,
            "loopy.py",
            "def main(p):\n"
            "    r = p['request']\n"
            "    r['messages'].clear()\n"
            "    one = [{'role': 'user', 'content': 'x'}]\n"
            "    return {**r, 'system': p['loop']['name'], 'messages': one}\n",
        )
        outcome = runner.run(hook="lib/loopy.py", loop="researcher")
        assert outcome.result["system"] == "researcher"
        assert outcome.input == REQUEST

    def test_an_untargeted_loop_is_not_applied(self, workspace):
        config = json.loads((workspace.root / "agent.json").read_text())
        config["pre_llm_hook"]["scope"] = "main"
        write_json(workspace.root / "agent.json", config)
        live = LiveRunner(workspace)
        try:
            outcome = live.run(loop="researcher")
        finally:
            live.close()
        assert outcome.status == "not_applied"
        assert outcome.result == REQUEST
        assert outcome.decision_record["applied"] is False

    def test_a_malformed_config_fails_even_a_loop_it_does_not_target(self, workspace):
        write_json(
            workspace.root / "agent.json",
            {"pre_llm_hook": {"source": "lib/p.py:transform", "scope": "main", "loops": ["x"]}},
        )
        live = LiveRunner(workspace)
        try:
            outcome = live.run(loop="researcher")
        finally:
            live.close()
        assert outcome.status == "turn_error"
        assert outcome.turn_error.kind == "config_invalid"
        assert outcome.turn_error.path == "/pre_llm_hook/loops"

    def test_an_agent_config_that_is_no_object_fails_a_run_with_an_unsaved_hook(self, workspace):
        # The unsaved hook config is laid over the file's object; a file holding an array is
        # the same config_invalid turn error as without one, not an exception.
        (workspace.root / "agent.json").write_text("[]")
        live = LiveRunner(workspace)
        try:
            outcome = live.run(hook_config={"source": "lib/p.py:transform"})
        finally:
            live.close()
        assert outcome.status == "turn_error"
        assert outcome.turn_error.kind == "config_invalid"
        assert "must be a JSON object" in outcome.turn_error.message

    def test_an_invalid_result_names_the_function_and_the_path(self, workspace, runner):
        hook_file(
            workspace,
            "misplaced.py",
            "def transform(p):\n"
            "    r = p['request']\n"
            "    m = r['messages']\n"
            "    block = {'type': 'tool_result', 'tool_use_id': 'c1', 'content': 'x'}\n"
            "    m[1]['content'].append(block)\n"
            "    return r\n",
        )
        error = runner.run(hook="lib/misplaced.py:transform").turn_error
        assert error.kind == "invalid_result"
        assert error.path == "/messages/1/content/1"
        assert error.message.startswith("`transform` returned request.messages[1].content[1]")
        assert "user message" in error.message

    def test_tools_presented_but_not_enabled_are_flagged(self, workspace, runner):
        hook_file(
            workspace,
            "grant.py",
            "def main(p):\n"
            "    r = p['request']\n"
            "    extra = {'name': 'rm_rf', 'description': '', 'input_schema': {}}\n"
            "    return {**r, 'tools': [*r['tools'], extra]}\n",
        )
        outcome = runner.run(hook="lib/grant.py")
        assert outcome.status == "ok"
        assert [w["path"] for w in outcome.warnings] == ["/tools/2"]
        assert "rm_rf" in outcome.warnings[0]["message"]

    def test_the_effective_timeout_is_the_shorter_one(self, tmp_path):
        workspace = make_workspace(tmp_path / "ws", timeout_ms=5000)
        config = json.loads((workspace.root / "agent.json").read_text())
        config["limits"]["execution_timeout_ms"] = 1000
        write_json(workspace.root / "agent.json", config)
        hook_file(workspace, "slow.py", "import time\ndef main(p):\n    time.sleep(3)\n")
        live = LiveRunner(workspace)
        try:
            error = live.run(hook="lib/slow.py").turn_error
        finally:
            live.close()
        assert error.kind == "timeout" and "1000 ms" in error.message


class TestNestedLambda:
    RAG = (
        "def enrich(args):\n"
        "    note = {'role': 'user', 'content': 'context: ' + args['loop']}\n"
        "    return {'messages': [*args['messages'], note]}\n"
        "def broken(args):\n"
        "    raise LookupError('index offline')\n"
    )
    HOOK = (
        "def transform(p):\n"
        "    r = p['request']\n"
        "    args = {'messages': r['messages'], 'loop': p['loop']['name']}\n"
        "    e = adf.sys_lambda(source='lib/rag.py:enrich', args=args)\n"
        "    return {**r, 'messages': e['messages']}\n"
        "def swallow(p):\n"
        "    try:\n"
        "        adf.sys_lambda(source='lib/rag.py:broken', args={})\n"
        "    except Exception:\n"
        "        pass\n"
        "    return p['request']\n"
        "async def async_transform(p):\n"
        "    r = p['request']\n"
        "    e = adf.sys_lambda(source='lib/rag.py:enrich', args={'messages': [], 'loop': 'x'})\n"
        "    return {**r, 'system': e['messages'][0]['content']}\n"
    )

    def live(self, tmp_path, allowed: bool) -> LiveRunner:
        workspace = make_workspace(tmp_path / "ws", sys_lambda=allowed)
        hook_file(workspace, "rag.py", self.RAG)
        hook_file(workspace, "hook.py", self.HOOK)
        return LiveRunner(workspace)

    def test_a_nested_lambda_returns_its_value(self, tmp_path):
        live = self.live(tmp_path, allowed=True)
        try:
            outcome = live.run(hook="lib/hook.py:transform")
            async_outcome = live.run(hook="lib/hook.py:async_transform")
        finally:
            live.close()
        assert outcome.status == "ok", outcome.turn_error
        assert outcome.result["messages"][-1] == {"role": "user", "content": "context: main"}
        assert async_outcome.result["system"] == "context: x"

    def test_without_the_gate_it_is_a_clear_error(self, tmp_path):
        live = self.live(tmp_path, allowed=False)
        try:
            error = live.run(hook="lib/hook.py:transform").turn_error
        finally:
            live.close()
        assert error.kind == "nested_lambda_failed"
        assert "code_execution.sys_lambda" in error.message

    def test_a_nested_failure_fails_the_call_closed_even_when_caught(self, tmp_path):
        live = self.live(tmp_path, allowed=True)
        try:
            error = live.run(hook="lib/hook.py:swallow").turn_error
        finally:
            live.close()
        assert error.kind == "nested_lambda_failed"
        assert "index offline" in error.message

    def test_a_nested_source_outside_the_workspace_is_refused(self, tmp_path):
        live = self.live(tmp_path, allowed=True)
        hook_file(
            live.runner.workspace,
            "escape.py",
            "def main(p):\n    return adf.sys_lambda(source='../x.py', args={})\n",
        )
        try:
            error = live.run(hook="lib/escape.py").turn_error
        finally:
            live.close()
        assert error.kind == "nested_lambda_failed"
        assert "leaves the workspace" in error.message


@pytest.fixture
def sample_workspace(tmp_path):
    target = tmp_path / "sample"
    shutil.copytree(SAMPLES, target, ignore=shutil.ignore_patterns(".hookstudio"))
    from studio.core.workspace.folder import Workspace

    live = LiveRunner(Workspace.open(target))
    yield live
    live.close()


class TestStepPreparation:
    def test_the_bundled_step_sample(self, sample_workspace):
        outcome = sample_workspace.run("step-escalated")
        assert outcome.status == "ok", outcome.turn_error
        record = outcome.decision_record
        assert set(record) == {
            "operation",
            "stepIndex",
            "reason",
            "amendment",
            "resources",
            "sealedRequestId",
        }
        assert record["amendment"]["addedContributors"] == 1
        assert record["amendment"]["modelChanged"] is True
        (read,) = record["resources"]
        assert read["identity"] == "working-state:support-control"
        assert read["revision"] == read["valueHash"]
        assert outcome.effective["model"] == "review-model"

    def test_an_uncaught_resource_error_keeps_its_reason(self, sample_workspace):
        root = sample_workspace.runner.workspace.root
        (root / "lib" / "reader.py").write_text(
            "def main(ctx):\n    return ctx.resources.read('blackboard:missing')\n"
        )
        error = sample_workspace.run("step-escalated", hook="lib/reader.py").turn_error
        assert error.kind == "resource_read"
        assert error.details["resource_reason"] == "undeclared"

    def test_an_unknown_active_tool_is_a_composition_error(self, sample_workspace):
        root = sample_workspace.runner.workspace.root
        picky = "def main(ctx):\n    return {'activeTools': ['nope']}\n"
        (root / "lib" / "picky.py").write_text(picky)
        error = sample_workspace.run("step-escalated", hook="lib/picky.py").turn_error
        assert error.kind == "invalid_composition"
        assert error.details["rule"] == "V9"

    def test_a_hook_that_returns_nothing_still_leaves_a_record(self, sample_workspace):
        root = sample_workspace.runner.workspace.root
        (root / "lib" / "quiet.py").write_text("def main(ctx):\n    return None\n")
        outcome = sample_workspace.run("step-escalated", hook="lib/quiet.py")
        assert outcome.status == "ok"
        assert outcome.decision_record["amendment"]["addedContributors"] == 0
        assert outcome.decision_record["amendment"]["modelChanged"] is False


class TestChains:
    def test_the_bundled_chain_sample_retries_once(self, sample_workspace):
        outcome = sample_workspace.run("chain-refund")
        assert outcome.status == "ok", outcome.turn_error
        stops = [(s.chain, s.position, s.stopped) for s in outcome.chain if s.stopped]
        assert stops == [("post", 0, "retry")]
        assert outcome.result["response"]["content"] == "Let me check the order first."
        assert outcome.decision_record["modelCalls"] == 2
        assert "returned" not in json.dumps(outcome.decision_record["hooks"])

    def test_a_failing_user_hook_names_its_position(self, sample_workspace):
        root = sample_workspace.runner.workspace.root
        misspelt = "def main(ctx):\n    return {'sytemPromptSuffix': 'x'}\n"
        (root / "lib" / "bad_chain.py").write_text(misspelt)
        outcome = sample_workspace.run("chain-refund", hook="lib/bad_chain.py")
        error = outcome.turn_error
        assert error.kind == "invalid_result"
        assert error.hook.position == 0 and error.hook.chain == "pre"


class TestRequestHashes:
    def test_the_hash_after_is_the_hash_of_the_returned_request(self, workspace, runner):
        hook_file(
            workspace,
            "unicode.py",
            "def main(p):\n"
            "    r = p['request']\n"
            "    system = 'Grüße 👋 \\u2028'\n"
            "    options = {'topP': 0.5}\n"
            "    return {'tools': r['tools'], 'system': system, 'options': options,"
            " 'messages': r['messages']}\n",
        )
        outcome = runner.run(hook="lib/unicode.py")
        assert outcome.status == "ok", outcome.turn_error
        assert outcome.decision_record["requestHashAfter"] == request_hash(outcome.result)

    def test_an_unchanged_request_has_the_same_hash_before_and_after(self, workspace, runner):
        hook_file(
            workspace, "same.py", "def main(p):\n    return dict(reversed(p['request'].items()))\n"
        )
        decision = runner.run(hook="lib/same.py").decision_record
        assert decision["requestHashBefore"] == decision["requestHashAfter"]
        assert not any(decision["changed"].values())


def test_a_rejected_request_is_kept_apart_and_never_as_the_result(workspace, runner):
    hook_file(workspace, "outer.py", "def main(p):\n    return p\n")
    outcome = runner.run(hook="lib/outer.py")
    assert outcome.turn_error.path == "/request"
    assert outcome.result is None
    assert outcome.rejected["request"] == REQUEST


def test_a_cooperative_runner_decides_exactly_as_a_plain_one(workspace):
    plain = LiveRunner(workspace)
    cooperative = LiveRunner(workspace)
    cooperative.runner.cooperative = True
    try:
        a, b = plain.run(), cooperative.run()
    finally:
        plain.close()
        cooperative.close()
    assert a.result == b.result
    assert {k: v for k, v in a.decision_record.items() if k != "sealedRequestId"} == {
        k: v for k, v in b.decision_record.items() if k != "sealedRequestId"
    }
