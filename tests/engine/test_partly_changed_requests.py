"""A large pre-LLM request that a hook changes in part: the run's result, checks and decision
record are those of the request the hook returned, as for any returned request (the studio
shares the members that came back as they went instead of reading them again).

The request hash is SHA-256 of the request's compact JSON with sorted keys (decision record,
``requestHashAfter``); JSON tells ``1`` from ``1.0``.
"""

from __future__ import annotations

import asyncio
import copy

import pytest

from studio.engine.runner import Runner
from tests.support.request_hashes import assert_only_the_system_changed, sorted_json_hash
from tests.support.workspaces import REQUEST, write_json

ROUNDS = 400  # about 150 KB: large enough to be given back in shared parts


def large_request() -> dict:
    messages = []
    for i in range(ROUNDS):
        messages += [
            {"role": "user", "content": f"question {i}: é 👋 " + "x" * 100},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "looking"},
                    {"type": "tool_use", "id": f"c{i}", "name": "fs_read", "input": {"n": 1}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"c{i}", "content": "ok"}],
            },
        ]
    return {**copy.deepcopy(REQUEST), "messages": messages, "options": {"temperature": 0.5}}


def hook(workspace, name: str, body: str) -> str:
    text = "def main(p):\n    r = p['request']\n" + body + "    return r\n"
    (workspace.root / "lib" / name).write_text(text)
    return f"lib/{name}"


@pytest.fixture
def big(workspace) -> tuple[str, dict]:
    request = large_request()
    write_json(workspace.root / "samples" / "big.json", {"loop": "main", "request": request})
    return "big", request


def test_a_changed_system_prompt_comes_back_with_the_rest_as_sent(workspace, runner, big):
    name, request = big
    source = hook(workspace, "brief.py", "    r['system'] += ' Be brief.'\n")
    expected = {**request, "system": request["system"] + " Be brief."}
    for _ in range(2):  # the second run meets the request's parts already read and checked
        outcome = runner.run(name, hook=source)
        assert_only_the_system_changed(outcome, request, expected)
        assert outcome.decision_record["messages"] == {"before": 3 * ROUNDS, "after": 3 * ROUNDS}
        # Held once in memory, not twice.
        assert outcome.result["messages"] is outcome.input["messages"]


@pytest.mark.parametrize(
    ("body", "change"),
    [
        # 1.0 equals 1 in Python, not in JSON: the messages are not the ones sent.
        ("    r['messages'][-2]['content'][1]['input'] = {'n': 1.0}\n", ("n", 1.0)),
        ("    r['messages'][-2]['content'][1]['input'] = {'n': 2}\n", ("n", 2)),
    ],
)
def test_messages_changed_anywhere_are_read_as_returned(workspace, runner, big, body, change):
    name, request = big
    source = hook(workspace, "deep.py", body)
    expected = copy.deepcopy(request)
    expected["messages"][-2]["content"][1]["input"] = dict([change])
    outcome = runner.run(name, hook=source)
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result == expected
    assert type(outcome.result["messages"][-2]["content"][1]["input"]["n"]) is type(change[1])
    decision = outcome.decision_record
    assert decision["requestHashAfter"] == sorted_json_hash(expected)
    assert decision["requestHashAfter"] != decision["requestHashBefore"]


def test_other_keys_in_another_order_keep_the_hash_of_their_content(workspace, runner, big):
    name, request = big
    source = hook(
        workspace,
        "order.py",
        "    r = {'tools': r['tools'], 'options': {'temperature': 0.25},"
        " 'messages': r['messages'], 'system': r['system']}\n",
    )
    expected = {**request, "options": {"temperature": 0.25}}
    outcome = runner.run(name, hook=source)
    assert outcome.status == "ok", outcome.turn_error
    assert list(outcome.result) == ["tools", "options", "messages", "system"]
    assert outcome.result == expected
    assert outcome.decision_record["requestHashAfter"] == sorted_json_hash(expected)
    assert outcome.decision_record["optionsChanged"] == ["temperature"]


@pytest.mark.parametrize(
    ("body", "paths"),
    [
        # Rule 2, with the messages sent back as they came.
        ("    r['system'] = 5\n", ["/system"]),
        # Rules 2 and 5: the last tool_use is left unanswered; the runtime stops at the system.
        (
            "    r['system'] = 5\n    r['messages'] = r['messages'][:-1]\n",
            ["/system", f"/messages/{3 * ROUNDS - 2}/content/1"],
        ),
    ],
)
def test_a_returned_request_that_breaks_a_rule_fails_as_the_runtime_would(
    workspace, runner, big, body, paths
):
    name, _ = big
    source = hook(workspace, "number.py", body)
    for _ in range(2):  # the second run meets the messages already checked
        outcome = runner.run(name, hook=source)
        assert outcome.status == "turn_error"
        error = outcome.turn_error
        assert error.kind == "invalid_result"
        assert error.path == "/system"
        assert error.details["count"] == len(paths)
        assert [f["path"] for f in error.details["findings"]] == paths
        assert [f["rule"] for f in error.details["findings"]] == [
            "adf.request.2",
            "adf.request.5",
        ][: len(paths)]


def test_the_window_s_runner_reading_in_pieces_gives_the_same_run(workspace, big):
    name, request = big
    source = hook(workspace, "brief.py", "    r['system'] += ' Be brief.'\n")
    expected = {**request, "system": request["system"] + " Be brief."}

    async def twice() -> list:
        runner = Runner(workspace, cooperative=True)
        try:
            return [await runner.run(name, hook=source) for _ in range(2)]
        finally:
            await runner.close()

    for outcome in asyncio.run(twice()):
        assert outcome.status == "ok", outcome.turn_error
        assert outcome.result == expected
        assert outcome.decision_record["requestHashAfter"] == sorted_json_hash(expected)
        assert outcome.result["messages"] is outcome.input["messages"]


def test_a_sample_file_edited_between_runs_is_read_anew(workspace, runner, big):
    name, request = big
    source = hook(workspace, "brief.py", "    r['system'] += ' Be brief.'\n")
    first = runner.run(name, hook=source)
    assert first.status == "ok", first.turn_error
    edited = {**request, "messages": request["messages"][:-3]}
    edited["messages"][0] = {"role": "user", "content": "another question"}
    write_json(workspace.root / "samples" / "big.json", {"loop": "main", "request": edited})
    second = runner.run(name, hook=source)
    assert second.status == "ok", second.turn_error
    expected = {**edited, "system": edited["system"] + " Be brief."}
    assert second.input == edited
    assert second.result == expected
    assert second.result["messages"] is second.input["messages"]
    decision = second.decision_record
    assert decision["requestHashBefore"] == sorted_json_hash(edited)
    assert decision["requestHashAfter"] == sorted_json_hash(expected)
    assert decision["messages"] == {"before": 3 * ROUNDS - 3, "after": 3 * ROUNDS - 3}
