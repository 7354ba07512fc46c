"""The headless checks as scripts and CI call them: a real process, its stdout, stderr and exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from tests.support.workspaces import TOOL_LOOP_REQUEST as VALID_REQUEST


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio", *args], capture_output=True, text=True, timeout=60
    )


def write(tmp_path: Path, value: object, name: str = "doc.json") -> str:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return str(path)


def output(done: subprocess.CompletedProcess[str]) -> dict:
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    return json.loads(lines[0])


class TestCheckConfig:
    def test_valid_prints_applies_and_timeout(self, tmp_path):
        doc = {
            "model": "kept",
            "pre_llm_hook": {
                "source": "lib/policy.py:transform",
                "scope": "loops",
                "loops": ["researcher"],
                "include_main": True,
                "timeout_ms": 5000,
            },
            "limits": {"execution_timeout_ms": 3000},
        }
        done = run("check-config", write(tmp_path, doc), "--loop", "researcher", "--loop", "other")
        assert done.returncode == 0, done.stderr
        assert output(done) == {
            "valid": True,
            "errors": [],
            "warnings": [],
            "runtime_errors": [],
            "applies": {"main": True, "researcher": True, "other": False},
            "effective_timeout_ms": 3000,
        }

    def test_a_config_from_a_named_pipe_is_read_as_a_shell_passes_one(self, tmp_path):
        # `hook-studio check-config <(jq ... agent.json)` hands the command a named pipe.
        pipe = tmp_path / "config"
        os.mkfifo(pipe)
        doc = {"pre_llm_hook": {"source": "a.py"}, "limits": {"execution_timeout_ms": 3000}}
        command = [sys.executable, "-m", "studio", "check-config", str(pipe)]
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as checker:
            pipe.write_text(json.dumps(doc))
            out, _ = checker.communicate(timeout=60)
        assert checker.returncode == 0
        assert json.loads(out)["effective_timeout_ms"] == 3000

    def test_a_missing_limit_fails_the_hooked_calls_and_has_no_default(self, tmp_path):
        doc = {"pre_llm_hook": {"source": "a.py", "scope": "main"}}
        done = run("check-config", write(tmp_path, doc), "--loop", "researcher")
        assert done.returncode == 1
        result = output(done)
        assert (result["valid"], result["errors"]) == (True, [])
        assert [(e["path"], e["message"]) for e in result["runtime_errors"]] == [
            (
                "/limits/execution_timeout_ms",
                "limits.execution_timeout_ms must be a positive integer",
            )
        ]
        assert result["applies"] == {"main": True, "researcher": False}
        assert result["effective_timeout_ms"] is None

    def test_an_infinite_limit_fails_like_a_missing_one(self, tmp_path):
        text = '{"pre_llm_hook": {"source": "a.py"}, "limits": {"execution_timeout_ms": 1e400}}'
        result = output(run("check-config", write(tmp_path, text)))
        assert result["valid"] is True
        assert [e["path"] for e in result["runtime_errors"]] == ["/limits/execution_timeout_ms"]

    def test_invalid_lists_every_error_and_omits_applies(self, tmp_path):
        doc = {"pre_llm_hook": {"source": "", "scope": "main", "include_main": False, "x": 1}}
        done = run("check-config", write(tmp_path, doc))
        assert done.returncode == 1
        result = output(done)
        assert result["valid"] is False
        assert [e["path"] for e in result["errors"]] == [
            "/pre_llm_hook/source",
            "/pre_llm_hook/include_main",
        ]
        assert all(e["message"] for e in result["errors"])
        assert [w["path"] for w in result["warnings"]] == ["/pre_llm_hook/x"]
        assert "applies" not in result and "effective_timeout_ms" not in result

    @pytest.mark.parametrize(
        ("content", "reason"),
        [("{not json", "not JSON"), ('{"a": NaN}', "NaN"), ("", "not JSON")],
    )
    def test_not_json_exits_2_with_a_clear_message(self, tmp_path, content, reason):
        done = run("check-config", write(tmp_path, content))
        assert done.returncode == 2
        assert done.stdout == ""
        assert reason in done.stderr
        assert "Traceback" not in done.stderr

    def test_a_missing_file_exits_2(self, tmp_path):
        done = run("check-config", str(tmp_path / "absent.json"))
        assert done.returncode == 2
        assert "no such file" in done.stderr and "Traceback" not in done.stderr

    def test_a_bad_loop_argument_is_a_usage_problem(self, tmp_path):
        done = run("check-config", write(tmp_path, {}), "--loop", "Not Valid")
        assert done.returncode == 2 and "Traceback" not in done.stderr


class TestCheckRequest:
    def test_valid(self, tmp_path):
        done = run("check-request", write(tmp_path, VALID_REQUEST))
        assert done.returncode == 0, done.stderr
        assert output(done) == {"valid": True, "errors": []}

    def test_invalid_names_the_path(self, tmp_path):
        bad = json.loads(json.dumps(VALID_REQUEST))
        bad["messages"][2]["content"][0]["content"] = [{"type": "text", "text": "x"}]
        done = run("check-request", write(tmp_path, bad))
        assert done.returncode == 1
        result = output(done)
        assert result["valid"] is False
        assert result["errors"][0]["path"] == "/messages/2/content/0/content"

    def test_returning_the_outer_object_fails_on_request(self, tmp_path):
        done = run("check-request", write(tmp_path, {"request": VALID_REQUEST, "loop": {}}))
        assert done.returncode == 1
        assert output(done)["errors"][0]["path"] == "/request"

    def test_tools_presented_but_not_enabled(self, tmp_path):
        original = json.loads(json.dumps(VALID_REQUEST))
        returned = json.loads(json.dumps(VALID_REQUEST))
        returned["tools"].append({"name": "shell", "description": "", "input_schema": {}})
        done = run(
            "check-request",
            write(tmp_path, returned, "out.json"),
            "--input",
            write(tmp_path, original, "in.json"),
        )
        assert done.returncode == 0
        assert [w["path"] for w in output(done)["warnings"]] == ["/tools/1"]


class TestCheckAmendment:
    BASELINE: ClassVar[dict] = {
        "contributors": ["persona", {"id": "examples", "kind": "droppable"}],
        "tools": ["search", "verify"],
        "model": "standard",
    }

    def test_valid_prints_the_record_and_the_effective_change(self, tmp_path):
        doc = {"baseline": self.BASELINE, "amendment": {"activeTools": ["search"]}}
        done = run("check-amendment", write(tmp_path, doc))
        assert done.returncode == 0, done.stderr
        result = output(done)
        assert result["valid"] is True and result["error"] is None
        assert result["inspection"]["amendment"]["activeTools"] == 1
        assert result["inspection"]["sealedRequestId"].startswith("request_")
        assert result["effective"] is not None

    def test_invalid_carries_the_composition_error(self, tmp_path):
        doc = {"baseline": self.BASELINE, "amendment": {"activeTools": ["missing"]}}
        done = run("check-amendment", write(tmp_path, doc))
        assert done.returncode == 1
        result = output(done)
        assert result["valid"] is False
        assert result["error"]["code"] == "INVALID_COMPOSITION"
        assert result["error"]["diagnostics"][0]["code"] == "INVALID_EXECUTION_AMENDMENT"
        assert result["inspection"] is None and result["effective"] is None

    def test_unreadable_exits_2(self, tmp_path):
        done = run("check-amendment", write(tmp_path, "[1,"))
        assert done.returncode == 2 and "Traceback" not in done.stderr


class TestSchema:
    def test_prints_every_schema(self):
        done = run("schema")
        assert done.returncode == 0
        schemas = output(done)
        assert {"pre_llm_hook", "agent_config", "pre_llm_request", "pre_llm_sample"} <= set(schemas)
        assert schemas["pre_llm_hook"]["properties"]["timeout_ms"]["maximum"] == 300000

    def test_prints_one_schema(self):
        assert output(run("schema", "pre_llm_hook"))["title"] == "pre_llm_hook"

    def test_an_unknown_schema_is_a_usage_problem(self):
        done = run("schema", "nope")
        assert done.returncode == 2 and "pre_llm_hook" in done.stderr


def test_the_console_script_and_python_dash_m_are_the_same_program():
    script = Path(sys.executable).with_name("hook-studio")
    assert script.exists()
    via_script = subprocess.run([str(script), "schema"], capture_output=True, text=True, timeout=60)
    assert via_script.returncode == 0
    assert via_script.stdout == run("schema").stdout


def test_a_malformed_amendment_document_is_invalid_with_every_finding(tmp_path):
    doc = {"baseline": {"contributors": [{"kind": "memory"}], "tools": "search"}, "amendment": {}}
    done = run("check-amendment", write(tmp_path, doc))
    assert done.returncode == 1, done.stderr
    result = output(done)
    assert result["valid"] is False and result["inspection"] is None
    paths = [d["path"] for d in result["error"]["diagnostics"]]
    assert "/baseline/contributors/0/id" in paths and "/baseline/tools" in paths
    assert "Traceback" not in done.stderr
