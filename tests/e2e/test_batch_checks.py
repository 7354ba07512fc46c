"""``hook-studio check-* --batch``: JSON Lines on stdin, one answer per line, as CI calls it."""

from __future__ import annotations

import json
import selectors
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from studio.core.registry import CONTRACTS
from tests.support.workspaces import TOOL_LOOP_REQUEST as VALID_REQUEST

PROGRAM = [sys.executable, "-m", "studio"]


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PROGRAM, *args], input=stdin, capture_output=True, text=True, timeout=120
    )


def answers(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def comparable(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer without the one field that differs from call to call: the sealed request id
    of an accepted amendment, which is new for every sealed request."""
    inspection = answer.get("inspection")
    if not isinstance(inspection, dict) or "sealedRequestId" not in inspection:
        return answer
    assert isinstance(inspection["sealedRequestId"], str)
    return {**answer, "inspection": {**inspection, "sealedRequestId": "<sealed>"}}


def jsonl(lines: list[Any]) -> str:
    """Documents as one JSON line each; a str in ``lines`` is written as it is (not JSON)."""
    return "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)


def single_answer(tmp_path: Path, command: str, document: Any, *options: str) -> dict[str, Any]:
    path = tmp_path / "single.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    done = run(command, str(path), *options)
    assert done.returncode in (0, 1), done.stderr
    [answer] = answers(done)
    return answer


VALID_CONFIG = {
    "model": "kept",
    "pre_llm_hook": {"source": "hooks/policy.py:transform", "scope": "main"},
    "limits": {"execution_timeout_ms": 30000},
}
EMPTY_SOURCE = {"pre_llm_hook": {"source": "   "}, "limits": {"execution_timeout_ms": 30000}}
UNKNOWN_SCOPE = {
    "pre_llm_hook": {"source": "a.py", "scope": "sometimes"},
    "limits": {"execution_timeout_ms": 30000},
}

TOOL_ROLE = {**VALID_REQUEST, "messages": [{"role": "tool", "content": "hi"}]}
NO_MESSAGES = {**VALID_REQUEST, "messages": []}

BASELINE = {"contributors": ["persona"], "tools": ["search", "fetch"], "model": "standard-model"}
NARROWED = {"baseline": BASELINE, "amendment": {"activeTools": ["search"]}}
UNKNOWN_ACTIVE_TOOL = {"baseline": BASELINE, "amendment": {"activeTools": ["missing"]}}
NOT_AN_OBJECT = {"baseline": BASELINE, "amendment": 7}
NO_BASELINE = {"amendment": {}}

# Per command: (options, valid documents, invalid documents).
CASES = {
    "check-config": (("--loop", "researcher"), [VALID_CONFIG], [EMPTY_SOURCE, UNKNOWN_SCOPE]),
    "check-request": ((), [VALID_REQUEST], [TOOL_ROLE, NO_MESSAGES]),
    "check-amendment": ((), [NARROWED], [UNKNOWN_ACTIVE_TOOL, NOT_AN_OBJECT, NO_BASELINE]),
}


@pytest.mark.parametrize("command", list(CASES))
def test_each_line_gets_the_single_file_answer_in_order(tmp_path, command):
    options, valid, invalid = CASES[command]
    lines: list[Any] = [valid[0], *invalid, "not json", valid[0], "", invalid[0]]
    done = run(command, "--batch", *options, stdin=jsonl(lines))
    assert done.returncode == 1, done.stderr
    results = answers(done)
    assert [r["line"] for r in results] == list(range(1, len(lines) + 1))
    for number, (document, result) in enumerate(zip(lines, results, strict=True), start=1):
        if isinstance(document, str):
            continue
        expected = single_answer(tmp_path, command, document, *options)
        assert comparable(result) == comparable({**expected, "line": number})
        assert result["valid"] is (document in valid)


@pytest.mark.parametrize("command", list(CASES))
def test_a_line_that_is_not_json_is_an_invalid_answer_not_a_stop(command):
    options, valid, _ = CASES[command]
    lines = [valid[0], "{", "", valid[0], '{"a": NaN}']
    done = run(command, "--batch", *options, stdin=jsonl(lines))
    assert done.returncode == 1
    results = answers(done)
    assert [r["valid"] for r in results] == [True, False, False, True, False]
    for number in (2, 3, 5):
        result = results[number - 1]
        [error] = result["errors"]
        assert result == {"line": number, "valid": False, "errors": [error]}
        assert error["path"] == "" and error["rule"] == "json"
        assert error["message"].startswith(f"stdin line {number}: ")
    assert "not JSON" in results[1]["errors"][0]["message"]
    assert "empty" in results[2]["errors"][0]["message"]
    assert "NaN" in results[4]["errors"][0]["message"]


def test_bytes_that_are_not_utf8_are_an_invalid_line():
    raw = subprocess.run(
        [*PROGRAM, "check-request", "--batch"],
        input=b"\xff\xfe{}\n" + json.dumps(VALID_REQUEST).encode() + b"\n",
        capture_output=True,
        timeout=120,
    )
    assert raw.returncode == 1
    first, second = (json.loads(line) for line in raw.stdout.splitlines())
    assert first["valid"] is False and "UTF-8" in first["errors"][0]["message"]
    assert second == {"line": 2, "valid": True, "errors": []}


@pytest.mark.parametrize("command", list(CASES))
def test_a_batch_of_valid_lines_exits_0(command):
    options, valid, _ = CASES[command]
    done = run(command, "--batch", *options, stdin=jsonl(valid * 3))
    assert done.returncode == 0, done.stderr
    assert [(r["line"], r["valid"]) for r in answers(done)] == [(1, True), (2, True), (3, True)]


@pytest.mark.parametrize("name", [c.name for k in CONTRACTS.values() for c in k.checks()])
def test_every_registered_check_takes_a_batch(name):
    done = run(name, "--batch", stdin="")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_last_line_without_a_newline_is_still_checked():
    done = run("check-request", "--batch", stdin=jsonl([VALID_REQUEST]) + json.dumps(TOOL_ROLE))
    assert [(r["line"], r["valid"]) for r in answers(done)] == [(1, True), (2, False)]


class TestOptionsApplyToEveryLine:
    def test_loop(self):
        scoped = {
            "pre_llm_hook": {"source": "a.py", "scope": "loops", "loops": ["researcher"]},
            "limits": {"execution_timeout_ms": 30000},
        }
        done = run(
            "check-config", "--batch", "--loop", "researcher", stdin=jsonl([VALID_CONFIG, scoped])
        )
        first, second = answers(done)
        assert first["applies"] == {"main": True, "researcher": False}
        assert second["applies"] == {"main": False, "researcher": True}

    def test_input(self, tmp_path):
        original = tmp_path / "original.json"
        original.write_text(json.dumps(VALID_REQUEST), encoding="utf-8")
        shown = {**VALID_REQUEST, "tools": [*VALID_REQUEST["tools"], {**VALID_REQUEST["tools"][0]}]}
        shown["tools"][1]["name"] = "shell"
        done = run(
            "check-request",
            "--batch",
            "--input",
            str(original),
            stdin=jsonl([VALID_REQUEST, shown]),
        )
        first, second = answers(done)
        assert first["warnings"] == []
        assert [w["path"] for w in second["warnings"]] == ["/tools/1"]
        assert second == {
            **single_answer(tmp_path, "check-request", shown, "--input", str(original)),
            "line": 2,
        }


class TestUsage:
    def test_a_file_and_batch_together(self, tmp_path):
        path = tmp_path / "doc.json"
        path.write_text("{}", encoding="utf-8")
        done = run("check-config", str(path), "--batch", stdin=jsonl([VALID_CONFIG]))
        assert done.returncode == 2 and done.stdout == ""
        assert "--batch" in done.stderr

    def test_neither_a_file_nor_batch(self):
        done = run("check-amendment")
        assert done.returncode == 2 and done.stdout == ""
        assert "--batch" in done.stderr

    def test_an_unusable_option_stops_before_the_first_answer(self):
        done = run("check-config", "--batch", "--loop", "Bad Name", stdin=jsonl([VALID_CONFIG] * 3))
        assert done.returncode == 2 and done.stdout == ""
        assert "Bad Name" in done.stderr

    def test_an_unreadable_input_file_stops_before_the_first_answer(self, tmp_path):
        missing = str(tmp_path / "missing.json")
        done = run("check-request", "--batch", "--input", missing, stdin=jsonl([VALID_REQUEST]))
        assert done.returncode == 2 and done.stdout == ""
        assert "missing.json" in done.stderr


class TestRulesAreNamed:
    """Every finding and every amendment error says which rule fired."""

    def test_config_findings(self):
        done = run("check-config", "--batch", stdin=jsonl([EMPTY_SOURCE, UNKNOWN_SCOPE]))
        empty, scope = answers(done)
        assert [(e["path"], e["rule"]) for e in empty["errors"]] == [
            ("/pre_llm_hook/source", "adf.source")
        ]
        assert [(e["path"], e["rule"]) for e in scope["errors"]] == [
            ("/pre_llm_hook/scope", "adf.scope")
        ]

    def test_config_warnings(self):
        extra = {**VALID_CONFIG, "pre_llm_hook": {**VALID_CONFIG["pre_llm_hook"], "note": 1}}
        [answer] = answers(run("check-config", "--batch", stdin=jsonl([extra])))
        assert [(w["path"], w["rule"]) for w in answer["warnings"]] == [
            ("/pre_llm_hook/note", "adf.unknown_key")
        ]

    def test_request_findings_name_the_numbered_rule(self):
        # adf.md §3: rule 3 is the messages array and its roles; rule 7 the options.
        bad_options = {**VALID_REQUEST, "options": {"temperature": 3}}
        done = run("check-request", "--batch", stdin=jsonl([TOOL_ROLE, NO_MESSAGES, bad_options]))
        role, empty, options = answers(done)
        assert [(e["path"], e["rule"]) for e in role["errors"]] == [
            ("/messages/0/role", "adf.request.3")
        ]
        assert [(e["path"], e["rule"]) for e in empty["errors"]] == [("/messages", "adf.request.3")]
        assert [(e["path"], e["rule"]) for e in options["errors"]] == [
            ("/options/temperature", "adf.request.7")
        ]

    @pytest.mark.parametrize(
        ("amendment", "rule", "name"),
        [
            (7, "V1", "RequestCompositionError"),
            ({"use": {"add": [{"id": "log", "kind": "history"}]}}, "V2", "RequestCompositionError"),
            ({"activeTools": ["missing"]}, "V9", "RequestCompositionError"),
            ({"inputBudget": {"optimizeAt": 0}}, "V10", "TypeError"),
            ({"inputBudget": {"optimizeAt": 10, "max": 5}}, "V11", "TypeError"),
        ],
    )
    def test_amendment_errors(self, amendment, rule, name):
        document = {"baseline": BASELINE, "amendment": amendment}
        [answer] = answers(run("check-amendment", "--batch", stdin=jsonl([document])))
        assert answer["valid"] is False
        assert (answer["error"]["name"], answer["error"]["rule"]) == (name, rule)

    def test_a_malformed_amendment_document(self):
        [answer] = answers(run("check-amendment", "--batch", stdin=jsonl([NO_BASELINE])))
        error = answer["error"]
        assert (error["name"], error["rule"]) == ("InvalidCheckDocument", "document")
        assert [(d["path"], d["rule"]) for d in error["diagnostics"]] == [("/baseline", "document")]


def test_thousands_of_lines_in_one_process():
    lines = [VALID_CONFIG if n % 3 else EMPTY_SOURCE for n in range(3000)]
    lines[1500] = "{oops"
    done = run("check-config", "--batch", stdin=jsonl(lines))
    assert done.returncode == 1
    results = answers(done)
    assert [r["line"] for r in results] == list(range(1, 3001))
    expected = [n % 3 != 0 and n != 1500 for n in range(3000)]
    assert [r["valid"] for r in results] == expected


def test_each_answer_comes_before_the_next_line_is_sent():
    """A caller can converse with the batch line by line: stdin is not read to its end first."""
    process = subprocess.Popen(
        [*PROGRAM, "check-request", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    waiting = selectors.DefaultSelector()
    waiting.register(process.stdout, selectors.EVENT_READ)
    try:
        for number, document in enumerate([VALID_REQUEST, TOOL_ROLE, VALID_REQUEST], start=1):
            process.stdin.write(json.dumps(document).encode() + b"\n")
            process.stdin.flush()
            assert waiting.select(timeout=60), f"no answer to line {number} while stdin is open"
            answer = json.loads(process.stdout.readline())
            assert (answer["line"], answer["valid"]) == (number, document is VALID_REQUEST)
        process.stdin.close()
        assert process.wait(timeout=60) == 1
    finally:
        waiting.close()
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()
