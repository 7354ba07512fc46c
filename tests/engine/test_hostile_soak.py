"""A thousand hostile runs, of both runtimes, in one process: the studio's own descriptors,
threads and memory stay flat, no process outlives its run, and an honest hook still answers at
the end. Long: ``make test-hostile`` runs it (CI too), ``make test`` leaves it out."""

from __future__ import annotations

import os
import shutil
import threading
from collections import Counter
from pathlib import Path

import pytest

from studio.engine.fork_server import SPARES
from tests.support.processes import live_descendants, wait_for
from tests.support.runners import LiveRunner
from tests.support.workspaces import SHORT_TIMEOUT_MS, make_workspace

SUPPORT = Path(__file__).parents[1] / "support"
RUNS = 1000
WARM_UP = 100
# Memory is compared over the second half: the allocator keeps part of what the mix's 100 MB
# prints and large results used, most of it in the first few hundred runs, and how much varies
# with the machine's load; a leak grows with every run.
MEMORY_SETTLED = RUNS // 2

# (hook, how it must end), in the order they repeat; a mix weighted towards the cheap ones.
MIX = [
    ("lib/policy.py:transform", "ok"),
    ("lib/hostile.py:exit_zero", "worker_crashed"),
    ("lib/node_hooks.ts:failsAtRuntime", "exception"),
    ("lib/hostile.py:segfault", "worker_crashed"),
    ("lib/hostile.py:garbage_on_result_channel", "channel_corrupted"),
    # As in ADF, a thrown null is reported as a timeout at once.
    ("lib/node_hooks.ts:throwsNull", "timeout"),
    ("lib/hostile.py:return_nan", "invalid_result"),
    ("lib/probes.py:kill_everything_visible", "ok"),
    ("lib/node_hooks.ts:main", "ok"),
    ("lib/hostile.py:print_100_mb", "output_limit"),
    ("lib/probes.py:environments", "ok"),
    ("lib/hostile.py:hard_exit_one", "worker_crashed"),
    ("lib/probes.py:daemon_then_return", "ok"),
    ("lib/node_hooks.ts:printsForever", "output_limit"),
    ("lib/probes.py:writes", "ok"),
    ("timeout", "timeout"),
    ("lib/node_hooks.ts:returnsCycle", "invalid_result"),
    ("lib/hostile.py:stop_the_fork_server", "ok"),
    ("lib/hostile.py:children_then_return", "ok"),
]
# The slot of the slowest end (the 1 s deadline) takes each runtime in turn.
TIMEOUTS = ["lib/hostile.py:infinite_loop", "lib/node_hooks.ts:neverResolves"]
RARE = [("lib/probes.py:fork_bomb", "timeout"), ("lib/hostile.py:allocate_4_gb", "memory_limit")]


def hook_for(i: int) -> tuple[str, str]:
    if i % 100 == 99:
        return RARE[(i // 100) % len(RARE)]
    hook, ends = MIX[i % len(MIX)]
    if hook == "timeout":
        hook = TIMEOUTS[(i // len(MIX)) % len(TIMEOUTS)]
    return hook, ends


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.hostile
def test_a_thousand_mixed_hostile_runs_leave_the_studio_as_it_was(tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    for name in ("hostile_hooks.py", "sandbox_probes.py", "node_hooks.ts"):
        target = {"hostile_hooks.py": "hostile.py", "sandbox_probes.py": "probes.py"}
        shutil.copy(SUPPORT / name, workspace.root / "lib" / target.get(name, name))
    live = LiveRunner(workspace)
    ended: Counter[tuple[str, str]] = Counter()
    try:
        for i in range(RUNS):
            if i == WARM_UP:
                fds, threads, tasks = (
                    live.own_descriptors(),
                    threading.active_count(),
                    len(os.listdir("/proc/self/task")),
                )
            if i == MEMORY_SETTLED:
                memory = rss_kb()
            hook, expected = hook_for(i)
            # A hook meant to time out gets the shortest deadline; every other keeps the
            # workspace's generous one, which no busy machine reaches.
            if expected == "timeout":
                outcome = live.run(hook_config={"source": hook, "timeout_ms": SHORT_TIMEOUT_MS})
            else:
                outcome = live.run(hook=hook)
            kind = "ok" if outcome.status == "ok" else outcome.turn_error.kind
            assert kind == expected, (i, hook, outcome.turn_error)
            ended[(hook, kind)] += 1
        final = live.run()
        assert final.status == "ok" and final.warnings == []
        # The fork server and its spares (three processes each in the sandbox), and the Node
        # host (its launcher, its namespace's first process and itself).
        wait_for(lambda: len(live_descendants(os.getpid())) <= 1 + 3 * SPARES + 3)
        assert len(live.held_spares()) <= SPARES
        # A run's channel is closed off its result's path, so either count may hold one still
        # closing; a leak would grow with the runs.
        wait_for(lambda: live.own_descriptors() <= fds)
        assert threading.active_count() == threads
        assert len(os.listdir("/proc/self/task")) == tasks
        grown = rss_kb() - memory
        print(
            f"\n{RUNS} runs: {dict(ended)}\nRSS grew {grown} KiB after the first {MEMORY_SETTLED}"
        )
        assert grown < 32 * 1024
    finally:
        live.close()
    assert live_descendants(os.getpid()) == set()
