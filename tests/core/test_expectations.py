"""Hook tests in core: reading a sample's expectations, judging a run against them, planning a
workspace's tests, Save as test, and the JUnit XML."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from studio.core.expectations.evaluate import CaseResult, judge
from studio.core.expectations.from_outcome import (
    SaveAsTestError,
    expectation_from_outcome,
    save_as_test,
)
from studio.core.expectations.junit import junit_xml
from studio.core.expectations.model import parse_expectations
from studio.core.expectations.report import report_json, summary_lines
from studio.core.expectations.targets import plan_tests, workspace_targets
from studio.core.registry import CONTRACTS
from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import turn_error
from studio.core.workspace.folder import Workspace
from studio.core.workspace.sample_check import check_sample_text, sample_outline
from tests.support.paths import BUNDLED_WORKSPACE

PRE_LLM = CONTRACTS["pre_llm"]
REQUEST = {
    "system": "You are a support agent.",
    "messages": [{"role": "user", "content": "Why was order 4821 refunded twice?"}],
    "tools": [{"name": "fs_read"}, {"name": "fs_write"}, {"name": "shell"}],
    "options": {"maxTokens": 1024},
}
RESULT = {
    "system": "You are a support agent.\n\nNever copy customer data.",
    "messages": REQUEST["messages"],
    "tools": [{"name": "fs_read"}, {"name": "fs_write"}],
    "options": {"maxTokens": 1024},
}
DECISION = {
    "applied": True,
    "changed": {"system": True, "messages": False},
    "tools": {"removed": ["shell"]},
    "sealedRequestId": "request_0123",
}


def ok_run(**changes: Any) -> RunOutcome:
    fields: dict[str, Any] = {
        "contract": "pre_llm",
        "status": "ok",
        "sample": "ticket",
        "loop": "main",
        "input": REQUEST,
        "result": RESULT,
        "decision_record": DECISION,
    }
    fields.update(changes)
    return RunOutcome(**fields)


def failed_run(kind: str = "exception") -> RunOutcome:
    return RunOutcome(
        contract="pre_llm",
        status="turn_error",
        sample="ticket",
        loop="main",
        input=REQUEST,
        turn_error=turn_error(kind, "`transform` raised TypeError: boom"),
    )


def verdict_of(block: dict[str, Any], outcome: RunOutcome, target: str = "main") -> CaseResult:
    expectations, findings = parse_expectations({"expect": [block]})
    assert [f for f in findings if f.severity == "error"] == []
    return judge(outcome, expectations, target, PRE_LLM)


# ---- each assertion kind, passing and failing -----------------------------------------------


@pytest.mark.parametrize(
    ("block", "passes"),
    [
        ({"outcome": "ok"}, True),
        ({"outcome": "not_applied"}, False),
        ({"result": [{"path": "/system", "equals": RESULT["system"]}]}, True),
        ({"result": [{"path": "/system", "equals": "You are a support agent."}]}, False),
        ({"result": [{"path": "/options/maxTokens", "equals": 1024.0}]}, True),
        ({"result": [{"path": "/options/maxTokens", "equals": True}]}, False),
        ({"result": [{"path": "/system", "contains": "Never copy"}]}, True),
        ({"result": [{"path": "/system", "contains": "Always copy"}]}, False),
        ({"result": [{"path": "/tools", "contains": {"name": "fs_read"}}]}, True),
        ({"result": [{"path": "/tools", "contains": {"name": "shell"}}]}, False),
        ({"result": [{"path": "/options", "contains": {"maxTokens": 1024}}]}, True),
        ({"result": [{"path": "/options", "contains": {"temperature": 0.5}}]}, False),
        ({"result": [{"path": "/tools/2", "absent": True}]}, True),
        ({"result": [{"path": "/tools/1", "absent": True}]}, False),
        ({"result": [{"path": "/nothing/here", "equals": None}]}, False),
        ({"tools": {"removed": ["shell"]}}, True),
        ({"tools": {"removed": ["fs_read"]}}, False),
        ({"tools": {"kept": ["fs_read", "fs_write"]}}, True),
        ({"tools": {"kept": ["shell"]}}, False),
        ({"tools": {"kept": ["web_search"]}}, False),
        ({"decision": {"applied": True}}, True),
        ({"decision": {"applied": False}}, False),
        ({"decision": {"/changed/messages": False, "/tools/removed": ["shell"]}}, True),
        ({"decision": {"/tools/removed": []}}, False),
        ({"decision": {"missing": 1}}, False),
    ],
)
def test_each_assertion_kind_passes_and_fails(block, passes):
    case = judge_block(block)
    assert case.verdict == ("pass" if passes else "fail")
    assert (case.first_failure is None) == passes


def judge_block(block: dict[str, Any]) -> CaseResult:
    return verdict_of(block, ok_run())


def test_a_failed_assertion_says_where_it_is_and_what_was_expected_against_what_came():
    case = judge_block(
        {
            "outcome": "ok",
            "result": [
                {"path": "/system", "contains": "Never copy"},
                {"path": "/tools/0/name", "equals": "shell"},
                {"path": "/tools/1", "absent": True},
            ],
        }
    )
    assert case.verdict == "fail"
    failure = case.first_failure
    assert failure is not None
    assert failure.at == "/expect/0/result/1"
    assert failure.expected == '"shell"' and failure.actual == '"fs_read"'
    assert case.headline() == (
        '/expect/0/result/1: result /tools/0/name equals: expected "shell", got "fs_read"'
    )
    assert [c.passed for c in case.checks] == [True, True, False, False]


def test_turn_error_kind_passes_on_that_kind_and_fails_on_another_or_on_success():
    assert verdict_of({"turn_error": "exception"}, failed_run("exception")).verdict == "pass"
    other = verdict_of({"turn_error": "timeout"}, failed_run("exception"))
    assert other.verdict == "fail"
    assert other.first_failure is not None
    assert (other.first_failure.expected, other.first_failure.actual) == (
        "timeout",
        "exception",
    )
    succeeded = verdict_of({"turn_error": "exception"}, ok_run())
    assert succeeded.verdict == "fail"
    assert succeeded.first_failure is not None
    assert succeeded.first_failure.actual == "no turn error (ok)"


def test_an_expected_success_that_fails_names_the_turn_error():
    case = verdict_of({"outcome": "ok"}, failed_run())
    assert case.verdict == "fail"
    assert case.first_failure is not None
    assert case.first_failure.actual.startswith("turn_error (exception: `transform` raised")


def test_result_assertions_fail_on_a_run_without_a_result():
    case = verdict_of({"result": [{"path": "/tools/9", "absent": True}]}, failed_run())
    assert case.verdict == "fail"
    assert case.first_failure is not None
    assert case.first_failure.actual.startswith("no result")


def test_a_run_the_studio_could_not_carry_out_is_an_error_not_a_failure():
    case = verdict_of({"outcome": "ok"}, failed_run("engine_failed"))
    assert case.verdict == "error"
    assert case.problem is not None and case.problem.startswith("engine_failed")


def test_a_test_may_expect_a_kind_that_is_otherwise_an_error():
    assert verdict_of({"turn_error": "config_invalid"}, failed_run("config_invalid")).verdict == (
        "pass"
    )


def test_only_the_blocks_that_name_the_target_judge_its_run():
    expectations, _ = parse_expectations(
        {
            "expect": [
                {"targets": ["main"], "outcome": "ok"},
                {"targets": ["reviewer"], "outcome": "not_applied"},
            ]
        }
    )
    assert judge(ok_run(), expectations, "main", PRE_LLM).verdict == "pass"
    reviewer = judge(ok_run(loop="reviewer"), expectations, "reviewer", PRE_LLM)
    assert reviewer.verdict == "fail"
    assert reviewer.first_failure is not None
    assert reviewer.first_failure.at == "/expect/1/outcome"


# ---- malformed expectations are findings of the sample, at their path ---------------------


@pytest.mark.parametrize(
    ("expect", "pointer", "words"),
    [
        ({"outcome": "ok"}, "/expect", "must be an array"),
        (["ok"], "/expect/0", "must be an object"),
        ([{"outcom": "ok"}], "/expect/0/outcom", "does not define"),
        ([{"outcome": "passed"}], "/expect/0/outcome", "one of ok, not_applied, turn_error"),
        ([{"turn_error": "boom"}], "/expect/0/turn_error", "a turn error kind"),
        ([{"outcome": "ok", "turn_error": "timeout"}], "/expect/0/turn_error", "not 'ok'"),
        ([{"targets": []}], "/expect/0/targets", "targets is empty"),
        ([{"targets": ["Main Loop"]}], "/expect/0/targets/0", "loop name"),
        ([{"result": {"path": "/a"}}], "/expect/0/result", "array of assertions"),
        ([{"result": [{"path": "a", "equals": 1}]}], "/expect/0/result/0/path", "JSON pointer"),
        ([{"result": [{"path": "/a"}]}], "/expect/0/result/0", "exactly one of"),
        ([{"result": [{"path": "/a", "equals": 1, "absent": True}]}], "/expect/0/result/0", "not"),
        ([{"result": [{"path": "/a", "absent": False}]}], "/expect/0/result/0/absent", "true"),
        ([{"result": [{"path": "/a", "matches": "x"}]}], "/expect/0/result/0/matches", "not part"),
        ([{"tools": ["shell"]}], "/expect/0/tools", "removed"),
        ([{"tools": {"removed": "shell"}}], "/expect/0/tools/removed", "array of tool names"),
        ([{"tools": {"removed": ["a"], "kept": ["a"]}}], "/expect/0/tools", "both"),
        ([{"decision": ["applied"]}], "/expect/0/decision", "must be an object"),
    ],
)
def test_a_malformed_expectation_is_an_error_at_its_path(expect, pointer, words):
    _, findings = parse_expectations({"expect": expect})
    errors = [f for f in findings if f.severity == "error"]
    assert errors, findings
    assert errors[0].pointer == pointer
    assert words in errors[0].message
    assert errors[0].rule == "studio.expect"


def test_the_sample_editor_marks_a_malformed_expectation_in_the_text():
    document = json.loads((BUNDLED_WORKSPACE / "samples" / "support-ticket.json").read_text())
    document["expect"][0]["outcome"] = "fine"
    text = json.dumps(document, indent=2)
    check = check_sample_text(text)
    problems = [p for p in check.problems if p.pointer == "/expect/0/outcome"]
    assert len(problems) == 1 and problems[0].severity == "error"
    assert text.splitlines()[problems[0].line - 1].strip().startswith('"outcome": "fine"')


def test_a_sample_without_expectations_has_no_findings_about_them():
    assert parse_expectations({"request": REQUEST}) == ([], [])


@pytest.mark.parametrize("name", ["support-ticket", "step-escalated", "chain-refund"])
def test_the_bundled_samples_with_expectations_have_no_findings(name):
    text = (BUNDLED_WORKSPACE / "samples" / f"{name}.json").read_text()
    assert check_sample_text(text).problems == ()


# ---- planning a workspace's tests ----------------------------------------------------------


@pytest.fixture
def workspace(tmp_path) -> Path:
    target = tmp_path / "ws"
    shutil.copytree(BUNDLED_WORKSPACE, target, ignore=shutil.ignore_patterns(".hookstudio"))
    return target


def sample_file(root: Path, name: str) -> Path:
    return root / "samples" / f"{name}.json"


def edit_sample(root: Path, name: str, change: Any) -> None:
    path = sample_file(root, name)
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document, indent=2))


def test_workspace_targets_are_main_each_declared_loop_and_a_future_loop():
    assert workspace_targets(["researcher", "reviewer"]) == [
        "main",
        "researcher",
        "reviewer",
        "future-loop",
    ]


def test_the_plan_runs_a_pre_llm_sample_on_the_targets_it_names_and_others_once(workspace):
    plans = {p.name: p for p in plan_tests(Workspace.open(workspace))}
    assert set(plans) == {
        "support-ticket",
        "support-ticket-context",
        "step-escalated",
        "chain-refund",
        "invocation-pipeline-review",
        "invocation-parallel-billing",
        "invocation-consensus-failing",
        "invocation-swarm-refund",
    }
    assert plans["support-ticket"].targets == ("main", "researcher", "reviewer", "future-loop")
    assert plans["support-ticket-context"].targets == ("main",)
    assert plans["step-escalated"].targets == ("main",)
    assert all(p.runnable for p in plans.values())


def test_a_block_without_targets_names_every_target(workspace):
    edit_sample(workspace, "support-ticket", lambda d: d["expect"][1].pop("targets"))
    plan = {p.name: p for p in plan_tests(Workspace.open(workspace))}["support-ticket"]
    assert plan.targets == ("main", "researcher", "reviewer", "future-loop")


def test_a_target_the_workspace_does_not_have_is_a_problem_of_the_sample(workspace):
    edit_sample(workspace, "support-ticket", lambda d: d["expect"][1]["targets"].append("reviewr"))
    plan = {p.name: p for p in plan_tests(Workspace.open(workspace))}["support-ticket"]
    assert not plan.runnable
    assert plan.problem_text() == (
        "samples/support-ticket.json /expect/1/targets/2: 'reviewr' is not a target of this "
        "workspace (main, researcher, reviewer, future-loop)"
    )


def test_a_step_sample_has_only_the_target_main(workspace):
    edit_sample(
        workspace, "step-escalated", lambda d: d["expect"][0].update(targets=["researcher"])
    )
    plan = {p.name: p for p in plan_tests(Workspace.open(workspace))}["step-escalated"]
    assert not plan.runnable
    assert "its only target is main" in plan.problem_text()


def test_an_unreadable_sample_file_is_reported_not_skipped(workspace):
    sample_file(workspace, "broken").write_text('{"expect": [')
    plan = {p.name: p for p in plan_tests(Workspace.open(workspace))}["broken"]
    assert not plan.runnable and plan.problem_text().startswith("samples/broken.json /:")


def test_samples_without_expectations_are_not_planned(workspace):
    edit_sample(workspace, "chain-refund", lambda d: d.pop("expect"))
    assert "chain-refund" not in {p.name for p in plan_tests(Workspace.open(workspace))}


# ---- Save as test --------------------------------------------------------------------------


def test_save_as_test_expects_what_the_run_gave_without_what_changes_on_every_run():
    block = expectation_from_outcome(ok_run(), PRE_LLM, "main")
    assert block["targets"] == ["main"]
    assert block["outcome"] == "ok"
    assert block["result"] == [
        {"path": "/system", "equals": RESULT["system"]},
        {"path": "/messages", "equals": RESULT["messages"]},
        {"path": "/tools", "equals": RESULT["tools"]},
        {"path": "/options", "equals": RESULT["options"]},
    ]
    assert block["tools"] == {"removed": ["shell"], "kept": ["fs_read", "fs_write"]}
    assert "sealedRequestId" not in block["decision"]
    assert block["decision"]["applied"] is True
    assert judge_saved(block, ok_run()).verdict == "pass"


def judge_saved(block: dict[str, Any], outcome: RunOutcome) -> CaseResult:
    expectations, findings = parse_expectations({"expect": [block]})
    assert findings == []
    return judge(outcome, expectations, "main", PRE_LLM)


def test_save_as_test_of_a_failed_run_expects_its_kind():
    block = expectation_from_outcome(failed_run("timeout"), PRE_LLM, "main")
    assert block == {"targets": ["main"], "turn_error": "timeout"}
    assert judge_saved(block, failed_run("timeout")).verdict == "pass"
    assert judge_saved(block, ok_run()).verdict == "fail"


def test_save_as_test_keeps_every_other_byte_of_the_sample_file(tmp_path):
    original = (
        '{\n    "description": "caf\\u00e9 — kept as written",\n    "request":'
        ' {"system": "s", "messages": [], "tools": [], "options": {}}\n}\n'
    )
    path = tmp_path / "s.json"
    path.write_text(original, encoding="utf-8")
    save_as_test(path, ok_run(), PRE_LLM, "main", ["main", "future-loop"])
    text = path.read_text(encoding="utf-8")
    assert text.startswith(original[: original.rindex("}\n}") + 1])
    document = json.loads(text)
    assert document["expect"][0]["targets"] == ["main"]
    assert '\n    "expect": [\n        {\n' in text  # the file's own indentation
    # A second save of the same target replaces the block instead of adding one.
    save_as_test(path, failed_run(), PRE_LLM, "main", ["main", "future-loop"])
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["expect"] == [{"targets": ["main"], "turn_error": "exception"}]
    assert path.read_text(encoding="utf-8").startswith(original[: original.rindex("}\n}") + 1])


def test_save_as_test_takes_the_target_out_of_the_blocks_that_named_it(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "request": REQUEST,
                "expect": [
                    {"outcome": "ok"},
                    {"targets": ["main"], "outcome": "ok"},
                    {"targets": ["reviewer"], "outcome": "not_applied"},
                ],
            },
            indent=2,
        )
    )
    save_as_test(path, failed_run(), PRE_LLM, "main", ["main", "reviewer", "future-loop"])
    expect = json.loads(path.read_text())["expect"]
    assert expect == [
        {"outcome": "ok", "targets": ["reviewer", "future-loop"]},
        {"targets": ["reviewer"], "outcome": "not_applied"},
        {"targets": ["main"], "turn_error": "exception"},
    ]


def test_save_as_test_refuses_a_file_it_cannot_edit_and_leaves_it_alone(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"request": {}, "expect": "everything"}')
    with pytest.raises(SaveAsTestError, match="not a list"):
        save_as_test(path, ok_run(), PRE_LLM, "main", ["main"])
    assert path.read_text() == '{"request": {}, "expect": "everything"}'
    path.write_text("[1, 2]")
    with pytest.raises(SaveAsTestError, match="not a JSON object"):
        save_as_test(path, ok_run(), PRE_LLM, "main", ["main"])


def test_save_as_test_into_an_empty_object_and_a_crlf_file(tmp_path):
    path = tmp_path / "s.json"
    path.write_text("{}")
    save_as_test(path, ok_run(), PRE_LLM, None, ["main"])
    assert json.loads(path.read_text())["expect"][0]["outcome"] == "ok"
    path.write_bytes(b'{\r\n  "request": {}\r\n}\r\n')
    save_as_test(path, ok_run(), PRE_LLM, None, ["main"])
    data = path.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert json.loads(data)["expect"][0]["outcome"] == "ok"


# ---- the report and JUnit XML --------------------------------------------------------------


class Report:
    def __init__(self, name: str, cases: tuple[CaseResult, ...]) -> None:
        self.name = name
        self.cases = cases


def test_junit_xml_has_a_suite_per_sample_and_a_case_per_target():
    passed = judge_block({"outcome": "ok"})
    failed = verdict_of({"targets": ["reviewer"], "outcome": "not_applied"}, ok_run(), "reviewer")
    error = CaseResult("other", "(sample)", "error", problem="samples/other.json /: not JSON\x01")
    reports = [Report("ticket", (passed, failed)), Report("other", (error,))]
    root = ET.fromstring(junit_xml(reports))
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors")) == (
        "testsuites",
        "3",
        "1",
        "1",
    )
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["ticket", "other"]
    cases = suites[0].findall("testcase")
    assert [c.get("name") for c in cases] == ["main", "reviewer"]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("message") == ("/expect/0/outcome: outcome: expected not_applied, got ok")
    error_element = suites[1].find("testcase/error")
    assert error_element is not None
    assert error_element.get("message") == "samples/other.json /: not JSON\\u0001"


def test_the_summary_names_the_first_failure_and_the_totals():
    failed = verdict_of({"outcome": "not_applied"}, ok_run())
    lines = summary_lines([Report("ticket", (judge_block({"outcome": "ok"}), failed))])
    assert lines == [
        "ticket",
        "  pass   main",
        "  FAIL   main  /expect/0/outcome: outcome: expected not_applied, got ok",
        "1 sample, 2 cases: 1 passed, 1 failed, 0 errors",
    ]
    assert report_json([Report("ticket", (failed,))])["passed"] is False


def test_the_structured_view_of_a_sample_lists_its_expectations():
    document = json.loads((BUNDLED_WORKSPACE / "samples" / "support-ticket.json").read_text())
    entries = sample_outline("pre_llm", document)
    assert [e.label for e in entries][-1] == "Expect"
    expect = entries[-1]
    assert (expect.detail, expect.pointer) == ("2 expectations", "/expect")
    assert expect.children is not None
    assert [c.pointer for c in expect.children()] == ["/expect/0", "/expect/1"]
    document.pop("expect")
    assert "Expect" not in [e.label for e in sample_outline("pre_llm", document)]


@pytest.mark.parametrize(
    "expect",
    [
        [{"outcome": "green"}],
        [{"turn_error": "boom"}],
        [{"outcom": "ok"}],
        [{"result": [{"path": "a", "equals": 1}]}],
        [{"result": [{"path": "/a", "equals": 1, "absent": True}]}],
        [{"result": [{"path": "/a", "absent": False}]}],
        [{"tools": {"gone": ["shell"]}}],
        [{"targets": []}],
        {"outcome": "ok"},
    ],
)
def test_each_sample_schema_refuses_what_the_parser_refuses(expect):
    from studio.core.schemas import all_schemas

    _, findings = parse_expectations({"expect": expect})
    assert [f for f in findings if f.severity == "error"]
    for name in ("pre_llm_sample", "step_sample", "chain_sample"):
        schema = all_schemas()[name]
        validator = jsonschema.Draft202012Validator(schema)
        errors = list(validator.iter_errors({"expect": expect}))
        assert any(list(e.absolute_path)[:1] == ["expect"] for e in errors), name
