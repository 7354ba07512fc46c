"""A TypeScript hook's ``adf`` calls from the command line: ``run --json`` lists every call (the
nested ones too), the text report lists them one a line, a hook that fails after some calls
still reports them, and the record keeps them without their content."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.e2e.test_run_cli import studio
from tests.support.paths import BUNDLED_WORKSPACE as BUNDLED

SECRET = "S3CRET-LOG-LINE"

HOOK = """\
export async function main(input: any) {
  const log = await adf.fs_read({ path: 'orders/4821.log' });
  const topic = await adf.sys_lambda({ source: 'lib/topics.py:topic', args: { text: log.text } });
  try {
    await adf.attestation_issue({});
  } catch (e: any) {
    if (e.code !== 'REQUIRES_AUTHORIZED_CODE') throw e;
  }
  return { ...input.request, system: `${input.request.system} Topic: ${topic.topic}` };
}

export async function fails(input: any) {
  await adf.fs_read({ path: 'orders/4821.log' });
  throw new Error('gave up');
}
"""

TOPICS = (
    "def topic(args):\n    return {'topic': 'refunds' if 'refund' in args['text'] else 'other'}\n"
)


@pytest.fixture
def workspace(tmp_path) -> str:
    target = tmp_path / "ws"
    shutil.copytree(BUNDLED, target, ignore=shutil.ignore_patterns(".hookstudio", "__pycache__"))
    (target / "lib" / "adf_hook.ts").write_text(HOOK)
    (target / "lib" / "topics.py").write_text(TOPICS)
    agent = json.loads((target / "agent.json").read_text())
    agent["tools"] = [
        {"name": "fs_read", "enabled": True, "restricted": False},
        {"name": "attestation_issue", "enabled": True, "restricted": False},
    ]
    agent["code_execution"] = {"sys_lambda": True}
    (target / "agent.json").write_text(json.dumps(agent))
    sample = json.loads((target / "samples" / "support-ticket.json").read_text())
    sample["adf"] = {"replies": {"fs_read": {"result": {"text": f"refund issued {SECRET}"}}}}
    (target / "samples" / "support-ticket.json").write_text(json.dumps(sample))
    return str(target)


def run(workspace: str, hook: str, *extra: str):
    return studio("run", workspace, "--sample", "support-ticket", "--hook", hook, *extra)


def test_run_json_lists_every_call(workspace):
    done = run(workspace, "lib/adf_hook.ts", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["request"]["system"].endswith("Topic: refunds")
    calls = result["calls"]
    assert [(c["method"], c["gate"], c["answered_by"], c["depth"]) for c in calls] == [
        ("fs_read", "allowed", "sample /adf/replies/fs_read", 0),
        ("sys_lambda", "allowed", "lib/topics.py:topic", 0),
        ("attestation_issue", "authorization", None, 0),
    ]
    assert calls[0]["args"] == {"path": "orders/4821.log"}
    assert calls[1]["reply"] == {"topic": "refunds"}
    assert calls[2]["error"]["code"] == "REQUIRES_AUTHORIZED_CODE"
    assert all(c["duration_ms"] >= 0 for c in calls)


def test_the_text_report_lists_the_calls(workspace):
    done = run(workspace, "lib/adf_hook.ts")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    listed = [line for line in lines if "fs_read" in line or "sys_lambda" in line]
    assert len(listed) >= 2
    assert any("REQUIRES_AUTHORIZED_CODE" in line for line in lines)


def test_calls_before_a_failure_are_reported(workspace):
    done = run(workspace, "lib/adf_hook.ts:fails", "--json")
    assert done.returncode == 3, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "turn_error"
    assert [c["method"] for c in result["calls"]] == ["fs_read"]
    assert result["calls"][0]["reply"] == {"text": f"refund issued {SECRET}"}


def test_the_record_keeps_the_calls_without_their_content(workspace):
    assert run(workspace, "lib/adf_hook.ts").returncode == 0
    done = studio("records", workspace, "--jsonl")
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    record = json.loads(line)
    assert record["calls"] == [
        {
            "method": "fs_read",
            "gate": "allowed",
            "answered_by": "sample /adf/replies/fs_read",
            "code": None,
            "depth": 0,
            "duration_ms": record["calls"][0]["duration_ms"],
        },
        {
            "method": "sys_lambda",
            "gate": "allowed",
            "answered_by": "lib/topics.py:topic",
            "code": None,
            "depth": 0,
            "duration_ms": record["calls"][1]["duration_ms"],
        },
        {
            "method": "attestation_issue",
            "gate": "authorization",
            "answered_by": None,
            "code": "REQUIRES_AUTHORIZED_CODE",
            "depth": 0,
            "duration_ms": record["calls"][2]["duration_ms"],
        },
    ]
    content_free = {k: v for k, v in record.items() if k != "payload"}
    assert SECRET not in json.dumps(content_free)
    assert SECRET in json.dumps(record["payload"]["calls"])
