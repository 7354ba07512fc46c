"""`hook-studio run`, `records` and `bench` as scripts call them, on a copy of the bundled
workspace."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import BUNDLED_WORKSPACE as BUNDLED


def studio(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio", *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def workspace(tmp_path) -> str:
    target = tmp_path / "ws"
    shutil.copytree(BUNDLED, target, ignore=shutil.ignore_patterns(".hookstudio"))
    return str(target)


def test_run_json_ok(workspace):
    done = studio("run", workspace, "--sample", "support-ticket", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) == {
        "status",
        "request",
        "inspection",
        "turn_error",
        "stdout",
        "stderr",
        "warnings",
        "calls",
        "duration_ms",
    }
    assert result["status"] == "ok" and result["turn_error"] is None
    assert [t["name"] for t in result["request"]["tools"]] == ["fs_read", "fs_write"]


def test_run_not_applied_exits_zero(workspace):
    done = studio("run", workspace, "--sample", "support-ticket", "--loop", "reviewer", "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["status"] == "not_applied"


def test_run_turn_error_exits_three(workspace):
    Path(workspace, "lib", "bad.py").write_text("def main(p):\n    return p\n")
    done = studio("run", workspace, "--sample", "support-ticket", "--hook", "lib/bad.py", "--json")
    assert done.returncode == 3
    error = json.loads(done.stdout)["turn_error"]
    assert error["label"] == "Turn error"
    assert error["kind"] == "invalid_result" and error["path"] == "/request"


def test_run_text_names_the_traceback_frame(workspace):
    Path(workspace, "lib", "typo.py").write_text(
        "def main(payload):\n    return payload['requets']\n"
    )
    done = studio("run", workspace, "--sample", "support-ticket", "--hook", "lib/typo.py")
    assert done.returncode == 3
    assert "KeyError" in done.stdout and "lib/typo.py:2 in main" in done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["run", "/no/such/folder", "--sample", "x"],
        ["run", "WS", "--sample", "no-such-sample"],
        ["run", "WS"],
    ],
)
def test_usage_problems_exit_two(workspace, args):
    done = studio(*[workspace if a == "WS" else a for a in args])
    assert done.returncode == 2
    assert "Traceback" not in done.stderr


def test_every_run_is_recorded_newest_first(workspace):
    studio("run", workspace, "--sample", "support-ticket")
    studio("run", workspace, "--sample", "step-escalated")
    done = studio("records", workspace, "--jsonl")
    assert done.returncode == 0
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["contract"] for r in rows] == ["step", "pre_llm"]
    assert rows[0]["inspection"]["sealedRequestId"].startswith("request_")


def test_bench_prints_its_figures(workspace):
    done = studio("bench", workspace, "--sample", "support-ticket", "-n", "20", "--json")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    expected = {
        "n",
        "concurrency",
        "p50_ms",
        "p90_ms",
        "p99_ms",
        "max_ms",
        "runs_per_s",
        "failures",
    }
    assert expected <= set(figures)
    assert figures["n"] == 20 and figures["failures"] == 0
    assert 0 < figures["p50_ms"] <= figures["p90_ms"] <= figures["p99_ms"] <= figures["max_ms"]
