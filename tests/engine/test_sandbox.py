"""The sandbox around every Python hook call: what a hook can see, write, signal and reach.

These tests need a kernel that allows unprivileged user namespaces (as on this project's CI);
the fallback without them is tested in ``tests/e2e/test_sandbox_fallback.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.core.records.store import RecordStore
from studio.core.workspace.folder import Workspace
from studio.engine.fork_server import SPARES
from tests.support.processes import alive, children, live_descendants, named, wait_for
from tests.support.runners import LiveRunner
from tests.support.workspaces import REQUEST, SHORT_TIMEOUT_MS, make_workspace, write_json

PROBES = Path(__file__).parents[1] / "support" / "sandbox_probes.py"
SECRETS = {
    "OPENAI_API_KEY": "sk-test-0penai-secret-value",
    "ANTHROPIC_API_KEY": "sk-ant-test-secret-value",
    "AWS_SECRET_ACCESS_KEY": "aws-test-secret-value",
    "HOOKSTUDIO_TEST_TOKEN": "token-test-secret-value",
}


@pytest.fixture
def probes(workspace: Workspace) -> Workspace:
    shutil.copy(PROBES, workspace.root / "lib" / "probes.py")
    return workspace


@pytest.fixture
def live(probes: Workspace) -> Iterator[LiveRunner]:
    runner = LiveRunner(probes)
    yield runner
    runner.close()


def reported(outcome) -> dict:
    assert outcome.status == "ok", outcome.turn_error
    return json.loads(outcome.result["system"])


def probe(live: LiveRunner, function: str, sample: str = "basic") -> dict:
    return reported(live.run(sample, hook=f"lib/probes.py:{function}"))


def python_runtime(live: LiveRunner):
    return next(iter(live.runner._runtimes.values()))


def test_the_sandbox_is_on_and_no_warning_says_otherwise(live):
    outcome = live.run()
    assert outcome.status == "ok"
    assert python_runtime(live)._host.sandbox_active
    assert outcome.warnings == []


def test_a_hook_sees_only_its_own_processes(live):
    seen = probe(live, "processes")
    # The hook is the second process of a namespace of its own; the first only waits for it.
    assert (seen["pid"], seen["ppid"]) == (2, 1)
    assert seen["visible"] == [1, 2]


def _namespace_pids(pid: int) -> list[int]:
    """``pid``'s number in each PID namespace it is in, outermost first; none once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            line = next(line for line in f if line.startswith("NSpid:"))
    except OSError:
        return []
    return [int(number) for number in line.split()[1:]]


def _capabilities(pid: int) -> set[int]:
    """The distinct values of ``pid``'s permitted and effective capability sets."""
    with open(f"/proc/{pid}/status") as f:
        return {int(line.split()[1], 16) for line in f if line.startswith(("CapPrm", "CapEff"))}


def test_a_spare_is_two_processes_the_first_of_its_namespace_a_child_of_the_server(live):
    assert live.run().status == "ok"
    server = python_runtime(live)._host._process.pid
    # The spares the engine holds: the run's own worker, which may still be ending after its
    # answer arrived, is not among them.
    spares = live.hold_spares(SPARES)
    for spare in spares:
        # No process between the server and the namespace: its first process is the server's
        # child, and the spare's own process is the second and last.
        assert spare in children(server)
        assert _namespace_pids(spare)[1:] == [1]
        # The first, which only waits, holds no capability either.
        wait_for(lambda spare=spare: _capabilities(spare) == {0})
        (process,) = children(spare)
        assert _namespace_pids(process)[1:] == [2]
        assert children(process) == []
    # Besides the spares, the server has one child: the process that forks their sandboxes.
    wait_for(lambda: len([pid for pid in children(server) if alive(pid)]) == SPARES + 1)


def test_a_server_whose_sandbox_maker_died_ends_and_the_next_run_gets_a_new_one(live):
    assert live.run().status == "ok"
    server = python_runtime(live)._host._process.pid
    (maker,) = [pid for pid in children(server) if len(_namespace_pids(pid)) == 1]
    os.kill(maker, signal.SIGKILL)
    wait_for(lambda: not alive(server))
    assert live.run().status == "ok"
    assert python_runtime(live)._host._process.pid != server


def test_a_hook_holds_no_capability_and_can_gain_none(live):
    # Every set empty, the bounding set too (what a program it runs could gain), and no program
    # it runs can gain privileges.
    seen = probe(live, "privileges")
    capability_sets = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
    assert {name: seen[name] for name in capability_sets} == dict.fromkeys(
        capability_sets, "0000000000000000"
    )
    assert seen["NoNewPrivs"] == "1"


def test_a_hook_cannot_signal_or_write_to_any_process_of_the_studio(live):
    assert live.run().status == "ok"
    server_pid = python_runtime(live)._host._process.pid
    seen = probe(live, "kill_everything_visible")
    # It can name only the waiting first process, which ignores its signals and shares nothing.
    assert {key.split(":")[0] for key in seen} == {"1"}
    assert seen["1:fd1"].startswith("refused") and seen["1:fd2"].startswith("refused")
    host = python_runtime(live)._host
    assert host._process.pid == server_pid and host.running
    assert live.run().status == "ok"


def test_a_hook_cannot_write_the_workspace_or_reach_the_records(probes):
    store = RecordStore.open(probes.root)
    runner = LiveRunner(probes)
    runner.runner.store = store
    try:
        runner.run()
        seen = probe(runner, "writes")
        second = probe(runner, "writes")
    finally:
        runner.close()
    assert seen["workspace"] == "refused: Read-only file system"
    assert seen["source"] == "refused: Read-only file system"
    # The state folder is an empty, read-only directory inside the sandbox.
    assert seen["state_listing"] == []
    assert seen["records"].startswith("refused") and seen["delete_records"].startswith("refused")
    assert seen["remount"].startswith("refused") and seen["unmount_proc"].startswith("refused")
    assert not (probes.root / "written.txt").exists()
    assert "def transform" in (probes.root / "lib" / "policy.py").read_text()
    # Every run is recorded, the probes' own included.
    with sqlite3.connect(probes.root / ".hookstudio" / "records.sqlite3") as db:
        assert db.execute("select count(*) from decisions").fetchone()[0] == 3
    # /tmp is writable and private to each call: the second call does not see the first's file.
    assert seen["tmp"] == "done" and second["tmp"] == "done"
    assert "hook.txt" not in second["tmp_before"]


def test_secrets_of_the_studio_reach_a_hook_by_no_route(probes, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    store = RecordStore.open(probes.root)
    runner = LiveRunner(probes)
    runner.runner.store = store
    try:
        outcome = runner.run(hook="lib/probes.py:environments")
    finally:
        runner.close()
    seen = reported(outcome)
    text = json.dumps(seen) + outcome.model_dump_json()
    records = b"".join(p.read_bytes() for p in (probes.root / ".hookstudio").glob("records*"))
    for value in SECRETS.values():
        assert value not in text
        assert value.encode() not in records
    assert seen["own"]["WORKSPACE_VAR"] == "declared"
    assert seen["1"] == "refused: Permission denied"


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()[1]
    server.close()


def port_sample(workspace: Workspace, port: int) -> None:
    write_json(
        workspace.root / "samples" / "port.json",
        {"loop": "main", "request": {**REQUEST, "system": str(port)}},
    )


def test_the_network_is_refused_unless_the_workspace_enables_it(probes, listener):
    port_sample(probes, listener)
    runner = LiveRunner(probes)
    try:
        refused = probe(runner, "connect", "port")
        settings = json.loads((probes.root / "hookstudio.json").read_text())
        write_json(probes.root / "hookstudio.json", {**settings, "sandbox": {"network": True}})
        allowed = probe(runner, "connect", "port")
    finally:
        runner.close()
    assert refused["loopback"] == "refused: Connection refused"
    assert allowed["loopback"] == "done: connected"


def test_the_agents_own_network_switch_enables_it(probes, listener):
    port_sample(probes, listener)
    agent = json.loads((probes.root / "agent.json").read_text())
    agent["code_execution"]["network"] = True
    write_json(probes.root / "agent.json", agent)
    runner = LiveRunner(probes)
    try:
        assert probe(runner, "connect", "port")["loopback"] == "done: connected"
    finally:
        runner.close()


def test_the_sandbox_can_be_turned_off_in_hookstudio_json(probes):
    settings = json.loads((probes.root / "hookstudio.json").read_text())
    write_json(probes.root / "hookstudio.json", {**settings, "sandbox": {"enabled": False}})
    runner = LiveRunner(probes)
    try:
        seen = probe(runner, "processes")
        warnings = runner.run().warnings
    finally:
        runner.close()
    assert seen["pid"] != 2 and len(seen["visible"]) > 2
    assert warnings == []


def test_a_fork_bomb_stays_in_its_namespace_and_ends_with_it(live):
    outcome = live.run(
        hook_config={"source": "lib/probes.py:fork_bomb", "timeout_ms": SHORT_TIMEOUT_MS}
    )
    assert outcome.status == "turn_error" and outcome.turn_error.kind == "timeout"
    # The fork server, the process that forks its sandboxes, and its spares only (each spare:
    # its namespace's init and its process).
    wait_for(lambda: len(live_descendants(os.getpid())) <= 2 + SPARES * 2)
    assert live.run().status == "ok"


def test_a_daemon_started_by_a_hook_ends_with_the_call(live):
    assert live.run(hook="lib/probes.py:daemon_then_return").status == "ok"
    wait_for(lambda: not named(live_descendants(os.getpid()), "sleep"))


def namespaces(pid: int | str) -> dict[str, str]:
    return {kind: os.readlink(f"/proc/{pid}/ns/{kind}") for kind in ("pid", "net", "user", "mnt")}


def test_the_node_host_runs_in_a_sandbox_of_its_own(probes, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    (probes.root / "lib" / "echo.ts").write_text(
        "export function main(input: any) { return input.request; }\n"
    )
    runner = LiveRunner(probes)
    try:
        outcome = runner.run(hook="lib/echo.ts:main")
        assert outcome.status == "ok", outcome.turn_error
        assert outcome.warnings == []
        (node,) = [
            pid
            for pid in live_descendants(os.getpid())
            if Path(os.readlink(f"/proc/{pid}/exe")).name == "node"
        ]
        status = Path(f"/proc/{node}/status").read_text()
        environment = Path(f"/proc/{node}/environ").read_bytes()
        theirs = namespaces(node)
    finally:
        runner.close()
    # Every namespace differs from the studio's; in its PID namespace the host is process 2.
    assert all(theirs[kind] != mine for kind, mine in namespaces("self").items())
    nspid = next(line for line in status.splitlines() if line.startswith("NSpid:"))
    assert nspid.split()[-1] == "2"
    for value in SECRETS.values():
        assert value.encode() not in environment


def test_the_users_home_is_hidden_but_a_workspace_inside_it(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = test-secret\n")
    monkeypatch.setenv("HOME", str(home))
    workspace = make_workspace(home / "projects" / "agent")
    shutil.copy(PROBES, workspace.root / "lib" / "probes.py")
    write_json(
        workspace.root / "samples" / "home.json",
        {"loop": "main", "request": {**REQUEST, "system": str(home)}},
    )
    runner = LiveRunner(workspace)
    try:
        seen = probe(runner, "home", "home")
    finally:
        runner.close()
    assert seen["credentials"] == "refused: No such file or directory"
    # Only the way to the workspace is left in the home folder.
    assert seen["listing"] == ["projects"]


def test_what_the_sandbox_could_not_do_travels_to_the_notice():
    from studio.engine.sandbox import SandboxState

    partial = SandboxState(True, writable=["/data: Operation not permitted"])
    said = SandboxState.from_json(partial.to_json())
    assert said.notice(asked=True) == (
        "hooks run in the sandbox, but these stay writable: /data: Operation not permitted"
    )
    refused = SandboxState(False, "the kernel refused a user namespace (x)")
    assert refused.notice(asked=True).startswith("hooks run without the sandbox: the kernel")
    # Turned off on purpose: nothing to warn about.
    assert refused.notice(asked=False) == ""
    assert SandboxState.from_json(None).notice(asked=True).endswith("before saying so")


def test_a_process_a_typescript_module_hook_starts_ends_with_its_call(sample_workspace):
    # Module hooks (step and chain) are real ES modules: they may start processes.
    (sample_workspace / "lib" / "spawns.ts").write_text(
        "import { spawn } from 'node:child_process';\n"
        "export async function prepareStep(context: unknown) {\n"
        "  spawn('sleep', ['300'], { detached: true, stdio: 'ignore' }).unref();\n"
        "  return undefined;\n"
        "}\n"
    )
    runner = LiveRunner(Workspace.open(sample_workspace))
    try:
        outcome = runner.run("step-escalated", hook="lib/spawns.ts")
        assert outcome.status == "ok", outcome.turn_error
        # The host stays for the next call; what the hook started does not.
        wait_for(lambda: not named(live_descendants(os.getpid()), "sleep"))
        assert runner.run("step-escalated", hook="lib/prepare.ts").status == "ok"
    finally:
        runner.close()


def test_a_worker_forked_on_demand_cannot_reach_its_inits_streams_either(live):
    async def at_once():
        # More calls than spares: the last ones get workers forked for them, which start at once.
        handles = [live.runner.start("basic", hook="lib/probes.py:reach_init") for _ in range(6)]
        return [await handle.outcome() for handle in handles]

    for outcome in live.call(at_once()):
        seen = reported(outcome)
        assert all(result.startswith("refused") for result in seen.values()), seen
