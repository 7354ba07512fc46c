"""Workspaces on disk: a small one written from scratch, and a writable copy of the bundled one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from studio.core.workspace.folder import Workspace
from tests.support.paths import BUNDLED_WORKSPACE

REQUEST = {
    "system": "You are a support agent.",
    "messages": [
        {"role": "user", "content": "Read the log."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "fs_read", "input": {"p": "a"}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "ok"}],
        },
    ],
    "tools": [
        {"name": "fs_read", "description": "Read", "input_schema": {"type": "object"}},
        {"name": "shell", "description": "Run", "input_schema": {"type": "object"}},
    ],
    "options": {"temperature": 0.7},
}


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


# A hook expected to end "ok" gets a deadline no busy machine reaches: on a shared CI machine a
# worker's start, a Node host's or a TypeScript transpile can take seconds, and a 1 s deadline
# there failed runs that had nothing wrong with them. A test that wants a deadline to be reached
# asks for SHORT_TIMEOUT_MS (the smallest a hook may have), for that hook only where it can.
GENEROUS_TIMEOUT_MS = 30_000
SHORT_TIMEOUT_MS = 1000


def make_workspace(
    root: Path, *, timeout_ms: int = GENEROUS_TIMEOUT_MS, sys_lambda: bool = False
) -> Workspace:
    """A pre-LLM hook that drops the ``shell`` tool, one sample (``basic``) and one declared
    environment variable."""
    write_json(
        root / "agent.json",
        {
            "pre_llm_hook": {"source": "lib/policy.py:transform", "timeout_ms": timeout_ms},
            "limits": {"execution_timeout_ms": 60000},
            "code_execution": {"sys_lambda": sys_lambda},
        },
    )
    write_json(root / "hookstudio.json", {"version": 1, "env": {"WORKSPACE_VAR": "declared"}})
    write_json(root / "samples" / "basic.json", {"loop": "main", "request": REQUEST})
    (root / "lib").mkdir(exist_ok=True)
    (root / "lib" / "policy.py").write_text(
        "def transform(payload):\n"
        "    request = payload['request']\n"
        "    return {**request, 'tools': [t for t in request['tools'] if t['name'] != 'shell']}\n"
    )
    return Workspace.open(root)


def copy_bundled_workspace(target: Path) -> Path:
    """The bundled workspace without its records or bytecode, so a test may change it freely."""
    shutil.copytree(
        BUNDLED_WORKSPACE, target, ignore=shutil.ignore_patterns(".hookstudio", "__pycache__")
    )
    return target


def without_sandbox(root: Path) -> None:
    """Turn the sandbox off in ``root``'s hookstudio.json, for a test whose hook (or chosen
    Node) must write where the sandbox forbids it."""
    path = root / "hookstudio.json"
    settings = json.loads(path.read_text()) if path.exists() else {"version": 1}
    write_json(path, {**settings, "sandbox": {"enabled": False}})


# A request of one tool round trip that every request rule accepts.
TOOL_LOOP_REQUEST = {
    "system": "Be brief.",
    "messages": [
        {"role": "user", "content": "Read the file."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "fs_read", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
    ],
    "tools": [{"name": "fs_read", "description": "Read", "input_schema": {"type": "object"}}],
    "options": {"temperature": 0.2},
}
