"""A TypeScript hook's result on a large request, read by a runner that shares its process with
a window (read in pieces) and by one that does not: the same result, checks and request hashes
(SHA-256 of the compact JSON with sorted keys), for a small request and a large one."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator

import pytest

from studio.core.run_outcome import RunOutcome
from studio.core.workspace.folder import Workspace
from studio.engine.returned_json import IN_PIECES_FROM
from studio.engine.runner import Runner
from tests.support.request_hashes import assert_only_the_system_changed, sorted_json_hash
from tests.support.workspaces import REQUEST, write_json

HOOKS = """
type Payload = { request: Record<string, any>; loop: { name: string } };
export function brief({ request }: Payload) {
  return { ...request, system: `${request.system} Be brief.` };
}
export function same({ request }: Payload) {
  return request;
}
export function notJson({ request }: Payload) {
  return '{"messages": [' + 'x'.repeat(300000) + ']}';
}
"""


def request_of(rounds: int) -> dict:
    messages = []
    for i in range(rounds):
        messages += [
            {"role": "user", "content": f"question {i}: é 👋 " + "x" * 100},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "looking"},
                    {"type": "tool_use", "id": f"c{i}", "name": "fs_read", "input": {"n": i}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"c{i}", "content": "ok"}],
            },
        ]
    return {**copy.deepcopy(REQUEST), "messages": messages, "options": {"temperature": 0.5}}


@pytest.fixture(params=[True, False], ids=["in-pieces", "whole"])
def run(request: pytest.FixtureRequest, workspace: Workspace) -> Iterator:
    (workspace.root / "lib" / "hooks.ts").write_text(HOOKS)
    loop = asyncio.new_event_loop()
    runner = Runner(workspace, cooperative=request.param)

    def run_on(value: dict, function: str) -> RunOutcome:
        write_json(workspace.root / "samples" / "big.json", {"loop": "main", "request": value})
        return loop.run_until_complete(runner.run("big", hook=f"lib/hooks.ts:{function}"))

    yield run_on
    loop.run_until_complete(runner.close())
    loop.close()


@pytest.mark.parametrize("rounds", [3, 1500], ids=["small", "large"])
def test_a_changed_system_prompt_reads_and_hashes_as_returned(run, rounds):
    request = request_of(rounds)
    assert (len(json.dumps(request, indent=2)) >= IN_PIECES_FROM) == (rounds > 3)
    expected = {**request, "system": request["system"] + " Be brief."}
    assert_only_the_system_changed(run(request, "brief"), request, expected)


@pytest.mark.parametrize("rounds", [3, 1500], ids=["small", "large"])
def test_a_request_sent_back_whole_keeps_its_hash(run, rounds):
    request = request_of(rounds)
    outcome = run(request, "same")
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result == request
    decision = outcome.decision_record
    assert decision["requestHashAfter"] == decision["requestHashBefore"]
    assert decision["requestHashAfter"] == sorted_json_hash(request)


def test_large_text_that_is_not_json_is_refused_as_json_refuses_it(run):
    outcome = run(request_of(3), "notJson")
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "invalid_result"
    try:
        json.loads('{"messages": [' + "x" * 300000 + "]}")
    except ValueError as exc:
        reason = str(exc)
    assert outcome.turn_error.message.endswith(f"returned text that is not JSON: {reason}")
