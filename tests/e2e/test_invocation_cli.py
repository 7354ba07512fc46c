"""Invocation preparation from the command line: ``run`` on the bundled samples and
``check-amendment --invocation``, as real processes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import BUNDLED_WORKSPACE

CHECK_KEYS = {"valid", "error", "explanation", "inspection", "effective", "warnings"}
BASELINE = {
    "contributors": ["persona", {"id": "desk", "kind": "droppable", "tools": ["refund"]}],
    "tools": ["search"],
    "activeTools": ["search", "refund"],
    "model": "standard-model",
}


def studio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio", *args], capture_output=True, text=True, timeout=120
    )


def write(tmp_path: Path, value: object) -> str:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)


class TestCheckAmendmentInvocation:
    def test_an_accepted_amendment_gives_the_child_baseline_and_no_record(self, tmp_path):
        doc = {
            "baseline": BASELINE,
            "invocation": {"tools": ["lookup"]},
            "amendment": {"use": {"remove": [{"id": "desk"}]}, "activeTools": ["lookup"]},
        }
        done = studio("check-amendment", "--invocation", write(tmp_path, doc))
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert set(answer) == CHECK_KEYS
        assert answer["valid"] is True
        assert answer["inspection"] is None
        assert answer["effective"]["contributors"] == ["persona"]
        assert answer["effective"]["activeTools"] == ["lookup"]

    def test_the_same_document_differs_from_the_step_path(self, tmp_path):
        # Removing the owner of an inherited active tool: V9 on the step path only.
        doc = {"baseline": BASELINE, "amendment": {"use": {"remove": [{"id": "desk"}]}}}
        path = write(tmp_path, doc)
        step = studio("check-amendment", path)
        invocation = studio("check-amendment", "--invocation", path)
        assert (step.returncode, json.loads(step.stdout)["error"]["rule"]) == (1, "V9")
        assert invocation.returncode == 0
        assert set(json.loads(step.stdout)) <= CHECK_KEYS

    def test_an_array_fails_v1_with_the_reference_message(self, tmp_path):
        done = studio(
            "check-amendment",
            "--invocation",
            write(tmp_path, {"baseline": BASELINE, "amendment": []}),
        )
        assert done.returncode == 1
        error = json.loads(done.stdout)["error"]
        assert error["rule"] == "V1"
        assert error["message"] == "Preparation callbacks must return an amendment object."
        assert error["diagnostics"][0]["contributor"] == "prepareStep"

    def test_a_malformed_document_is_named(self, tmp_path):
        done = studio("check-amendment", "--invocation", write(tmp_path, {"amendment": {}}))
        assert done.returncode == 1
        answer = json.loads(done.stdout)
        assert answer["error"]["name"] == "InvalidCheckDocument"
        assert answer["error"]["diagnostics"][0]["path"] == "/baseline"


class TestRun:
    def test_a_layered_run_prints_the_child_baseline_and_the_linked_steps(self, tmp_path):
        target = tmp_path / "ws"
        shutil.copytree(BUNDLED_WORKSPACE, target, ignore=shutil.ignore_patterns(".hookstudio"))
        done = studio("run", str(target), "--sample", "invocation-pipeline-review", "--json")
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert answer["status"] == "ok"
        steps = answer["inspection"]["steps"]
        assert steps[1]["previousRequestId"] == steps[0]["inspection"]["sealedRequestId"]
        assert answer["request"]["childBaseline"]["model"] == "review-model"

    def test_a_failing_invocation_exits_3(self, tmp_path):
        target = tmp_path / "ws"
        shutil.copytree(BUNDLED_WORKSPACE, target, ignore=shutil.ignore_patterns(".hookstudio"))
        done = studio("run", str(target), "--sample", "invocation-consensus-failing")
        assert done.returncode == 3
        assert "Request preparation failed: callback." in done.stdout

    def test_a_failed_layer_is_named_with_the_decisions_before_it(self, tmp_path):
        target = tmp_path / "ws"
        shutil.copytree(BUNDLED_WORKSPACE, target, ignore=shutil.ignore_patterns(".hookstudio"))
        done = studio("run", str(target), "--sample", "invocation-swarm-refund")
        assert done.returncode == 3
        lines = done.stdout.splitlines()
        assert lines[0].startswith(
            "Turn error (invalid_composition, reason callback): child step 1:"
        )
        assert lines[2:5] == [
            "  invocation: accepted",
            "  step 0 (initial): accepted",
            "  step 1 (tool-result): failed: V9",
        ]


def test_batch_checks_take_the_invocation_flag():
    lines = [
        {"baseline": BASELINE, "amendment": []},
        {"baseline": BASELINE, "amendment": {"use": {"remove": [{"id": "desk"}]}}},
    ]
    done = subprocess.run(
        [sys.executable, "-m", "studio", "check-amendment", "--invocation", "--batch"],
        input="\n".join(json.dumps(line) for line in lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(a["line"], a["valid"]) for a in answers] == [(1, False), (2, True)]
    assert answers[0]["error"]["rule"] == "V1"
