"""``check-config``'s answer (spec/adf.md §7): ``valid``/``errors`` for the hook config as the
runtime validates it, ``runtime_errors`` for what fails every hooked call, ``applies`` whenever
the hook config is valid, and the effective timeout with no 60000 default."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from studio.core.pre_llm.checks import CHECKS

LIMIT = ("/limits/execution_timeout_ms", "limits.execution_timeout_ms must be a positive integer")


def check_config(
    document: Any, *loops: str, file: str = "agent.json"
) -> tuple[dict[str, Any], bool]:
    [check] = [c for c in CHECKS if c.name == "check-config"]
    args = argparse.Namespace(file=file, loop=list(loops), adf=False)
    return check.check(args, lambda _name: document)


def shown(findings: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(f["path"], f["message"]) for f in findings]


def test_a_valid_hook_with_a_good_limit():
    doc = {
        "pre_llm_hook": {"source": "a.js", "timeout_ms": 2000},
        "limits": {"execution_timeout_ms": 9000},
    }
    result, ok = check_config(doc, "x")
    assert ok
    assert result["valid"] is True and result["errors"] == [] and result["runtime_errors"] == []
    assert result["applies"] == {"main": True, "x": True}
    assert result["effective_timeout_ms"] == 2000


@pytest.mark.parametrize(
    "limits", [None, {}, {"execution_timeout_ms": 0}, {"execution_timeout_ms": 1.5}]
)
def test_a_bad_limit_is_a_runtime_error_beside_a_valid_hook(limits):
    doc: dict[str, Any] = {"pre_llm_hook": {"source": "a.js", "scope": "loops", "loops": ["x"]}}
    if limits is not None:
        doc["limits"] = limits
    result, ok = check_config(doc, "x", "y")
    assert not ok
    assert result["valid"] is True and result["errors"] == []
    assert shown(result["runtime_errors"]) == [LIMIT]
    assert result["applies"] == {"main": False, "x": True, "y": False}
    assert result["effective_timeout_ms"] is None


def test_an_invalid_hook_has_no_applies_and_still_names_the_limit():
    result, ok = check_config({"pre_llm_hook": {"source": "a.js", "scope": None, "loops": []}})
    assert not ok and result["valid"] is False
    assert [e["path"] for e in result["errors"]] == ["/pre_llm_hook/loops"]
    assert shown(result["runtime_errors"]) == [LIMIT]
    assert "applies" not in result and "effective_timeout_ms" not in result


def test_no_hook_means_no_runtime_errors():
    result, ok = check_config({"limits": "nonsense"}, "x")
    assert ok and result["runtime_errors"] == []
    assert result["applies"] == {"main": False, "x": False}


@pytest.mark.parametrize("source", ["../shared/hook.js", "/abs/hook.js:go", "C:\\hook.js"])
def test_a_source_that_leaves_the_folder_is_an_error_for_json_and_a_warning_for_adf(source):
    doc = {"pre_llm_hook": {"source": source}, "limits": {"execution_timeout_ms": 5000}}
    folder, folder_ok = check_config(doc)
    assert not folder_ok and [e["path"] for e in folder["errors"]] == ["/pre_llm_hook/source"]
    adf, adf_ok = check_config(doc, file="support.adf")
    assert adf_ok and adf["valid"] is True and adf["errors"] == []
    assert [w["path"] for w in adf["warnings"]] == ["/pre_llm_hook/source"]
    assert adf["applies"] == {"main": True}


def test_adf_judges_a_json_config_as_taken_out_of_an_adf():
    [check] = [c for c in CHECKS if c.name == "check-config"]
    doc = {"pre_llm_hook": {"source": "../h.js"}, "limits": {"execution_timeout_ms": 5000}}
    args = argparse.Namespace(file="stdin line 1", loop=[], adf=True)
    result, ok = check.check(args, lambda _name: doc)
    assert ok and [w["path"] for w in result["warnings"]] == ["/pre_llm_hook/source"]


def test_scope_null_is_valid_with_a_warning():
    doc = {
        "pre_llm_hook": {"source": "a.js", "scope": None},
        "limits": {"execution_timeout_ms": 5000},
    }
    result, ok = check_config(doc, "later")
    assert ok and result["valid"] is True
    assert [w["path"] for w in result["warnings"]] == ["/pre_llm_hook/scope"]
    assert result["applies"] == {"main": True, "later": True}
