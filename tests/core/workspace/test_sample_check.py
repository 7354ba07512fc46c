"""A sample's text checked as the runner would judge it, every problem placed in the text, and
the outline of a sample for the structured view: headless, through the contract registry."""

from __future__ import annotations

import json
from typing import Any

import pytest

from studio.core.json.outline import Entry
from studio.core.registry import CONTRACTS, contract_names_phrase
from studio.core.workspace.sample_check import (
    MAX_PROBLEMS,
    check_sample_text,
    contract_findings,
    locate_pointer,
    sample_outline,
)
from tests.support.paths import BUNDLED_WORKSPACE


def bundled(name: str) -> dict[str, Any]:
    return json.loads((BUNDLED_WORKSPACE / "samples" / f"{name}.json").read_text())


def rows(entries: list[Entry]) -> dict[str, str]:
    return {entry.label: entry.detail for entry in entries}


def opened(entries: list[Entry], label: str) -> list[Entry]:
    entry = next(e for e in entries if e.label == label)
    assert entry.children is not None, f"{label} does not open"
    return entry.children()


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        ('{"contract": "step", "baseline": {}}', "/step", "required"),
        ('{"contract": "chain", "context": {}, "responses": []}', "/context/messages", ""),
        ('{"contract": "other"}', "/contract", "must be"),
        ("[1, 2]", "", "JSON object"),
        ('{"request": {}, "extra": 1}', "/extra", "ignored"),
    ],
)
def test_each_contract_is_checked_by_its_own_rules(text: str, path: str, words: str):
    check = check_sample_text(text)
    assert check.valid_json
    found = {p.pointer: p for p in check.problems}
    assert path in found
    assert words in found[path].message


@pytest.mark.parametrize("contract", list(CONTRACTS.values()), ids=lambda c: c.name)
def test_the_findings_are_the_contracts_own(contract: Any):
    document = {"contract": contract.name, "unknown": 1}
    name, findings = contract_findings(document)
    assert name == contract.name
    assert findings == contract.sample_findings(document)
    template = contract.sample_template()
    assert contract_findings(template) == (contract.name, [])


def test_an_unknown_contract_is_named_with_the_registered_ones():
    _, findings = contract_findings({"contract": "other"})
    assert [f.message for f in findings] == [
        f'contract must be {contract_names_phrase()}, got "other"'
    ]
    _, findings = contract_findings({"contract": ["pre_llm"]})
    assert findings[0].message.endswith("got list")
    assert contract_findings({"request": {}})[0] == "pre_llm"


def test_a_syntax_error_is_placed_and_a_missing_comma_named():
    text = '{\n  "loop": "main"\n  "request": {}\n}'
    check = check_sample_text(text)
    assert not check.valid_json and check.document is None
    (problem,) = check.problems
    assert (problem.line, problem.column, problem.pointer) == (3, 3, None)
    assert "missing at the end of line 2" in problem.message


def test_findings_are_placed_in_the_text_and_the_document_kept_on_request():
    text = json.dumps(bundled("support-ticket"), indent=2).replace('"user"', '"robot"', 1)
    check = check_sample_text(text)
    assert check.contract == "pre_llm" and check.errors >= 1
    problem = next(p for p in check.problems if p.pointer == "/request/messages/0/role")
    line = text.split("\n")[problem.line - 1]
    assert line[problem.column - 1 :].startswith('"robot"')
    assert check.document is not None
    assert check_sample_text(text, keep_document=False).document is None


def test_at_most_max_problems_are_placed_but_all_are_counted():
    messages = [{"role": "robot", "content": "x"}] * (MAX_PROBLEMS + 20)
    check = check_sample_text(json.dumps({"request": {"system": "", "messages": messages}}))
    assert len(check.problems) == MAX_PROBLEMS
    assert check.total > MAX_PROBLEMS


def test_a_pointer_is_located_or_the_nearest_value_given():
    text = '{\n  "a": {"b": [1, 22]}\n}'
    assert locate_pointer(text, "/a/b/1") == (2, 18, 2, 20, True)
    *_, exact = locate_pointer(text, "/a/missing")
    assert not exact


# ---- outlines ----------------------------------------------------------------------------------


def test_a_pre_llm_sample_is_outlined_as_its_request():
    top = sample_outline("pre_llm", bundled("support-ticket"))
    shown = rows(top)
    assert shown["System"] == '"You are a support agent."'
    assert shown["Messages"] == "3 messages"
    assert shown["Tools"] == "3 tools"
    assert "maxTokens 1024" in shown["Options"]
    messages = opened(top, "Messages")
    assert [m.label for m in messages] == ["0  user", "1  assistant", "2  user"]
    blocks = rows(opened(messages, "1  assistant"))
    assert blocks["text"] == '"Let me read the order log."'
    assert blocks["tool_use"].startswith("fs_read {path}")
    tools = opened(top, "Tools")
    assert rows(tools)["shell"] == '"Run a shell command"'
    assert next(t for t in tools if t.label == "shell").pointer == "/request/tools/2"


def test_step_and_chain_samples_are_outlined_by_their_contracts():
    step = sample_outline("step", bundled("step-escalated"))
    assert rows(step)["Baseline"].startswith("4 contributors")
    assert rows(step)["Step"] == "index 1 · tool-result · 3 messages"
    contributors = opened(opened(step, "Baseline"), "Contributors")
    assert rows(contributors)["safety-policy"] == "work-policy"

    chain = sample_outline("chain", bundled("chain-refund"))
    assert rows(chain)["Context"] == "model claude-sonnet · 1 message"
    assert rows(chain)["Responses"] == "2 scripted responses"
    assert "calls lookupOrder" in rows(opened(chain, "Responses"))["1  assistant"]


def test_a_sample_of_no_known_contract_is_a_json_tree():
    assert rows(sample_outline(None, {"a": 1, "b": [1, 2]})) == {"a": "1", "b": "[2 items]"}
    assert rows(sample_outline("other", {"a": 1})) == {"a": "1"}
    assert sample_outline("pre_llm", [1])[0].label == "(not an object)"
