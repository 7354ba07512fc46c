"""`hook-studio run --hook lib/x.ts --json` as a script calls it: a TypeScript pre-LLM hook on a
copy of the bundled workspace, its result and a turn error naming the line in the .ts file."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.e2e.test_run_cli import studio
from tests.support.paths import BUNDLED_WORKSPACE as BUNDLED

POLICY = """\
type Tool = { name: string };

export function transform({ request }: { request: { tools: Tool[] } }) {
  console.warn('dropping shell');
  return { ...request, tools: request.tools.filter((t: Tool) => t.name !== 'shell') };
}

export function broken(input: unknown) {
  const value: any = undefined;
  return value.request;
}
"""


@pytest.fixture
def workspace(tmp_path) -> str:
    target = tmp_path / "ws"
    shutil.copytree(BUNDLED, target, ignore=shutil.ignore_patterns(".hookstudio", "__pycache__"))
    (target / "lib" / "policy.ts").write_text(POLICY)
    return str(target)


def test_a_typescript_hook_runs_from_the_command_line(workspace):
    done = studio(
        "run",
        workspace,
        "--sample",
        "support-ticket",
        "--hook",
        "lib/policy.ts:transform",
        "--json",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ok"
    assert "shell" not in [t["name"] for t in result["request"]["tools"]]
    assert result["stderr"] == "[warn] dropping shell\n"
    assert any("ADF's hook runner discards" in w["message"] for w in result["warnings"])


def test_a_typescript_turn_error_names_the_line_from_the_command_line(workspace):
    done = studio(
        "run", workspace, "--sample", "support-ticket", "--hook", "lib/policy.ts:broken", "--json"
    )
    assert done.returncode == 3, done.stdout + done.stderr
    error = json.loads(done.stdout)["turn_error"]
    assert error["kind"] == "exception"
    assert error["traceback"][-1] == {
        "file": "lib/policy.ts",
        "line": 10,
        "column": 16,
        "function": "broken",
        "code": "return value.request;",
    }
    text = studio("run", workspace, "--sample", "support-ticket", "--hook", "lib/policy.ts:broken")
    assert "lib/policy.ts:10:16 in broken" in text.stdout
