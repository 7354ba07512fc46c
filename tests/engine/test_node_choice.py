"""Which Node runs TypeScript hooks: HOOK_STUDIO_NODE, then the studio's settings, then the
bundled one; each bad choice named exactly; and a real run on a second Node (a wrapper script
around the bundled one that leaves a mark), taken up by the next run while a run already going
finishes on the old Node."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from studio.core.workspace.folder import Workspace
from studio.engine.node_binary import (
    NODE_VARIABLE,
    NodeUnavailable,
    bundled_node,
    find_node,
    inspect_node,
    node_choice,
    node_setting,
    use_node_setting,
)
from tests.support.processes import live_descendants
from tests.support.runners import LiveRunner
from tests.support.workspaces import copy_bundled_workspace, without_sandbox

BUNDLED = bundled_node()
STUDIO = (sys.executable, "-m", "studio")


@pytest.fixture(autouse=True)
def bundled_setting() -> Iterator[None]:
    """Each test starts, and leaves the process, on the bundled Node."""
    use_node_setting("")
    yield
    use_node_setting("")


def script(path: Path, text: str, mode: int = 0o755) -> str:
    path.write_text(text)
    path.chmod(mode)
    return str(path)


def wrapper(folder: Path) -> tuple[str, Path]:
    """A second Node: a shell script that notes each start (its pid and arguments) in a marker
    file, then becomes the bundled Node."""
    marker = folder / "starts.txt"
    path = script(
        folder / "node-wrapper", f'#!/bin/sh\necho "$$ $*" >> {marker}\nexec {BUNDLED} "$@"\n'
    )
    return path, marker


def host_starts(marker: Path) -> list[int]:
    """The pids of the Node hosts the wrapper started (its probes of the version are not hosts)."""
    if not marker.exists():
        return []
    return [int(line.split()[0]) for line in marker.read_text().splitlines() if "host.mjs" in line]


# ---- precedence --------------------------------------------------------------------------------


def test_the_environment_beats_the_settings_which_beat_the_bundled_node(tmp_path):
    chosen, _ = wrapper(tmp_path)
    env_node = str(tmp_path / "env-node")
    both = node_choice({NODE_VARIABLE: env_node}, chosen)
    assert (both.path, both.origin) == (env_node, "environment")
    assert both.named == f"{NODE_VARIABLE}={env_node}"
    setting = node_choice({}, chosen)
    assert (setting.path, setting.origin) == (chosen, "settings")
    bundled = node_choice({}, "")
    assert (bundled.path, bundled.origin) == (BUNDLED, "bundled")


def test_the_process_follows_the_setting_it_is_given(tmp_path):
    chosen, _ = wrapper(tmp_path)
    use_node_setting(f"  {chosen} ")
    assert node_setting() == chosen
    assert find_node({}).path == chosen
    assert find_node({NODE_VARIABLE: BUNDLED or ""}).path == BUNDLED
    use_node_setting("")
    assert find_node({}).path == BUNDLED


def test_a_bare_command_name_is_looked_up_on_path(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    named = script(folder / "mynode", f'#!/bin/sh\nexec {BUNDLED} "$@"\n')
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    assert node_choice({}, "mynode").path == named


# ---- bad choices, each named -------------------------------------------------------------------


def test_a_missing_file_is_named(tmp_path):
    missing = tmp_path / "nowhere" / "node"
    with pytest.raises(NodeUnavailable, match=rf"\({missing}\) does not exist; choose another"):
        find_node({}, str(missing))


def test_a_folder_is_not_a_program(tmp_path):
    with pytest.raises(NodeUnavailable, match="is a folder, not a program"):
        find_node({}, str(tmp_path))


def test_a_file_that_is_not_executable_is_named(tmp_path):
    plain = script(tmp_path / "node", f'#!/bin/sh\nexec {BUNDLED} "$@"\n', mode=0o644)
    with pytest.raises(NodeUnavailable, match="is not executable"):
        find_node({}, plain)


def test_a_too_old_node_is_named_with_the_version_it_needs(tmp_path):
    old = script(tmp_path / "node", "#!/bin/sh\necho 22.12.9 function\n")
    with pytest.raises(NodeUnavailable, match=r"is Node 22\.12\.9; .* need Node 22\.13 or newer"):
        find_node({}, old)


def test_a_node_without_type_stripping_is_named(tmp_path):
    stripless = script(tmp_path / "node", "#!/bin/sh\necho 23.0.0 undefined\n")
    with pytest.raises(
        NodeUnavailable, match=r"is Node 23\.0\.0 without module\.stripTypeScriptTypes"
    ):
        inspect_node(stripless, "this Node")


def test_a_program_that_is_not_node_is_named(tmp_path):
    other = script(tmp_path / "node", "#!/bin/sh\necho hello\nexit 3\n")
    with pytest.raises(NodeUnavailable, match=r"did not answer as Node does \(exit code 3\)"):
        inspect_node(other)


def test_a_bad_setting_fails_the_run_with_the_reason_and_the_bundled_node_runs_again(tmp_path):
    root = copy_bundled_workspace(tmp_path / "ws")
    # The wrapper and the hook write their markers outside the workspace.
    without_sandbox(root)
    live = LiveRunner(Workspace.open(root))
    try:
        use_node_setting(str(tmp_path / "missing-node"))
        failed = live.run("step-escalated", hook="lib/prepare.ts")
        assert failed.status == "turn_error" and failed.turn_error.kind == "engine_failed"
        assert "the Node chosen in the studio's settings" in failed.turn_error.message
        assert "does not exist" in failed.turn_error.message
        use_node_setting("")
        assert live.run("step-escalated", hook="lib/prepare.ts").status == "ok"
    finally:
        live.close()


# ---- a real run on a second Node ---------------------------------------------------------------

WAITING_HOOK = """\
import { existsSync, writeFileSync } from 'node:fs';

export async function prepareStep(context: unknown) {
  writeFileSync(STARTED, 'started');
  while (!existsSync(GO)) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return undefined;
}
"""


def hosts_alive() -> set[int]:
    found = set()
    for pid in live_descendants(os.getpid()):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"host.mjs" in command:
            found.add(pid)
    return found


async def until(condition: Callable[[], bool], what: str, limit_s: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + limit_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"waited {limit_s} s for {what}"
        await asyncio.sleep(0.01)


def test_a_new_node_takes_the_next_run_while_a_run_going_finishes_on_the_old_one(tmp_path):
    chosen, marker = wrapper(tmp_path)
    started, go = tmp_path / "started", tmp_path / "go"
    root = copy_bundled_workspace(tmp_path / "ws")
    # The wrapper and the hook write their markers outside the workspace.
    without_sandbox(root)
    paths = f"const STARTED = {json.dumps(str(started))};\nconst GO = {json.dumps(str(go))};\n"
    (root / "lib" / "waits.ts").write_text(WAITING_HOOK + paths)
    live = LiveRunner(Workspace.open(root))
    runner = live.runner

    async def scenario() -> None:
        first = asyncio.ensure_future(runner.run("step-escalated", hook="lib/waits.ts"))
        await until(lambda: started.exists() or first.done(), "the first run to begin")
        assert not first.done(), first.result().turn_error
        (old_host,) = hosts_alive()
        use_node_setting(chosen)
        second = await runner.run("step-escalated", hook="lib/prepare.ts")
        assert second.status == "ok", second.turn_error
        (new_host,) = host_starts(marker)
        assert hosts_alive() == {old_host, new_host}
        assert not first.done()
        go.write_text("go")
        outcome = await first
        assert outcome.status == "ok", outcome.turn_error
        await until(lambda: old_host not in hosts_alive(), "the old host to end")
        third = await runner.run("step-escalated", hook="lib/prepare.ts")
        assert third.status == "ok" and host_starts(marker) == [new_host]

    try:
        live.call(scenario())
    finally:
        live.close()
    assert hosts_alive() == set()


def test_the_command_line_honours_the_settings_file_and_the_environment_overrides_it(tmp_path):
    chosen, marker = wrapper(tmp_path)
    root = copy_bundled_workspace(tmp_path / "ws")
    # The wrapper and the hook write their markers outside the workspace.
    without_sandbox(root)
    config = tmp_path / "config"
    settings = config / "hook-studio" / "hook-studio" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"version": 1, "changed": {"node": chosen}}))
    env = {k: v for k, v in os.environ.items() if k != NODE_VARIABLE}
    env["XDG_CONFIG_HOME"] = str(config)

    def run(environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*STUDIO, "run", str(root), "--sample", "step-escalated", "--hook", "lib/prepare.ts"],
            capture_output=True,
            text=True,
            env=environ,
            timeout=120,
            check=False,
        )

    done = run(env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(host_starts(marker)) == 1
    overridden = run({**env, NODE_VARIABLE: BUNDLED or ""})
    assert overridden.returncode == 0, overridden.stdout + overridden.stderr
    assert len(host_starts(marker)) == 1
