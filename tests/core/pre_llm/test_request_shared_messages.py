"""Requests read from JSON that share one messages list (a hook changed only the rest): each
has the findings of spec/adf.md §3 it would have on its own, in the runtime's order."""

from __future__ import annotations

import json

from studio.core.pre_llm.request import validate_request

MESSAGES = json.loads(
    json.dumps(
        [
            {"role": "user", "content": "hi"},
            {"role": "robot", "content": "?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "c1", "name": "x", "input": {}}],
            },
        ]
    )
)


def test_each_request_sharing_the_messages_has_its_own_findings_in_order():
    first = {"system": "s", "messages": MESSAGES, "tools": [], "options": {}}
    second = {"system": 5, "messages": MESSAGES, "tools": "none", "options": {}}
    for request in (first, second, first):
        found = validate_request(request, shares_with=first)
        assert found == validate_request(json.loads(json.dumps(request)))
    rules = [f.rule for f in validate_request(second, shares_with=first)]
    # Rule 2 (system), rule 3 (the role), rule 5 (the unanswered tool_use), rule 6 (tools).
    assert rules == ["adf.request.2", "adf.request.3", "adf.request.5", "adf.request.6"]
    assert [f.pointer for f in validate_request(first, shares_with=second)] == [
        "/messages/1/role",
        "/messages/2/content/0",
    ]
