"""The plain JSON vectors of ``tests/vectors/adf/`` (one file per rule of spec/adf.md §7), each
case written from the rules, checked against the studio's answers.

A case is ``{"name", "config" or "request", "expect"}``, plus ``"bound_to": "adf"`` for a config
read from an ``.adf`` file (a folder workspace otherwise). ``expect`` holds ``valid`` and any of:
``first_error`` (``{path, message}``), ``runtime_errors`` (a list of them), ``applies`` (loop name
to whether the hook runs there), ``warnings`` (their paths), ``effective_timeout_ms`` (a number,
or null when the limit leaves none) and ``source`` (the ``{path, function}`` it names). A config is
checked as ``check-config`` answers it, a request as ``check-request`` does.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from studio.core.findings import errors
from studio.core.json.files import read_json_file
from studio.core.pre_llm.checks import CHECKS
from studio.core.pre_llm.config import check_agent_config
from studio.core.pre_llm.request import validate_request
from studio.core.source_ref import parse_source_ref

VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "adf"
KNOWN = {
    "valid",
    "first_error",
    "runtime_errors",
    "applies",
    "warnings",
    "effective_timeout_ms",
    "source",
}


def cases() -> list[Any]:
    found = []
    for path in sorted(VECTORS.glob("*.json")):
        for case in read_json_file(path):
            found.append(pytest.param(case, id=f"{path.stem}: {case['name']}"))
    return found


def pairs(findings: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(f["path"], f["message"]) for f in findings]


def config_answer(case: dict[str, Any]) -> dict[str, Any]:
    [check] = [c for c in CHECKS if c.name == "check-config"]
    expect = case["expect"]
    loops = [name for name in expect.get("applies", {}) if name != "main"]
    file = "agent.adf" if case.get("bound_to") == "adf" else "agent.json"
    args = argparse.Namespace(file=file, loop=loops, adf=False)
    answer, ok = check.check(args, lambda _: case["config"])
    assert ok is (answer["valid"] and not answer["runtime_errors"])
    return answer


def request_answer(case: dict[str, Any]) -> dict[str, Any]:
    found = errors(validate_request(case["request"]))
    return {"valid": not found, "errors": [f.to_json() for f in found]}


def test_every_rule_has_a_vector_file():
    names = {path.stem for path in VECTORS.glob("*.json")}
    assert {
        "check-order",
        "scope-null",
        "sources",
        "execution-limit",
        "key-order",
        "depth",
    } <= names


@pytest.mark.parametrize("case", cases())
def test_vector(case):
    expect = case["expect"]
    assert set(expect) <= KNOWN, set(expect) - KNOWN
    answer = config_answer(case) if "config" in case else request_answer(case)
    assert answer["valid"] is expect["valid"]
    if "first_error" in expect:
        first = expect["first_error"]
        assert pairs(answer["errors"])[:1] == [(first["path"], first["message"])]
    if "runtime_errors" in expect:
        assert pairs(answer["runtime_errors"]) == pairs(expect["runtime_errors"])
    if "warnings" in expect:
        assert [w["path"] for w in answer["warnings"]] == expect["warnings"]
    if "applies" in expect:
        assert answer["applies"] == expect["applies"]
    if "effective_timeout_ms" in expect:
        assert answer["effective_timeout_ms"] == expect["effective_timeout_ms"]
    if "source" in expect:
        hook = check_agent_config(case["config"]).hook
        assert hook is not None
        ref = parse_source_ref(hook.source)
        assert {"path": ref.path, "function": ref.function} == expect["source"]


def test_valid_and_first_error_never_disagree():
    for param in cases():
        expect = param.values[0]["expect"]
        assert expect["valid"] is ("first_error" not in expect), param.id
