"""The sandbox as the command line shows it. Where the kernel refuses it, hooks still run, with
process isolation alone, and every front end says so: ``run --json`` carries the notice in
``warnings``, the text report prints it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.workspaces import copy_bundled_workspace

REFUSING = (sys.executable, "-m", "tests.support.no_namespaces")
STUDIO = (sys.executable, "-m", "studio")


@pytest.fixture
def workspace(tmp_path):
    return copy_bundled_workspace(tmp_path / "ws")


def run(*args: str, refused: bool) -> subprocess.CompletedProcess[str]:
    prefix = REFUSING if refused else ()
    return subprocess.run(
        [*prefix, *STUDIO, "run", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("hook", ["lib/policy.py:transform", "lib/policy.ts:transform"])
def test_without_namespaces_hooks_run_and_the_json_says_the_sandbox_is_off(workspace, hook):
    args = (str(workspace), "--sample", "support-ticket", "--hook", hook, "--json")
    sandboxed = json.loads(run(*args, refused=False).stdout)
    done = run(*args, refused=True)
    assert done.returncode == 0, done.stderr
    fallback = json.loads(done.stdout)
    assert sandboxed["status"] == fallback["status"] == "ok"
    assert sandboxed["warnings"] == []
    (notice,) = [w["message"] for w in fallback["warnings"]]
    assert notice.startswith("hooks run without the sandbox: the kernel refused")
    assert fallback["request"] == sandboxed["request"]


def test_the_text_report_prints_the_notice(workspace):
    done = run(
        str(workspace),
        "--sample",
        "support-ticket",
        "--hook",
        "lib/policy.py:transform",
        refused=True,
    )
    assert done.returncode == 0, done.stderr
    assert "hooks run without the sandbox" in done.stdout + done.stderr


def test_a_hook_writing_to_every_process_it_sees_cannot_reach_the_json_report(workspace):
    probes = Path(__file__).parents[1] / "support" / "sandbox_probes.py"
    (workspace / "lib" / "probes.py").write_text(probes.read_text())
    done = run(
        str(workspace),
        "--sample",
        "support-ticket",
        "--hook",
        "lib/probes.py:kill_everything_visible",
        "--json",
        refused=False,
    )
    assert done.returncode == 0, done.stderr
    # The whole of stdout is the one report: no forged line before or after it.
    report = json.loads(done.stdout)
    assert report["status"] == "ok" and report["warnings"] == []
    assert "forged" not in done.stdout.replace(report["request"]["system"], "")
