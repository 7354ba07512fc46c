"""A real workspace on disk and a runner over it; every test ends with no worker left behind."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.core.workspace.folder import Workspace
from studio.engine.process_control import children_of
from studio.engine.runner import Runner

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


def make_workspace(root: Path, *, timeout_ms: int = 1000, sys_lambda: bool = False) -> Workspace:
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


def run(coro):
    return asyncio.run(coro)


def live_descendants(pid: int) -> set[int]:
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in children_of(stack.pop()):
            if _alive(child):
                found.add(child)
                stack.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path / "ws")


@pytest.fixture(autouse=True)
def no_worker_left_behind() -> Iterator[None]:
    before = live_descendants(os.getpid())
    yield
    assert live_descendants(os.getpid()) <= before, "a test left a process running"


class LiveRunner:
    """A runner on its own event loop thread, so a test can keep one across many runs."""

    def __init__(self, workspace: Workspace) -> None:
        self.loop = asyncio.new_event_loop()
        self.runner = Runner(workspace)

    def run(self, sample: str = "basic", **kwargs):
        return self.loop.run_until_complete(self.runner.run(sample, **kwargs))

    def call(self, coro):
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        self.loop.run_until_complete(self.runner.close())
        self.loop.close()


@pytest.fixture
def runner(workspace: Workspace) -> Iterator[LiveRunner]:
    live = LiveRunner(workspace)
    yield live
    live.close()
