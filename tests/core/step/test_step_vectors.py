"""The plain JSON vectors of tests/vectors/crux: each document through ``check_amendment``.

A vector is ``{"name", "document": {"baseline", "amendment", ...}, "expect": {...}}``; every key
of ``expect`` is compared on its own, so a field the output gains later does not break one:

- ``valid``; ``rule``: the rule of the finding that fails the call (its explanation);
- ``error``: each field given, with ``null`` for a field that must be absent and
  ``message_free_of``: words the error's messages must not quote;
- ``effective`` and ``counts`` (the record's amendment counts): each field given;
- ``warnings``: the rules of the warnings, in order;
- ``resources``: ``{identity, canonical}``, the record's hash being SHA-256 of that text.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from studio.core.json.files import read_json_file
from studio.core.step.check import check_amendment

VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "crux"
REQUEST_ID = "request_" + "5a" * 16


def _vectors() -> list[Any]:
    found = []
    for path in sorted(VECTORS.glob("*.json")):
        for vector in read_json_file(path):
            found.append(pytest.param(vector, id=f"{path.stem}: {vector['name']}"))
    return found


def test_there_are_vectors_for_every_rule_of_section_8():
    stems = {path.stem for path in VECTORS.glob("*.json")}
    assert {
        "prototype-tools",
        "error-fields",
        "hash-domain",
        "tool-order",
        "offload-support-tool",
        "input-budget",
        "doubles",
        "contributor-tag",
        "string-add",
        "protection-and-children",
        "identity",
    } <= stems


@pytest.mark.parametrize("vector", _vectors())
def test_vector(vector):
    result = check_amendment(vector["document"], sealed_request_id=REQUEST_ID)
    expect = vector["expect"]
    json.dumps(result, allow_nan=False)
    assert result["valid"] is expect["valid"], result
    if "rule" in expect:
        assert result["explanation"]["rule"] == expect["rule"], result["explanation"]
    for key, wanted in expect.get("error", {}).items():
        error = result["error"]
        if key == "message_free_of":
            messages = [error["message"], *(d["message"] for d in error["diagnostics"])]
            for word in wanted:
                assert all(word not in message for message in messages), (word, messages)
        else:
            assert error.get(key) == wanted, (key, error)
    for key, wanted in expect.get("effective", {}).items():
        assert result["effective"][key] == wanted, (key, result["effective"])
    for key, wanted in expect.get("counts", {}).items():
        assert result["inspection"]["amendment"][key] == wanted, key
    if "warnings" in expect:
        assert [w["rule"] for w in result["warnings"]] == expect["warnings"], result["warnings"]
    if "resources" in expect:
        records = result["inspection"]["resources"]
        assert [r["identity"] for r in records] == [r["identity"] for r in expect["resources"]]
        for record, wanted in zip(records, expect["resources"], strict=True):
            digest = hashlib.sha256(wanted["canonical"].encode()).hexdigest()
            assert record["valueHash"] == digest, wanted["canonical"]
            assert record["revision"] == digest
