"""Every contract runs through one runner and one call-this-hook capability: a sample is
judged by its contract before any hook runs, a source no runtime runs is a clear turn error,
and a contract added to the registry runs without touching the runner."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from typing import Any

import pytest

from studio.core.contract import CallHook, Contract, HookCall, RunJob
from studio.core.findings import Finding
from studio.core.registry import CONTRACTS
from studio.core.run_outcome import RunOutcome
from studio.core.turn_error import HookRef


def write(path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value) if not isinstance(value, str) else value)


def test_an_invalid_pre_llm_sample_fails_before_the_hook_runs(workspace, runner):
    marker = workspace.root / "hook-ran"
    write(
        workspace.root / "lib" / "marks.py",
        f"def main(p):\n    open({str(marker)!r}, 'w').close()\n    return p['request']\n",
    )
    write(
        workspace.root / "samples" / "robot.json",
        {"request": {"system": "s", "messages": [{"role": "robot", "content": "hi"}], "tools": []}},
    )
    outcome = runner.run("robot", hook="lib/marks.py")
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "sample_invalid"
    assert outcome.turn_error.path == "/request/messages/0/role"
    assert "samples/robot.json" in outcome.turn_error.message
    assert not marker.exists()


@pytest.mark.parametrize("source", ["lib/policy.lua:transform", "lib/policy.rb", "lib/policy"])
def test_a_source_no_runtime_runs_is_a_turn_error_that_says_so(workspace, runner, source):
    write(workspace.root / source.split(":")[0], "export function transform(x) { return x }\n")
    outcome = runner.run(hook=source)
    error = outcome.turn_error
    assert error.kind == "source_unsupported"
    assert "no runtime" in error.message and ".py" in error.message
    assert "syntax error" not in error.message
    assert error.hook.source == source.split(":")[0]


class EchoContract(Contract):
    """A contract the studio does not ship: the hook gets the sample's value and its answer is
    the result when it is a string."""

    name = "echo"
    label = "echo hook"
    title = "Echo hook"
    result_view = "request"
    sample_schema = "echo_sample"

    def parse_sample(self, document: Any) -> dict[str, Any] | list[Finding]:
        if not isinstance(document.get("value"), str):
            return [Finding(("value",), "value must be a string", "echo")]
        return document

    def sample_template(self) -> dict[str, Any]:
        return {"contract": "echo", "value": "hello"}

    def schemas(self) -> dict[str, dict[str, Any]]:
        return {"echo_sample": {"type": "object"}}

    async def run(self, job: RunJob, call_hook: CallHook) -> RunOutcome:
        assert job.hook is not None
        hook = HookRef(source=job.hook.split(":")[0], function="main", contract="echo")
        reply = await call_hook(
            HookCall(source=job.hook, hook=hook, argument=job.parsed["value"], timeout_ms=5000)
        )
        status = "ok" if reply.error is None and isinstance(reply.value, str) else "turn_error"
        return RunOutcome(
            contract=self.name,
            status=status,
            sample=job.sample.name,
            input=job.parsed["value"],
            result=reply.value,
            turn_error=reply.error,
        )


def test_a_registered_contract_runs_through_the_same_runner(workspace, runner, monkeypatch):
    monkeypatch.setitem(CONTRACTS, "echo", EchoContract())
    write(workspace.root / "lib" / "shout.py", "def main(value):\n    return value.upper()\n")
    write(workspace.root / "samples" / "greeting.json", {"contract": "echo", "value": "hi"})
    write(workspace.root / "samples" / "broken.json", {"contract": "echo", "value": 3})

    outcome = runner.run("greeting", hook="lib/shout.py")
    assert (outcome.contract, outcome.status, outcome.result) == ("echo", "ok", "HI")

    broken = runner.run("broken", hook="lib/shout.py")
    assert broken.turn_error.kind == "sample_invalid"
    assert broken.turn_error.path == "/value"


def test_an_unknown_contract_names_the_registered_ones(workspace, runner):
    write(workspace.root / "samples" / "odd.json", {"contract": "nope", "request": {}})
    outcome = runner.run("odd")
    assert outcome.turn_error.kind == "sample_invalid"
    for name in CONTRACTS:
        assert f'"{name}"' in outcome.turn_error.message


def test_the_runtimes_name_what_they_run_and_list_functions(tmp_path):
    from studio.engine.runtimes import runnable_extensions, runtime_for, unrunnable_problem

    assert ".py" in runnable_extensions()
    python = runtime_for("lib/a.py")
    assert python is not None and python.name == "python"
    hook = tmp_path / "a.py"
    hook.write_text("def first(p):\n    return p\n\nasync def second(p):\n    return p\n")
    assert [f.name for f in python.functions(hook)] == ["first", "second"]
    assert runtime_for("lib/a.rb") is None
    assert unrunnable_problem("lib/a.py") is None
    assert "'.rb' files" in unrunnable_problem("lib/a.rb")


def test_the_workspace_lists_the_sources_of_the_given_languages(workspace):
    write(workspace.root / "lib" / "other.ts", "export {}\n")
    assert "lib/policy.py" in workspace.hook_sources((".py",))
    assert "lib/other.ts" not in workspace.hook_sources((".py",))
    assert "lib/other.ts" in workspace.hook_sources((".py", ".ts"))


@pytest.mark.parametrize("written", ["long ago", "in this clock tick"])
def test_an_unchanged_sample_is_checked_once_and_a_changed_one_again(
    workspace, runner, monkeypatch, written
):
    sample = workspace.root / "samples" / "basic.json"
    # A file written in this clock tick has a stamp that cannot tell it from its next write (a
    # time in the future is as recent as a write can be, however long the runs take).
    seconds = -3600 if written == "long ago" else 3600
    mtime = time.time_ns() + seconds * 1_000_000_000
    os.utime(sample, ns=(mtime, mtime))
    contract = CONTRACTS["pre_llm"]
    parsed: list[object] = []
    real = type(contract).parse_sample

    def counting(self, document):
        parsed.append(document)
        return real(self, document)

    monkeypatch.setattr(type(contract), "parse_sample", counting)
    assert runner.run().status == "ok"
    assert runner.run().status == "ok"
    assert len(parsed) == 1

    document = json.loads(sample.read_text())
    document["request"]["messages"][0]["role"] = "robot"
    sample.write_text(json.dumps(document, indent=4))
    outcome = runner.run()
    assert outcome.turn_error.kind == "sample_invalid"
    assert len(parsed) == 2


class SectionContract(EchoContract):
    """Echo, with its hook named in a section of hookstudio.json that the contract owns."""

    name = "sectioned"
    settings_key = "sectioned"

    def parse_settings(self, value: Any) -> Any:
        if not isinstance(value, dict) or not isinstance(value.get("source"), str):
            return [Finding(("source",), "source must be a string", "sectioned")]
        return value

    async def run(self, job: RunJob, call_hook: CallHook) -> RunOutcome:
        section = job.settings.section(self.settings_key)
        return await super().run(replace(job, hook=section["source"]), call_hook)


def test_a_contract_owns_its_section_of_the_studio_settings(workspace, runner, monkeypatch):
    monkeypatch.setitem(CONTRACTS, "sectioned", SectionContract())
    settings_file = workspace.root / "hookstudio.json"
    settings = json.loads(settings_file.read_text())
    write(workspace.root / "lib" / "shout.py", "def main(value):\n    return value.upper()\n")
    write(workspace.root / "samples" / "greeting.json", {"contract": "sectioned", "value": "hi"})

    write(settings_file, {**settings, "sectioned": {"source": "lib/shout.py"}})
    outcome = runner.run("greeting")
    assert (outcome.status, outcome.result) == ("ok", "HI")

    write(settings_file, {**settings, "sectioned": {"source": 3}})
    outcome = runner.run("greeting")
    assert outcome.turn_error.kind == "config_invalid"
    assert outcome.turn_error.path == "/sectioned/source"


def test_without_the_contract_its_section_is_an_unknown_key(workspace, runner):
    settings_file = workspace.root / "hookstudio.json"
    write(settings_file, {**json.loads(settings_file.read_text()), "sectioned": {}})
    outcome = runner.run()
    assert outcome.turn_error.kind == "config_invalid"
    assert outcome.turn_error.path == "/sectioned"
