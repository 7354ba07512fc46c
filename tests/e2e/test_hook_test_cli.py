"""``hook-studio test`` as CI calls it: the bundled workspace passes, a broken hook fails the
right test cases (JUnit XML read with xml.etree), and problems of the call or the workspace have
their own exit code."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from studio.core.workspace.adf_file import AdfFile
from tests.support.paths import REPOSITORY
from tests.support.workspaces import copy_bundled_workspace

REMINDER = "Never copy customer data into tool arguments."
AGENT = REPOSITORY / "resources" / "sample-agent.adf"
AGENT_STATE = REPOSITORY / "resources" / "sample-agent.adf.hookstudio"


def studio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio", *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def workspace(tmp_path) -> Path:
    return copy_bundled_workspace(tmp_path / "ws")


def cases(junit: Path) -> dict[tuple[str, str], ET.Element]:
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    return {
        (suite.get("name", ""), case.get("name", "")): case
        for suite in root.findall("testsuite")
        for case in suite.findall("testcase")
    }


def test_the_bundled_workspace_passes_every_test(workspace, tmp_path):
    junit = tmp_path / "out" / "hook-tests.xml"
    junit.parent.mkdir()
    done = studio("test", str(workspace), "--junit", str(junit))
    assert done.returncode == 0, done.stdout + done.stderr
    found = cases(junit)
    assert set(found) == {
        ("support-ticket", "main"),
        ("support-ticket", "researcher"),
        ("support-ticket", "reviewer"),
        ("support-ticket", "future-loop"),
        ("support-ticket-context", "main"),
        ("step-escalated", "main"),
        ("chain-refund", "main"),
        ("invocation-pipeline-review", "main"),
        ("invocation-parallel-billing", "main"),
        ("invocation-consensus-failing", "main"),
        ("invocation-swarm-refund", "main"),
    }
    assert all(len(case) == 0 for case in found.values())  # no failure, no error
    assert done.stdout.splitlines()[-1] == "8 samples, 11 cases: 11 passed, 0 failed, 0 errors"
    # Every run went through the runner as `run` does: it is in the records.
    records = studio("records", str(workspace), "--jsonl")
    samples = [json.loads(line)["sample"] for line in records.stdout.splitlines()]
    assert sorted(samples).count("support-ticket") == 4


def test_a_broken_hook_fails_the_cases_it_runs_on(workspace, tmp_path):
    policy = workspace / "lib" / "policy.ts"
    policy.write_text(policy.read_text().replace("tool.name)", "tool.name) || true"))
    junit = tmp_path / "hook-tests.xml"
    done = studio("test", str(workspace), "--junit", str(junit))
    assert done.returncode == 1, done.stdout + done.stderr
    found = cases(junit)
    failed = {key for key, case in found.items() if case.find("failure") is not None}
    assert failed == {
        ("support-ticket", "main"),
        ("support-ticket", "researcher"),
        ("support-ticket-context", "main"),
    }
    failure = found[("support-ticket", "main")].find("failure")
    assert failure is not None
    assert failure.get("message") == (
        "/expect/0/result/1: result /tools/2 absent: expected absent, got "
        '{"name": "shell", "description": "Run a shell command", '
        '"input_schema": {"type": "object"}}'
    )
    assert "FAIL   main" in done.stdout
    root = ET.parse(junit).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("11", "3", "0")


def test_a_hook_that_throws_fails_with_the_turn_error_named(workspace, tmp_path):
    policy = workspace / "lib" / "policy.ts"
    policy.write_text(
        policy.read_text().replace("const { request } = input;", "throw new Error('broken');")
    )
    done = studio("test", str(workspace), "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["passed"] is False
    assert report["totals"] == {"samples": 8, "cases": 11, "passed": 8, "failed": 3, "errors": 0}
    ticket = next(s for s in report["samples"] if s["sample"] == "support-ticket")
    main = ticket["cases"][0]
    assert (main["target"], main["verdict"], main["status"]) == ("main", "fail", "turn_error")
    assert main["first_failure"]["at"] == "/expect/0/outcome"
    assert main["first_failure"]["expected"] == "ok"
    assert main["first_failure"]["actual"].startswith("turn_error (exception: ")


def test_a_malformed_expectation_is_reported_against_the_sample(workspace, tmp_path):
    path = workspace / "samples" / "chain-refund.json"
    document = json.loads(path.read_text())
    document["expect"][0]["outcome"] = "green"
    path.write_text(json.dumps(document))
    junit = tmp_path / "hook-tests.xml"
    done = studio("test", str(workspace), "--junit", str(junit))
    assert done.returncode == 1
    error = cases(junit)[("chain-refund", "(sample)")].find("error")
    assert error is not None
    assert error.get("message", "").startswith(
        "samples/chain-refund.json /expect/0/outcome: outcome must be one of"
    )
    assert "ERROR  (sample)" in done.stdout


@pytest.mark.parametrize("problem", ["no workspace", "malformed settings", "unwritable junit"])
def test_a_usage_or_workspace_problem_exits_two(workspace, tmp_path, problem):
    args = [str(workspace)]
    if problem == "no workspace":
        args = [str(tmp_path / "missing")]
    elif problem == "malformed settings":
        (workspace / "hookstudio.json").write_text('{"loops": "researcher"}')
    else:
        args += ["--junit", str(tmp_path / "no-such-folder" / "x.xml")]
    done = studio("test", *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("hook-studio: ")


def test_a_workspace_without_expectations_has_nothing_to_test(workspace):
    for path in (workspace / "samples").glob("*.json"):
        document = json.loads(path.read_text())
        document.pop("expect", None)
        path.write_text(json.dumps(document))
    done = studio("test", str(workspace))
    assert done.returncode == 0
    assert "no sample has expectations" in done.stderr


def test_an_adf_agent_file_is_tested_as_a_folder_is(tmp_path):
    shutil.copyfile(AGENT, tmp_path / AGENT.name)
    shutil.copytree(
        AGENT_STATE, tmp_path / AGENT_STATE.name, ignore=shutil.ignore_patterns(".hookstudio")
    )
    agent = tmp_path / AGENT.name
    sample = tmp_path / AGENT_STATE.name / "samples" / "support-ticket.json"
    document = json.loads(sample.read_text())
    document["expect"] = [
        {"targets": ["main", "researcher"], "result": [{"path": "/system", "contains": REMINDER}]},
        {"targets": ["future-loop"], "outcome": "not_applied"},
    ]
    sample.write_text(json.dumps(document))
    junit = tmp_path / "agent.xml"
    done = studio("test", str(agent), "--junit", str(junit))
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(cases(junit)) == {
        ("support-ticket", "main"),
        ("support-ticket", "researcher"),
        ("support-ticket", "future-loop"),
    }
    adf = AdfFile.open(agent)
    edited = (adf.file("lib/policy.ts").text or "").replace(REMINDER, "Edited in the agent.")
    assert adf.write_source("lib/policy.ts", edited, deauthorize=True).status == "saved"
    done = studio("test", str(agent), "--junit", str(junit))
    assert done.returncode == 1
    failed = {key for key, case in cases(junit).items() if case.find("failure") is not None}
    assert failed == {("support-ticket", "main"), ("support-ticket", "researcher")}
