"""A pre-LLM hook that returns its request unchanged: the decision record and the checks say
what they say of any returned request, whether or not the studio recognises the unchanged text.

The request hash is SHA-256 of the request's compact JSON with sorted keys (decision record,
``requestHashBefore`` / ``requestHashAfter``); JSON tells ``1`` from ``1.0`` and ``true``.
"""

from __future__ import annotations

import copy

from tests.support.request_hashes import sorted_json_hash
from tests.support.workspaces import REQUEST, write_json

ECHO = "def main(p):\n    return p['request']\n"


def hook(workspace, name: str, text: str) -> str:
    (workspace.root / "lib" / name).write_text(text)
    return f"lib/{name}"


def sample(workspace, name: str, request: object) -> str:
    write_json(workspace.root / "samples" / f"{name}.json", {"loop": "main", "request": request})
    return name


def test_an_echoed_request_keeps_its_hash_and_changes_nothing(workspace, runner):
    source = hook(workspace, "echo.py", ECHO)
    for _ in range(2):  # the second run meets the request already encoded and hashed
        outcome = runner.run(hook=source)
        assert outcome.status == "ok", outcome.turn_error
        assert outcome.result == REQUEST
        decision = outcome.decision_record
        assert decision["requestHashBefore"] == sorted_json_hash(REQUEST)
        assert decision["requestHashAfter"] == sorted_json_hash(REQUEST)
        assert decision["changed"] == dict.fromkeys(
            ("system", "messages", "tools", "options"), False
        )
        assert decision["tools"] == {"before": 2, "after": 2, "added": [], "removed": []}
        assert decision["messages"] == {"before": 3, "after": 3}
        assert decision["optionsChanged"] == []
        assert decision["sealedRequestId"].startswith("request_")
        assert outcome.warnings == []


def test_numbers_equal_in_python_but_not_in_json_change_the_hash(workspace, runner):
    request = copy.deepcopy(REQUEST)
    request["options"] = {"maxTokens": 100, "temperature": 0.0}
    name = sample(workspace, "numbers", request)
    source = hook(
        workspace,
        "floats.py",
        "def main(p):\n"
        "    r = p['request']\n"
        "    r['options'] = {'maxTokens': 100.0, 'temperature': -0.0}\n"
        "    return r\n",
    )
    outcome = runner.run(name, hook=source)
    assert outcome.status == "ok", outcome.turn_error
    returned = {**request, "options": {"maxTokens": 100.0, "temperature": -0.0}}
    assert returned == request
    decision = outcome.decision_record
    assert decision["requestHashBefore"] == sorted_json_hash(request)
    assert decision["requestHashAfter"] == sorted_json_hash(returned)
    assert decision["requestHashAfter"] != decision["requestHashBefore"]


def test_a_request_with_its_keys_in_another_order_has_the_same_hash(workspace, runner):
    source = hook(
        workspace, "reorder.py", "def main(p):\n    return dict(reversed(p['request'].items()))\n"
    )
    outcome = runner.run(hook=source)
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.decision_record["requestHashAfter"] == sorted_json_hash(REQUEST)


def test_a_request_of_megabytes_comes_back_whole_echoed_or_edited(workspace, runner):
    # Larger than the pipes between the studio and the worker, in both directions.
    request = copy.deepcopy(REQUEST)
    request["messages"] = [
        {"role": "user", "content": f"question {i} " + "lorem ipsum " * 100} for i in range(3000)
    ]
    name = sample(workspace, "large", request)
    edited = {**request, "system": request["system"] + " Be brief."}
    echo = hook(workspace, "echo.py", ECHO)
    edit = hook(
        workspace,
        "edit.py",
        "def main(p):\n    r = p['request']\n    r['system'] += ' Be brief.'\n    return r\n",
    )
    for source, expected in ((echo, request), (edit, edited)):
        outcome = runner.run(name, hook=source)
        assert outcome.status == "ok", outcome.turn_error
        assert outcome.result == expected
        assert outcome.decision_record["requestHashAfter"] == sorted_json_hash(expected)
        assert outcome.decision_record["changed"]["system"] is (expected is edited)


def test_a_sample_file_edited_between_echoed_runs_is_sent_and_hashed_anew(workspace, runner):
    request = copy.deepcopy(REQUEST)
    request["messages"] = [
        {"role": "user", "content": f"question {i} " + "lorem ipsum " * 100} for i in range(300)
    ]
    name = sample(workspace, "large", request)
    echo = hook(workspace, "echo.py", ECHO)
    assert runner.run(name, hook=echo).status == "ok"
    edited = {**request, "system": "Another prompt.", "messages": request["messages"][1:]}
    sample(workspace, "large", edited)
    outcome = runner.run(name, hook=echo)
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.input == edited
    assert outcome.result == edited
    decision = outcome.decision_record
    assert decision["requestHashBefore"] == sorted_json_hash(edited)
    assert decision["requestHashAfter"] == sorted_json_hash(edited)
    assert decision["changed"] == dict.fromkeys(("system", "messages", "tools", "options"), False)
