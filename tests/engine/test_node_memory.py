"""A TypeScript/JavaScript hook's memory limit counts what lives outside the JS heap too
(Buffers, ArrayBuffers, WebAssembly memories, zlib's output): the Node host samples the Worker
running a call and stops it with ``memory_limit``. Real hosts through the real runner, with a
small limit so that no test allocates more than a few hundred MB; each bomb would stop by
itself after 1 GiB, so a host that failed to stop it fails the test instead of the machine."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.core.turn_error import TurnError
from studio.core.workspace.folder import Workspace
from studio.engine.node_runtime import _STOP_S, NodeRuntime
from tests.support.processes import live_descendants
from tests.support.runners import LiveRunner
from tests.support.workspaces import copy_bundled_workspace, make_workspace, write_json

LIMIT_MB = 96
# Far beyond any memory stop, on a busy machine too: a stop that came only at the deadline would
# be a timeout, not a memory limit.
TIMEOUT_MS = 30_000
# The host's peak RSS while a bomb runs: its own Workers, one call's limit and the overshoot
# of sampling, far below the 1 GiB each bomb would reach unstopped.
PEAK_MB = 512

TRIVIAL = "function main(input) { return input.request; }\n"

BOMBS = {
    "buffer.js": """
function main(input) {
  const keep = [];
  for (let i = 0; i < 64; i++) keep.push(Buffer.alloc(16 << 20, 1));
  return input.request;
}
""",
    "array_buffer.js": """
function main(input) {
  const keep = [];
  for (let i = 0; i < 64; i++) {
    const bytes = new Uint8Array(new ArrayBuffer(16 << 20));
    bytes.fill(1);
    keep.push(bytes);
  }
  return input.request;
}
""",
    "alloc_unsafe.js": """
function main(input) {
  const bytes = Buffer.allocUnsafe(1 << 30);
  for (let i = 0; i < bytes.length; i += 4096) bytes[i] = 1;
  return input.request;
}
""",
    "wasm_memory.js": """
function main(input) {
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 16385 });
  for (let i = 0; i < 64; i++) {
    memory.grow(256);
    new Uint8Array(memory.buffer).fill(1, memory.buffer.byteLength - (16 << 20));
  }
  return input.request;
}
""",
    "inflate_bomb.ts": """
import zlib from 'zlib';

function main(input: { request: object }) {
  const bomb = zlib.deflateSync(Buffer.alloc(16 << 20));
  const keep: Buffer[] = [];
  for (let i = 0; i < 64; i++) keep.push(zlib.inflateSync(bomb));
  return input.request;
}
""",
}

STEP_BOMB = """
export function prepareStep(ctx) {
  const keep = [];
  for (let i = 0; i < 64; i++) keep.push(Buffer.alloc(16 << 20, 1));
  return {};
}
"""


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveRunner]:
    workspace = make_workspace(tmp_path / "ws", timeout_ms=TIMEOUT_MS)
    write_json(
        workspace.root / "hookstudio.json", {"version": 1, "limits": {"memory_mb": LIMIT_MB}}
    )
    before = live_descendants(os.getpid())
    runner = LiveRunner(workspace)
    yield runner
    runner.close()
    assert live_descendants(os.getpid()) <= before, "a process outlived the runner"


def write(live: LiveRunner, name: str, text: str) -> str:
    (live.runner.workspace.root / "lib" / name).write_text(text)
    return f"lib/{name}"


def host_pid(live: LiveRunner) -> int:
    runtime = live.runner._runtimes[NodeRuntime]
    assert isinstance(runtime, NodeRuntime) and runtime.host_pid is not None
    return runtime.host_pid


def peak_rss_mb(pid: int) -> int:
    """The process's high-water mark of resident memory, as the kernel keeps it."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) >> 10
    raise AssertionError(f"no VmHWM in /proc/{pid}/status")


def stopped_for_memory(live: LiveRunner, source: str, sample: str = "basic") -> TurnError:
    outcome = live.run(sample, hook=source)
    assert outcome.status == "turn_error", outcome.result
    error = outcome.turn_error
    assert isinstance(error, TurnError) and error.kind == "memory_limit", error
    # Stopped for its memory before its deadline: a timeout would be another kind, and would end
    # the call only at TIMEOUT_MS.
    assert error.duration_ms < TIMEOUT_MS, error
    return error


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_memory_outside_the_heap_hits_the_limit(live: LiveRunner, name: str) -> None:
    assert live.run(hook=write(live, "trivial.js", TRIVIAL)).status == "ok"
    pid = host_pid(live)
    error = stopped_for_memory(live, write(live, name, BOMBS[name]))
    assert f"memory limit of {LIMIT_MB} MiB" in error.message
    assert "outside" in error.message
    assert peak_rss_mb(pid) < PEAK_MB
    # The same host, its bomb's Worker retired, runs the next call.
    follow_up = live.run(hook="lib/trivial.js")
    assert follow_up.status == "ok", follow_up.turn_error
    assert host_pid(live) == pid


def test_a_hook_that_uses_much_but_stays_under_the_limit_passes(live: LiveRunner) -> None:
    source = write(
        live,
        "under.js",
        """
function main(input) {
  const keep = [];
  for (let i = 0; i < 3; i++) keep.push(Buffer.alloc(16 << 20, 1));
  // Buffers dropped as fast as they are made: only the live ones count.
  let sum = 0;
  for (let i = 0; i < 24; i++) sum += Buffer.alloc(8 << 20, 1)[i];
  const rows = Array.from({ length: 100000 }, (_, i) => ({ i, text: 'row ' + i }));
  return { ...input.request, system: `${keep.length} ${sum} ${rows.length}` };
}
""",
    )
    outcome = live.run(hook=source)
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["system"] == "3 24 100000"


def test_a_step_hook_module_hits_the_limit_too(tmp_path: Path) -> None:
    root = copy_bundled_workspace(tmp_path / "ws")
    settings = json.loads((root / "hookstudio.json").read_text())
    settings["limits"] = {"memory_mb": LIMIT_MB}
    write_json(root / "hookstudio.json", settings)
    before = live_descendants(os.getpid())
    live = LiveRunner(Workspace.open(root))
    try:
        stopped_for_memory(live, write(live, "bomb.mjs", STEP_BOMB), "step-escalated")
        follow_up = live.run("step-escalated", hook="lib/prepare.ts")
        assert follow_up.status == "ok", follow_up.turn_error
    finally:
        live.close()
    assert live_descendants(os.getpid()) <= before


# ---- the host's backstop: memory the Worker's statistics do not show --------------------------

# crypto.scryptSync allocates 128 * N * r bytes natively, outside V8's accounting, in one call that
# answers no statistics request until it returns.
SCRYPT = """
import crypto from 'crypto';

function main(input) {
  crypto.scryptSync('secret', 'salt', 64, { N: 2 ** %d, r: %d, maxmem: 2 ** 31 });
  return input.request;
}
"""
WAITS = """
async function main(input) {
  await new Promise((resolve) => setTimeout(resolve, 5000));
  return input.request;
}
"""


def test_native_memory_is_stopped_by_the_host_backstop(live: LiveRunner) -> None:
    assert live.run(hook=write(live, "trivial.js", TRIVIAL)).status == "ok"
    pid = host_pid(live)
    # 448 MiB, past the backstop's bound of a 96 MiB call but short of ending the host.
    error = stopped_for_memory(live, write(live, "scrypt.js", SCRYPT % (19, 7)))
    assert "the Node host's memory grew to" in error.message
    assert f"its memory limit of {LIMIT_MB} MiB allows" in error.message
    assert error.details["calls"] == 1
    follow_up = live.run(hook="lib/trivial.js")
    assert follow_up.status == "ok", follow_up.turn_error
    assert host_pid(live) == pid


def test_the_backstop_stops_every_call_running_and_says_so(live: LiveRunner) -> None:
    # 704 MiB, past the bound of two 96 MiB calls.
    scrypt = write(live, "scrypt.js", SCRYPT % (19, 11))
    waits = write(live, "waits.js", WAITS)

    async def both() -> list[Any]:
        return list(
            await asyncio.gather(
                live.runner.run("basic", hook=scrypt), live.runner.run("basic", hook=waits)
            )
        )

    for outcome in live.call(both()):
        error = outcome.turn_error
        assert isinstance(error, TurnError) and error.kind == "memory_limit", error
        assert "the 2 calls running allow" in error.message
        assert "not attributable to one call" in error.message
        assert error.duration_ms < TIMEOUT_MS
    assert live.run(hook=write(live, "trivial.js", TRIVIAL)).status == "ok"


def test_a_worker_stuck_in_native_memory_ends_its_host(live: LiveRunner) -> None:
    assert live.run(hook=write(live, "trivial.js", TRIVIAL)).status == "ok"
    runtime = live.runner._runtimes[NodeRuntime]
    assert isinstance(runtime, NodeRuntime)
    host = runtime._host
    pid = host_pid(live)
    # 1 GiB in one native call: stopped at the bound, it goes on allocating until the host ends.
    stopped_for_memory(live, write(live, "scrypt.js", SCRYPT % (20, 8)))
    assert host._reader is not None
    live.call(asyncio.wait_for(asyncio.shield(host._reader), 30))
    assert "the host ends itself" in host.stderr_tail
    follow_up = live.run(hook="lib/trivial.js")
    assert follow_up.status == "ok", follow_up.turn_error
    assert host_pid(live) != pid


def test_closing_the_runner_ends_a_host_whose_stopped_worker_is_stuck(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", timeout_ms=TIMEOUT_MS)
    write_json(
        workspace.root / "hookstudio.json", {"version": 1, "limits": {"memory_mb": LIMIT_MB}}
    )
    before = live_descendants(os.getpid())
    live = LiveRunner(workspace)
    stopped_for_memory(live, write(live, "scrypt.js", SCRYPT % (20, 8)))
    # Its Worker is still inside scryptSync: the host does not wait for it to end. Had it
    # waited, the runner would have waited _STOP_S for the host to go before ending it; the
    # host going by itself is milliseconds idle, and well under that on a busy machine.
    started = time.perf_counter()
    live.close()
    assert time.perf_counter() - started < _STOP_S
    assert live_descendants(os.getpid()) <= before


def test_a_call_its_host_ended_itself_under_is_run_again_on_a_new_host(live: LiveRunner) -> None:
    assert live.run(hook=write(live, "trivial.js", TRIVIAL)).status == "ok"
    pid = host_pid(live)
    stopped_for_memory(live, write(live, "scrypt.js", SCRYPT % (20, 8)))
    # Sent to the host while its stopped Worker goes on allocating: in flight when it ends.
    outcome = live.run(hook=write(live, "waits.js", WAITS))
    assert outcome.status == "ok", outcome.turn_error
    assert host_pid(live) != pid
    assert any("run again on a new host" in w["message"] for w in outcome.warnings)
